/**
 * Accounts: who buys bundles. Registration is the operator's job (admin API); the
 * public API only ever sees the account its key belongs to.
 */
import { HttpApiSchema } from "@effect/platform"
import { Context, Schema } from "effect"
import { extensions, Failed } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"
import { RateLimits, RateLimitsPatch } from "./RateLimit.js"
import { text } from "./Text.js"
import { Balance } from "./Wallet.js"

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
  { success: Failed, message: Schema.String, ...extensions("account_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A webhook URL: http(s), at most 2048 characters. */
export const WebhookUrl = text(2048).pipe(
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      return url.protocol === "https:" || url.protocol === "http:"
    } catch {
      return false
    }
  }, { message: () => "must be an http or https URL" })
)

const Name = text(100)

/** The fields every view of an account shows. */
export const AccountFields = {
  id: AccountId,
  name: Schema.String,
  price_group: Schema.NullOr(Schema.String),
  status: AccountStatus,
  created_at: Schema.Date
}

/** An account as a list shows it. */
export const AccountSummary = Schema.Struct({
  ...AccountFields,
  balance: Balance,
  webhook_url: Schema.NullOr(Schema.String),
  limits: RateLimits.annotations({ description: "Per-minute overrides; a scope left out uses the server default" })
}).annotations({ identifier: "AccountSummary" })

/** The type of `AccountSummary`. */
export type AccountSummary = typeof AccountSummary.Type

/** Who holds an account in the dashboard: the person who registered it, as they gave their name, email and phone. */
export const AccountHolder = Schema.Struct({
  name: Schema.String,
  email: Schema.String,
  phone: Schema.String
}).annotations({ identifier: "AccountHolder" })

/** The body of POST /accounts. */
export const CreateAccountPayload = Schema.Struct({
  name: Name,
  price_group: Schema.optional(Schema.NullOr(PriceGroupName))
}).annotations({ parseOptions: { errors: "all" } })

/** The body of PATCH /accounts/{account_id}; fields left out are unchanged. */
export const UpdateAccountPayload = Schema.Struct({
  name: Schema.optional(Name),
  price_group: Schema.optional(Schema.NullOr(PriceGroupName)),
  status: Schema.optional(AccountStatus),
  webhook_url: Schema.optional(Schema.NullOr(WebhookUrl)),
  rotate_webhook_secret: Schema.optional(Schema.Boolean),
  limits: Schema.optional(RateLimitsPatch),
  agent_id: Schema.optional(Schema.NullOr(AccountId)).annotations({
    description: "The agent the account sells under (its agent wallet earns the price difference); null for none"
  }),
  referred_by: Schema.optional(Schema.NullOr(AccountId)).annotations({
    description: "The account that referred it (its referral wallet earns the referral rate); null for none"
  })
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `UpdateAccountPayload`. */
export type UpdateAccountPayload = typeof UpdateAccountPayload.Type
