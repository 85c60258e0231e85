/**
 * An account holder's statement: the ledger as the dashboard shows it, each entry with the
 * order or the payment it came from, and its filters.
 */
import { Schema } from "effect"
import { LedgerEntry, LedgerReason } from "./Ledger.js"
import { ACCOUNT_LISTS, DateBound, params } from "./Page.js"
import { PaymentNumber } from "./Payment.js"
import { WalletKind } from "./Wallet.js"

/** A ledger entry with the payment it came from, if any. */
export const StatementEntry = Schema.Struct({
  ...LedgerEntry.fields,
  payment_number: Schema.NullOr(PaymentNumber)
}).annotations({ identifier: "StatementEntry" })

/** The type of `StatementEntry`. */
export type StatementEntry = typeof StatementEntry.Type

/** Query parameters of the statement. */
export const StatementParams = Schema.Struct({
  ...params(ACCOUNT_LISTS),
  wallet: Schema.optional(WalletKind),
  reason: Schema.optional(LedgerReason),
  from: Schema.optional(DateBound),
  to: Schema.optional(DateBound)
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `StatementParams`. */
export type StatementParams = typeof StatementParams.Type
