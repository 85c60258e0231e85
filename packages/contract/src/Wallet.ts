/**
 * Wallets: every account has three balances, backed by a ledger.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { extensions, Failed, Succeeded } from "./ApiError.js"
import { modeOrLive } from "./Mode.js"
import { Amount, Cedis, PositiveCedis } from "./Money.js"
import { text } from "./Text.js"

/** The three wallets of an account; orders are paid from `main`. */
export const WalletKind = Schema.Literal("main", "referral", "agent")

/** The type of `WalletKind`. */
export type WalletKind = typeof WalletKind.Type

/** The three balances of an account. */
export const Balance = Schema.Struct({
  main: Cedis.annotations({ description: "Main wallet; debited by orders" }),
  referral: Cedis.annotations({ description: "Referral wallet" }),
  agent: Cedis.annotations({ description: "Agent wallet" })
}).annotations({ identifier: "Balance" })

/** The type of `Balance`. */
export type Balance = typeof Balance.Type

/** The wallets whose earnings their holder may move to main. */
export const EarningsWallet = Schema.Literal("referral", "agent")

/** The type of `EarningsWallet`. */
export type EarningsWallet = typeof EarningsWallet.Type

/** The body of POST /wallet/transfers: earnings moved from the referral or agent wallet to main. */
export const TransferPayload = Schema.Struct({
  from: EarningsWallet.annotations({ description: "The wallet the money leaves; it arrives in main" }),
  amount: PositiveCedis
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `TransferPayload`. */
export type TransferPayload = typeof TransferPayload.Type

/** 400: the main wallet cannot pay for the order; `balance` is the current balance, `required` the price. */
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()(
  "InsufficientBalance",
  { success: Failed, message: Schema.String, ...extensions("insufficient_balance"), balance: Cedis, required: Cedis },
  HttpApiSchema.annotations({ status: 400 })
) {}

const Note = text(500, 0)

/** The body of POST /accounts/{account_id}/wallet/fund. */
export const FundWalletPayload = Schema.Struct({
  amount: PositiveCedis,
  wallet: Schema.optional(WalletKind).annotations({ description: "Default main" }),
  note: Schema.optional(Note),
  mode: modeOrLive("`test` funds the account's test wallet (play money for its test keys); default `live`")
}).annotations({ parseOptions: { errors: "all" } })

/** The body of POST /accounts/{account_id}/wallet/adjust: a signed correction with its reason. */
export const AdjustWalletPayload = Schema.Struct({
  amount: Amount.pipe(Schema.filter((pesewas) => pesewas !== 0n || "must not be 0")),
  wallet: Schema.optional(WalletKind).annotations({ description: "Default main" }),
  note: text(500).annotations({ message: () => "is required for an adjustment: 1 to 500 characters of text" }),
  mode: modeOrLive("`test` corrects the account's test wallet; default `live`")
}).annotations({ parseOptions: { errors: "all" } })

/** 200 of POST /wallet/transfers, also for a replay by `Idempotency-Key` (then with `Idempotent-Replayed: true`). */
export const TransferResponse = Schema.Struct({
  success: Succeeded,
  message: Schema.String,
  balance: Balance.annotations({ description: "The three balances after the transfer" })
})

/** The type of `TransferResponse`. */
export type TransferResponse = typeof TransferResponse.Type
