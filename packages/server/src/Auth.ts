/**
 * The two security middlewares of the contract: the reseller's `x-api-key` and the
 * operator's bearer token. The gateway has already checked the credentials (once, and
 * counted the failures); these read its finding from the fiber, and refuse when it found
 * nothing, so a request that did not pass the gateway is never let in.
 */
import { AdminApi, ApiError, ApiKey, Operator, Session, User } from "@databundle/contract"
import { Effect, FiberRef, Layer, Redacted } from "effect"
import * as RequestContext from "./RequestContext.js"
import type * as Routes from "./Routes.js"

/**
 * The 401 of a request without the credentials an area needs: `none` sent, `wrong` ones, or
 * those of a `suspended` account (an API key or a holder's session), which are told so.
 */
export const refusal = (credentials: Routes.Credentials | "operator", given: "none" | "wrong" | "suspended") =>
  given === "suspended"
    ? new ApiError.Unauthorized({ message: User.SUSPENDED_MESSAGE, reason: "account_suspended" })
    : new ApiError.Unauthorized({
      message: credentials === "session" || credentials === "console" || credentials === "operator"
        ? given === "wrong" ? "Your session has ended; sign in again" : "Sign in first"
        : credentials === "bearer" || credentials === "admin"
        ? "Missing or invalid admin token"
        : given === "wrong"
        ? "Invalid API key"
        : `Missing API key: send it in the ${ApiKey.API_KEY_HEADER} header`
    })

/** `x-api-key` → the account the gateway found for it. */
export const ApiKeyAuthLive = Layer.succeed(ApiKey.ApiKeyAuth, {
  apiKey: (key) =>
    Effect.flatMap(FiberRef.get(RequestContext.caller), (caller) => {
      if (caller._tag !== "Reseller") {
        return Effect.fail(refusal("apiKey", Redacted.value(key).length > 0 ? "wrong" : "none"))
      }
      const { accountId, keyId, priceGroupId } = caller.principal
      return Effect.succeed({ accountId, keyId, priceGroupId })
    })
})

/** `Authorization: Bearer <token>`, as the gateway found it against the admin token. */
const admitted = Effect.flatMap(
  FiberRef.get(RequestContext.caller),
  (caller) =>
    caller._tag === "AdminToken" || caller._tag === "OperatorSession"
      ? Effect.void
      : Effect.fail(refusal("bearer", "wrong"))
)

export const AdminAuthLive = Layer.succeed(AdminApi.AdminAuth, {
  bearer: () => admitted,
  operator: () => admitted
})

/** The console's operator session cookie, as the gateway found it among the live operator sessions. */
export const ConsoleAuthLive = Layer.succeed(Operator.ConsoleAuth, {
  operator: (token) =>
    Effect.flatMap(FiberRef.get(RequestContext.caller), (caller) => {
      if (caller._tag !== "OperatorSession") {
        return Effect.fail(refusal("session", Redacted.value(token).length > 0 ? "wrong" : "none"))
      }
      const { operatorId, sessionId } = caller.session
      return Effect.succeed({ operatorId, sessionId })
    })
})

/** The dashboard's session cookie, as the gateway found it among the live sessions. */
export const DashboardAuthLive = Layer.succeed(Session.DashboardAuth, {
  session: (token) =>
    Effect.flatMap(FiberRef.get(RequestContext.caller), (caller) => {
      if (caller._tag !== "Holder") {
        return Effect.fail(refusal("session", Redacted.value(token).length > 0 ? "wrong" : "none"))
      }
      const { accountId, priceGroupId, sessionId, userId } = caller.session
      return Effect.succeed({ accountId, priceGroupId, sessionId, userId })
    })
})
