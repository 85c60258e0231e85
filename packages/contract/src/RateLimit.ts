/**
 * Rate limits: per-minute request quotas of the public API.
 */
import { Schema } from "effect"

/** The limited scopes: every endpoint (`all`), POST /orders (`orders`), GET /balance (`balance`). */
export const RateLimitScope = Schema.Literal("all", "orders", "balance")

/** The type of `RateLimitScope`. */
export type RateLimitScope = typeof RateLimitScope.Type

export { RATE_LIMIT_HEADERS, RETRY_AFTER_HEADER } from "./RateLimitHeaders.js"

/** The scopes, in a fixed order. */
export const RATE_LIMIT_SCOPES: ReadonlyArray<RateLimitScope> = RateLimitScope.literals

/** A number of requests per minute. */
export const PerMinute = Schema.Int.pipe(
  Schema.between(1, 1_000_000, { message: () => "must be a whole number of requests per minute from 1 to 1000000" })
)

/** A quota per scope; a scope left out takes the default. */
export const RateLimits = Schema.Struct({
  all: Schema.optional(PerMinute),
  orders: Schema.optional(PerMinute),
  balance: Schema.optional(PerMinute)
}).annotations({ identifier: "RateLimits" })

/** The type of `RateLimits`. */
export type RateLimits = typeof RateLimits.Type

/** The limits of the spec: 60 requests, 10 orders and 30 balance checks a minute. */
export const DEFAULT_RATE_LIMITS: Record<RateLimitScope, number> = { all: 60, orders: 10, balance: 30 }

/** A change to an account's overrides: a number sets one, `null` removes it. */
export const RateLimitsPatch = Schema.Struct({
  all: Schema.optional(Schema.NullOr(PerMinute)),
  orders: Schema.optional(Schema.NullOr(PerMinute)),
  balance: Schema.optional(Schema.NullOr(PerMinute))
})

/** The type of `RateLimitsPatch`. */
export type RateLimitsPatch = typeof RateLimitsPatch.Type

/**
 * The dashboard's own scopes, beside the public API's: every dashboard request (`dashboard`,
 * per account when signed in, else per client address) and the anonymous forms that send
 * email or check a password (`access`, per client address). They are not per-account
 * overrides; the operator sets them for everyone (`BUNDLES_DASHBOARD_LIMITS`).
 */
export const DashboardRateLimitScope = Schema.Literal("dashboard", "access")

/** The type of `DashboardRateLimitScope`. */
export type DashboardRateLimitScope = typeof DashboardRateLimitScope.Type

/** The dashboard's default limits: 300 requests and 20 anonymous forms a minute. */
export const DEFAULT_DASHBOARD_LIMITS: Record<DashboardRateLimitScope, number> = { dashboard: 300, access: 20 }
