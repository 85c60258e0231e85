/**
 * API keys: how resellers authenticate to the public API (`x-api-key`).
 */
import { HttpApiMiddleware, HttpApiSchema, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { AccountHolder, AccountId, AccountSummary, CurrentAccount } from "./Account.js"
import { extensions, Failed, Unauthorized } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"
import { Mode } from "./Mode.js"

/** An API key's identifier (not the key itself). */
export const ApiKeyId = Schema.Int.pipe(Schema.between(1, MAX_ID), Schema.brand("ApiKeyId"))

/** The type of `ApiKeyId`. */
export type ApiKeyId = typeof ApiKeyId.Type

/** The header that carries the key. */
export const API_KEY_HEADER = "x-api-key"

/** Authenticates a public API request by its `x-api-key` header and provides the `CurrentAccount`. */
export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("contract/ApiKeyAuth", {
  failure: Unauthorized,
  provides: CurrentAccount,
  security: { apiKey: HttpApiSecurity.apiKey({ key: API_KEY_HEADER, in: "header" }) }
}) {}

/** 404: no such key on that account. */
export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()(
  "ApiKeyNotFound",
  { success: Failed, message: Schema.String, ...extensions("api_key_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}

/**
 * A key's mode (`Mode.Mode`): a `test` key always uses the simulator, its own test wallet and
 * test orders; a `live` key the configured provider and the real wallet.
 */
export const ApiKeyMode = Mode

/** The type of `ApiKeyMode`. */
export type ApiKeyMode = Mode

/** An account's API key, without the key itself. */
export const ApiKeyView = Schema.Struct({
  id: ApiKeyId,
  prefix: Schema.String,
  mode: ApiKeyMode,
  created_at: Schema.Date,
  last_used_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "ApiKeyView" })

/** The type of `ApiKeyView`. */
export type ApiKeyView = typeof ApiKeyView.Type

/** A key as it is created: the only time the key itself is known. */
export const NewApiKey = Schema.Struct({
  id: ApiKeyId,
  api_key: Schema.String.annotations({ description: "The key itself, shown only in this response" }),
  prefix: Schema.String,
  mode: ApiKeyMode
})

/** The type of `NewApiKey`. */
export type NewApiKey = typeof NewApiKey.Type

/**
 * An account with everything the operator may need: its summary, the start of its webhook
 * secret and its keys. The secret itself is never shown to the operator (the account holder
 * reads it, `GET /api/v1/webhooks` or the dashboard), as a key is never shown after its
 * creation. It lives with the keys because this module already builds on `Account` (never the
 * other way round).
 */
export const AccountDetail = Schema.Struct({
  ...AccountSummary.fields,
  webhook_secret_prefix: Schema.NullOr(Schema.String).annotations({
    description: "The start of the secret that signs webhook deliveries (whsec_ and 4 characters), to tell " +
      "secrets apart; the secret itself only its account reads"
  }),
  keys: Schema.Array(ApiKeyView),
  holder: Schema.NullOr(AccountHolder).annotations({
    description: "The dashboard user who registered the account; null for one the operator made"
  }),
  agent_id: Schema.NullOr(AccountId).annotations({ description: "The agent it sells under" }),
  referred_by: Schema.NullOr(AccountId).annotations({ description: "The account that referred it" }),
  referral_code: Schema.String.annotations({ description: "The code others register under it with" })
}).annotations({ identifier: "AccountDetail" })

/** The type of `AccountDetail`. */
export type AccountDetail = typeof AccountDetail.Type

/** A key as its holder lists it in the dashboard: with the name they gave it (null for the operator's). */
export const NamedApiKey = Schema.Struct({
  ...ApiKeyView.fields,
  name: Schema.NullOr(Schema.String)
}).annotations({ identifier: "NamedApiKey" })

/** The type of `NamedApiKey`. */
export type NamedApiKey = typeof NamedApiKey.Type
