/**
 * The ledger: every wallet movement, with the balance it left behind.
 */
import { Schema } from "effect"
import { Cedis } from "./Money.js"
import { ADMIN_LISTS, DateBound, params } from "./Page.js"
import { WalletKind } from "./Wallet.js"

/** Why a wallet moved. */
export const LedgerReason = Schema.Literal(
  "funding",
  "adjustment",
  "order",
  "refund",
  "commission",
  "commission_reversal",
  "transfer"
)

/** The type of `LedgerReason`. */
export type LedgerReason = typeof LedgerReason.Type

/** One wallet movement. */
export const LedgerEntry = Schema.Struct({
  id: Schema.Int,
  wallet: WalletKind,
  amount: Cedis.annotations({ description: "Signed: credits are positive, debits negative" }),
  balance_after: Cedis,
  reason: LedgerReason,
  order_number: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  created_at: Schema.Date
}).annotations({ identifier: "LedgerEntry" })

/** The type of `LedgerEntry`. */
export type LedgerEntry = typeof LedgerEntry.Type

/** Filters of a ledger listing: the admin ledger's `wallet`, and a reason and a time range. */
export const LedgerFilters = {
  wallet: Schema.optional(WalletKind),
  reason: Schema.optional(LedgerReason),
  from: Schema.optional(DateBound).annotations({ description: "Entries at or after this date or instant" }),
  to: Schema.optional(DateBound).annotations({
    description: "Entries at or before this date (the whole day) or instant"
  })
}

/** Query parameters of GET /wallet/transactions: newest first, pages as in admin lists. */
export const ListTransactionsParams = Schema.Struct({ ...params(ADMIN_LISTS), ...LedgerFilters }).annotations({
  parseOptions: { errors: "all" }
})

/** The type of `ListTransactionsParams`. */
export type ListTransactionsParams = typeof ListTransactionsParams.Type

/** A wallet whose balance is not the sum of its ledger. */
export const LedgerMismatch = Schema.Struct({
  account_id: Schema.Int,
  wallet: WalletKind,
  balance: Cedis,
  ledger_sum: Cedis
})

/** The result of checking every wallet against its ledger and every order against its payments. */
export const AuditReport = Schema.Struct({
  ok: Schema.Boolean,
  wallets: Schema.Int,
  ledger_entries: Schema.Int,
  orders: Schema.Int,
  mismatches: Schema.Array(LedgerMismatch),
  negative_balances: Schema.Int,
  orders_without_debit: Schema.Int,
  failed_orders_without_refund: Schema.Int,
  refunds_without_failed_order: Schema.Int,
  commissions_without_successful_order: Schema.Int.annotations({
    description: "Commissions whose order is not successful and that were not reversed"
  }),
  reversals_without_commission: Schema.Int.annotations({
    description: "Commission reversals that do not undo exactly one commission of a failed order"
  }),
  unbalanced_transfers: Schema.Int.annotations({
    description: "Transfers whose two entries do not move the same amount out of one wallet and into main"
  })
}).annotations({ identifier: "AuditReport" })

/** The type of `AuditReport`. */
export type AuditReport = typeof AuditReport.Type
