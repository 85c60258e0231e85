/**
 * Accounts: who buys bundles. Registration is the operator's job (admin API); the
 * public API only ever sees the account its key belongs to.
 */
import { HttpApiSchema } from "@effect/platform"
import { Context, Schema } from "effect"
import { Failed } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"

/** An account's identifier. */
export const AccountId = Schema.Int.pipe(Schema.between(1, MAX_ID), Schema.brand("AccountId"))

/** The type of `AccountId`. */
export type AccountId = typeof AccountId.Type

/** A suspended account cannot use the API (401) until the operator reactivates it. */
export const AccountStatus = Schema.Literal("active", "suspended")

/** The type of `AccountStatus`. */
export type AccountStatus = typeof AccountStatus.Type

/** The name of a price group (`retail`, `agent`, ...). */
export const PriceGroupName = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,31}$/, {
    message: () => "must be 1 to 32 characters of a-z, 0-9, _ and -, starting with a letter or digit"
  }),
  Schema.brand("PriceGroupName")
)

/** The type of `PriceGroupName`. */
export type PriceGroupName = typeof PriceGroupName.Type

/** The account an authenticated public API request acts for, provided by the API key middleware. */
export class CurrentAccount extends Context.Tag("contract/CurrentAccount")<CurrentAccount, {
  readonly accountId: AccountId
  readonly keyId: number
  /** The account's price group, `null` for base prices. */
  readonly priceGroupId: number | null
}>() {}

/** 404: no account with that id. */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()(
  "AccountNotFound",
  { success: Failed, message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}
