/**
 * Dashboard sessions: a random token in an `HttpOnly` cookie, known to the server only as its
 * SHA-256 hash, and a CSRF token derived from it that the page sends back in a header on
 * every state-changing request. The cookie's path is the dashboard API's prefix, so it never
 * travels to `/api/v1` or `/admin/v1`; and those areas read other credentials anyway.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import type { AccountId } from "./Account.js"
import { Unauthorized } from "./ApiError.js"
import type { UserId } from "./User.js"

/** The cookie that carries the session token. */
export const SESSION_COOKIE = "bundles_session"

/**
 * The cookie of a browser the user signed in with before, or reset the password from (sent to
 * the sign-in only): sign-in from it is counted per browser, so guesses from elsewhere cannot
 * lock its owner out.
 */
export const BROWSER_COOKIE = "bundles_browser"

/** The request header that carries the CSRF token on POST, PUT, PATCH and DELETE. */
export const CSRF_HEADER = "x-csrf-token"

/** Who a dashboard request acts for, provided by the session middleware. */
export class CurrentSession extends Context.Tag("contract/CurrentSession")<CurrentSession, {
  readonly sessionId: number
  readonly userId: UserId
  readonly accountId: AccountId
  /** The account's price group, `null` for base prices. */
  readonly priceGroupId: number | null
}>() {}

/** Authenticates a dashboard request by its session cookie and provides the `CurrentSession`. */
export class DashboardAuth extends HttpApiMiddleware.Tag<DashboardAuth>()("contract/DashboardAuth", {
  failure: Unauthorized,
  provides: CurrentSession,
  security: { session: HttpApiSecurity.apiKey({ key: SESSION_COOKIE, in: "cookie" }) }
}) {}
