/**
 * The two security middlewares of the contract: the reseller's `x-api-key` and the
 * operator's bearer token.
 */
import { AdminApi, ApiError, ApiKey } from "@databundle/contract"
import { ApiKeys } from "@databundle/core"
import { Effect, FiberRef, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import * as AdminToken from "./AdminToken.js"
import * as RequestContext from "./RequestContext.js"

/** `x-api-key` → the account, through the cached key lookup. */
export const ApiKeyAuthLive = Layer.effect(
  ApiKey.ApiKeyAuth,
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys.ApiKeys
    return {
      apiKey: (key) =>
        Effect.gen(function*() {
          if (Redacted.value(key).length === 0) {
            return yield* new ApiError.Unauthorized({
              message: `Missing API key: send it in the ${ApiKey.API_KEY_HEADER} header`
            })
          }
          const info = yield* FiberRef.get(RequestContext.current)
          const principal = info.principal ?? (yield* apiKeys.authenticate(key))
          if (Option.isNone(principal)) {
            return yield* new ApiError.Unauthorized({ message: "Invalid API key" })
          }
          info.accountId = principal.value.accountId
          return {
            accountId: principal.value.accountId,
            keyId: principal.value.keyId,
            priceGroupId: principal.value.priceGroupId
          }
        })
    }
  })
)

const digest = (value: string) => createHash("sha256").update(value).digest()

/** Compares two secrets in constant time (hashing first makes the lengths equal). */
export const secretsEqual = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b))

/** `Authorization: Bearer <token>` checked against the admin token. */
export const AdminAuthLive = Layer.effect(
  AdminApi.AdminAuth,
  Effect.gen(function*() {
    const expected = Redacted.value(yield* AdminToken.resolve)
    return {
      bearer: (token) =>
        secretsEqual(Redacted.value(token), expected)
          ? Effect.void
          : Effect.fail(new ApiError.Unauthorized({ message: "Missing or invalid admin token" }))
    }
  })
)
