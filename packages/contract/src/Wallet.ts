/**
 * Wallets: every account has three balances, backed by a ledger.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Failed } from "./ApiError.js"
import { Cedis } from "./Money.js"

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

/** 400: the main wallet cannot pay for the order; `balance` is the current balance, `required` the price. */
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()(
  "InsufficientBalance",
  { success: Failed, message: Schema.String, balance: Cedis, required: Cedis },
  HttpApiSchema.annotations({ status: 400 })
) {}
