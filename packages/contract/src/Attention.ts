/**
 * What needs an account holder's attention, as the dashboard's home page lists it.
 */
import { Schema } from "effect"
import { Cedis } from "./Money.js"

/** Something on the home page that needs the holder's attention. */
export const AttentionItem = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("pending_orders"), count: Schema.Int }),
  Schema.Struct({ kind: Schema.Literal("pending_payments"), count: Schema.Int }),
  Schema.Struct({ kind: Schema.Literal("failed_webhook_deliveries"), count: Schema.Int }),
  Schema.Struct({ kind: Schema.Literal("low_balance"), balance: Cedis, threshold: Cedis })
).annotations({ identifier: "AttentionItem" })

/** The type of `AttentionItem`. */
export type AttentionItem = typeof AttentionItem.Type
