/**
 * What the server applies to a request before its handler, declared where each endpoint is
 * declared (as annotations on the endpoint, its group or its API): the rate-limit scopes it
 * counts toward, the largest body it reads, whether its response carries a secret, and
 * whether only owners (and the admin token) may call it.
 *
 * The server reads these once, from the API, into its route table; nothing else decides them.
 * An annotation on an endpoint overrides its group's, which overrides its API's.
 */
import { Context } from "effect"
import type { DashboardRateLimitScope, RateLimitScope } from "./RateLimit.js"

/** The rate-limit scopes a request to the endpoint counts toward (none: not rate limited). */
export class RateLimitScopes extends Context.Tag("@databundle/contract/EndpointPolicy/RateLimitScopes")<
  RateLimitScopes,
  ReadonlyArray<RateLimitScope | DashboardRateLimitScope>
>() {}

/** The largest request body the endpoint reads, in bytes. */
export class BodyLimit extends Context.Tag("@databundle/contract/EndpointPolicy/BodyLimit")<BodyLimit, number>() {}

/** The response carries a secret (a new API key, a webhook secret): it is sent `Cache-Control: no-store`. */
export class CarriesSecret extends Context.Tag("@databundle/contract/EndpointPolicy/CarriesSecret")<
  CarriesSecret,
  boolean
>() {}

/**
 * Only the admin token and owners may call the endpoint: an operator's session with the
 * `operator` role is refused (403). It marks what manages operators.
 */
export class OwnersOnly extends Context.Tag("@databundle/contract/EndpointPolicy/OwnersOnly")<OwnersOnly, boolean>() {}

/** The body limit where nothing says otherwise: the public API's 64 KiB. */
export const DEFAULT_BODY_LIMIT = 64 * 1024

/** An endpoint's policy, with the defaults filled in. */
export interface Policy {
  readonly rateLimitScopes: ReadonlyArray<RateLimitScope | DashboardRateLimitScope>
  readonly bodyLimit: number
  readonly carriesSecret: boolean
  readonly ownersOnly: boolean
}

/** Reads the policy from an endpoint's merged annotations. */
export const fromAnnotations = (annotations: Context.Context<never>): Policy => ({
  rateLimitScopes: Context.getOrElse(annotations, RateLimitScopes, () => []),
  bodyLimit: Context.getOrElse(annotations, BodyLimit, () => DEFAULT_BODY_LIMIT),
  carriesSecret: Context.getOrElse(annotations, CarriesSecret, () => false),
  ownersOnly: Context.getOrElse(annotations, OwnersOnly, () => false)
})
