/**
 * The console's sign-in API, mounted at `/console/v1`: an operator signs in with their email
 * and password and gets the `bundles_operator` session cookie and a CSRF token. Everything
 * else the console does goes through the admin API (`/admin/v1`), which accepts that cookie
 * (with the CSRF token in `x-csrf-token` on every POST, PUT, PATCH and DELETE) as well as the
 * admin bearer token.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Forbidden, Succeeded, Unauthorized, withRequestErrors } from "./ApiError.js"
import { CarriesSecret, RateLimitScopes } from "./EndpointPolicy.js"
import { ConsoleAuth, OperatorView } from "./Operator.js"
import { ChangePasswordPayload, SignInPayload } from "./User.js"

/** The path prefix of the console API. */
export const CONSOLE_PREFIX = "/console/v1"

/** 200 of sign-in and of GET /session: who is signed in, and the CSRF token to send back. */
export const ConsoleSessionResponse = Schema.Struct({
  success: Succeeded,
  operator: OperatorView,
  csrf_token: Schema.String.annotations({
    description: "Send it in the x-csrf-token header on every POST, PUT, PATCH and DELETE of this session"
  }),
  expires_at: Schema.Date
})

/** A plain acknowledgement: `{ success: true, message }`. */
export const Done = Schema.Struct({ success: Succeeded, message: Schema.String })

/** Signing in: anonymous, throttled per address and email as the dashboard's. */
export class ConsoleAccessGroup extends HttpApiGroup.make("consoleAccess")
  .add(
    HttpApiEndpoint.post("signIn", "/session")
      .setPayload(SignInPayload)
      .addSuccess(ConsoleSessionResponse)
      .annotate(CarriesSecret, true)
      .annotate(OpenApi.Summary, "Sign in: sets the operator session cookie and returns the CSRF token")
  )
  .annotate(RateLimitScopes, ["access"])
{}

/** The signed-in operator's session. */
export class ConsoleSessionGroup extends HttpApiGroup.make("consoleSession")
  .add(
    HttpApiEndpoint.get("current", "/session")
      .addSuccess(ConsoleSessionResponse)
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.del("signOut", "/session")
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Sign out: ends the session and clears the cookie")
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/password")
      .setPayload(ChangePasswordPayload)
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Change my password (422 on current_password when wrong); ends my other sessions")
  )
  .middleware(ConsoleAuth)
{}

/** The console API. */
export class ConsoleApi extends HttpApi.make("console")
  .add(ConsoleAccessGroup)
  .add(ConsoleSessionGroup)
  .addError(BadRequest)
  .addError(Unauthorized)
  .addError(Forbidden)
  .pipe(withRequestErrors)
  .prefix(CONSOLE_PREFIX)
  .annotate(OpenApi.Title, "Data Bundle Operator Console API")
  .annotate(OpenApi.Version, "1")
{}
