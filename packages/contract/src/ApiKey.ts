/**
 * API keys: how resellers authenticate to the public API (`x-api-key`).
 */
import { HttpApiMiddleware, HttpApiSchema, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { CurrentAccount } from "./Account.js"
import { Failed, Unauthorized } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"

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
  { success: Failed, message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}
