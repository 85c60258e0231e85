/**
 * The one admission sequence every request crosses once its route is decided (`Routes`),
 * whatever answers it next:
 *
 * 1. credentials are checked once: valid ones are never refused for others' failures, and
 *    failed ones count per client address and per key prefix, past the limit a 429;
 * 2. the route's rate-limit scopes (from the contract) are counted, with their headers;
 * 3. a path that names no endpoint is a 404 (405 with `Allow` for a wrong method);
 * 4. a body is read only for an endpoint with a payload, up to its limit (413) and within
 *    its time (408), as UTF-8 JSON (400); any other body is never read, and the connection
 *    is closed after the answer instead of draining it;
 * 5. without valid credentials, a 401; a signed-in page's change without its CSRF token, or
 *    an owner's action by another operator, a 403; then a body against the contract's JSON
 *    rules, a 422.
 *
 * Each step is synchronous when what it needs is in memory (an API key the key cache holds,
 * counts the in-memory limiter keeps, no body) and an effect otherwise; the steps and their
 * order are the same either way, so a request admitted from memory is admitted exactly as
 * one that waited for the database.
 */
import { ApiError, ApiKey, JsonBody, Operator, RateLimit, Session, Validation } from "@databundle/contract"
import { ApiKeys, Operators, RateLimiter, Sessions, Settings, Tokens } from "@databundle/core"
import type { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Either, Option, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import * as AdminToken from "./AdminToken.js"
import * as Auth from "./Auth.js"
import * as ClientAddress from "./ClientAddress.js"
import * as Metrics from "./Metrics.js"
import * as RequestBody from "./RequestBody.js"
import type * as RequestContext from "./RequestContext.js"
import type * as Routes from "./Routes.js"
import * as ServerConfig from "./ServerConfig.js"

/** A value now, or the effect that gives it (never an effect's value that is itself an effect). */
export type Now<A, E = never, R = never> = A | Effect.Effect<A, E, R>

/** `f` applied to `a`'s value: now when `a` is, else once its effect gives it. */
export const andThen = <A, B, E1, E2, R1 = never, R2 = never>(
  a: Now<A, E1, R1>,
  f: (a: A) => Now<B, E2, R2>
): Now<B, E1 | E2, R1 | R2> =>
  Effect.isEffect(a)
    ? Effect.flatMap(a as Effect.Effect<A, E1, R1>, (value) => {
      const next = f(value)
      return Effect.isEffect(next) ? next as Effect.Effect<B, E2, R2> : Effect.succeed(next)
    })
    : f(a as A)

/**
 * Told of each request admitted from memory alone (`memory`: its caller and its counts, with
 * no lookup), and of each answered from the catalogue's cache as well (`cache`), for the tests
 * that prove those ways are taken.
 */
export class Shortcuts extends Context.Tag("server/Admission/Shortcuts")<
  Shortcuts,
  (info: RequestContext.RequestInfo, way: "memory" | "cache") => void
>() {}

/** What the sequence found: who sent the request and, for an endpoint with a payload, its body. */
export interface Admitted {
  readonly caller: RequestContext.Caller
  readonly body: Body
}

/** A body as read: its text and JSON (what the handler's decoding sees). */
export interface Body {
  readonly text: string
  readonly json: unknown
}

/** What an endpoint without a payload is handed as its body, whatever the client sent. */
const NO_BODY: Body = { text: "", json: null }

/**
 * What the answer is sent with, whatever it is: headers the sequence decided (rate limits,
 * `Allow`, the dashboard's) and whether the connection closes after it (a body left unread).
 */
export interface Answer {
  readonly headers: Record<string, string>
  closeAfter: boolean
}

const SCOPE_NAMES: Record<RateLimiter.Scope, string> = {
  all: "all requests",
  orders: "POST /orders",
  balance: "GET /balance",
  dashboard: "dashboard requests",
  access: "sign-in and account forms",
  auth: "failed authentications"
}

const isJsonContentType = (value: string | undefined) =>
  value !== undefined && /^application\/json\s*(;|$)/i.test(value.trim())

/** True when the request carries a body, by its framing headers. */
export const carriesBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0")

const BEARER = /^Bearer /i

/** Methods that change nothing, so need no CSRF token. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

/** The headers of every dashboard API response: no framing, no sniffing, no referrer, nothing cached. */
const DASHBOARD_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/** True when two texts are equal, in a time that does not depend on where they differ. */
const sameText = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Which credentials a request to `area` is judged by, and what it sent of them (if anything). */
const credentialsOf = (request: HttpServerRequest.HttpServerRequest, area: Routes.Area) => {
  // The admin area takes the bearer token when one is sent, else an operator's cookie.
  const kind = area.credentials === "admin"
    ? request.headers.authorization !== undefined ? "bearer" : "operator"
    : area.credentials === "console"
    ? "operator"
    : area.credentials
  const given = kind === "apiKey"
    ? request.headers[ApiKey.API_KEY_HEADER]
    : kind === "session"
    ? request.cookies[Session.SESSION_COOKIE]
    : kind === "operator"
    ? request.cookies[Operator.OPERATOR_COOKIE]
    : request.headers.authorization
  return { kind, given } as const
}

/** The admission sequence of the server's routes (see the module's comment). */
export const make = Effect.gen(function*() {
  const apiKeys = yield* ApiKeys.ApiKeys
  const sessions = yield* Sessions.Sessions
  const operators = yield* Operators.Operators
  const limiter = yield* RateLimiter.RateLimiter
  const settings = yield* Settings.Settings
  const adminToken = Redacted.value(yield* AdminToken.resolve)
  const trusted = yield* ServerConfig.trustedProxies
  const metrics = yield* Metrics.Metrics
  const shortcuts = yield* Effect.serviceOption(Shortcuts)
  const told = Option.getOrUndefined(shortcuts)
  const authFailures: ReadonlyArray<RateLimiter.Quota> = [{ scope: "auth", limit: settings.authFailureLimit }]
  // Counted now when the limiter keeps its counts in memory, else by its effect.
  const consume = (subject: string, quotas: ReadonlyArray<RateLimiter.Quota>): Now<RateLimiter.RateDecision> =>
    limiter.consumeNow === undefined ? limiter.consume(subject, quotas) : limiter.consumeNow(subject, quotas)

  /** Sends a decision's headers with the answer; a refusal is a 429, returned. */
  const enforce = (decision: RateLimiter.RateDecision, headers: Record<string, string>) => {
    headers[RateLimit.RATE_LIMIT_HEADERS.limit] = String(decision.limit)
    headers[RateLimit.RATE_LIMIT_HEADERS.remaining] = String(decision.remaining)
    headers[RateLimit.RATE_LIMIT_HEADERS.reset] = String(decision.resetSeconds)
    if (decision.allowed) return undefined
    metrics.rateLimited(decision.scope)
    headers[RateLimit.RETRY_AFTER_HEADER] = String(decision.retryAfterSeconds)
    return new ApiError.RateLimited({
      message: `Rate limit exceeded (${decision.limit} per minute for ${
        SCOPE_NAMES[decision.scope]
      }); retry in ${decision.retryAfterSeconds} s`,
      retry_after: decision.retryAfterSeconds
    })
  }

  /** Credentials that failed: counted against the address (and a key's prefix); a 429 past either limit. */
  const refused = (
    kind: "apiKey" | "bearer" | "session" | "operator",
    given: string,
    address: string,
    headers: Record<string, string>
  ) =>
    Effect.gen(function*() {
      metrics.authFailed(kind)
      const subjects = [`address:${address}`]
      if (kind === "apiKey") subjects.push(`key-prefix:${Tokens.displayPrefix(given)}`)
      for (const subject of subjects) {
        const refusal = enforce(yield* limiter.consume(subject, authFailures), headers)
        if (refusal !== undefined) return yield* refusal
      }
      // Credentials of a suspended account are told so (after the limits: a refusal costs this one lookup).
      const suspended = kind === "session"
        ? yield* sessions.suspended(given)
        : kind === "apiKey"
        ? yield* apiKeys.suspended(given)
        : false
      return { _tag: "Refused", suspended } as const
    })

  /**
   * Who sent the request: now for no credentials, an API key the cache holds as valid and the
   * admin token; by a lookup otherwise. Valid credentials are never refused here, so no one
   * behind a shared address can lock the others out.
   */
  const identify = (
    request: HttpServerRequest.HttpServerRequest,
    area: Routes.Area,
    address: string,
    headers: Record<string, string>
  ): Now<RequestContext.Caller, ApiError.RateLimited> => {
    const { given, kind } = credentialsOf(request, area)
    if (kind === "none" || given === undefined || given.length === 0) return { _tag: "Anonymous" }
    if (kind === "apiKey") {
      const cached = apiKeys.peek(given)
      if (cached !== undefined && Option.isSome(cached)) return { _tag: "Reseller", principal: cached.value }
      return Effect.flatMap(
        apiKeys.authenticate(Redacted.make(given)),
        (principal): Effect.Effect<RequestContext.Caller, ApiError.RateLimited> =>
          Option.isSome(principal)
            ? Effect.succeed({ _tag: "Reseller", principal: principal.value })
            : refused(kind, given, address, headers)
      )
    }
    if (kind === "session" || kind === "operator") {
      const csrf = Sessions.csrfToken(given)
      return kind === "session"
        ? Effect.flatMap(
          sessions.authenticate(given),
          (session): Effect.Effect<RequestContext.Caller, ApiError.RateLimited> =>
            Option.isSome(session)
              ? Effect.succeed({ _tag: "Holder", session: session.value, csrf })
              : refused(kind, given, address, headers)
        )
        : Effect.flatMap(
          operators.authenticate(given),
          (session): Effect.Effect<RequestContext.Caller, ApiError.RateLimited> =>
            Option.isSome(session)
              ? Effect.succeed({ _tag: "OperatorSession", session: session.value, csrf })
              : refused(kind, given, address, headers)
        )
    }
    if (BEARER.test(given) && AdminToken.secretsEqual(given.slice("Bearer ".length), adminToken)) {
      return { _tag: "AdminToken" }
    }
    return refused(kind, given, address, headers)
  }

  /**
   * Counts the request toward its scopes with the caller's limits, for its account or (without
   * one) its address. Nothing is counted where the policy counts nothing, nor for the operator
   * (the admin token, an operator's session), whose scripts are never throttled: only what
   * reaches the admin area without their credentials counts.
   */
  const limit = (
    policy: Routes.Area["policy"],
    caller: RequestContext.Caller,
    address: string,
    headers: Record<string, string>
  ): Now<void, ApiError.RateLimited> => {
    if (policy.rateLimitScopes.length === 0 || caller._tag === "AdminToken" || caller._tag === "OperatorSession") {
      return undefined
    }
    const limits = caller._tag === "Reseller"
      ? caller.principal.limits
      : caller._tag === "Holder"
      ? caller.session.limits
      : {}
    // Per account, all its keys together: test keys count against their live account too.
    const subject = caller._tag === "Reseller"
      ? `account:${caller.principal.ownerId}`
      : caller._tag === "Holder"
      ? `account:${caller.session.accountId}`
      : `address:${address}`
    const quotas = policy.rateLimitScopes.map((scope) => ({
      scope,
      limit: scope === "dashboard" || scope === "access"
        ? settings.dashboardLimits[scope]
        : limits[scope] ?? settings.rateLimits[scope]
    }))
    return andThen(consume(subject, quotas), (decision) => {
      const refusal = enforce(decision, headers)
      return refusal === undefined ? undefined : Effect.fail(refusal)
    })
  }

  /**
   * Reads the body of an endpoint with a payload: its framing refused at once (413, 400,
   * 408), and what the contract's JSON rules find wrong in it (a 422) handed back, to be
   * refused after the credentials are checked (a 401 beats a 422).
   */
  const readBody = (request: HttpServerRequest.HttpServerRequest, bodyLimit: number, answer: Answer) =>
    Effect.gen(function*() {
      if (Number(request.headers["content-length"] ?? "0") > bodyLimit) {
        return yield* new ApiError.PayloadTooLarge({ message: `Request body over ${bodyLimit / 1024} KiB` })
      }
      if (!isJsonContentType(request.headers["content-type"])) {
        return yield* new ApiError.BadRequest({ message: "Content-Type must be application/json" })
      }
      const bytes = yield* RequestBody.readBytes(request, bodyLimit)
      answer.closeAfter = false
      const parsed = Either.flatMap(
        JsonBody.decodeUtf8(bytes),
        (text) => Either.map(JsonBody.parse(text), (json) => ({ text, json }))
      )
      if (Either.isRight(parsed)) return { body: parsed.right, invalid: undefined }
      const problem = parsed.left
      if (problem._tag === "Malformed") return yield* new ApiError.BadRequest({ message: problem.message })
      return {
        body: NO_BODY,
        invalid: Validation.validationError({ [problem.field]: [`${problem.field} ${problem.message}`] })
      }
    })

  /** Steps 5: the refusals that need the caller and the body, in their order (401, 403, 422). */
  const check = (
    request: HttpServerRequest.HttpServerRequest,
    endpoint: Routes.Endpoint,
    caller: RequestContext.Caller,
    invalid: ApiError.ValidationError | undefined
  ) => {
    const { area } = endpoint
    if (endpoint.authenticated && (caller._tag === "Anonymous" || caller._tag === "Refused")) {
      return Auth.refusal(
        area.credentials === "admin" && request.headers.authorization === undefined &&
          request.cookies[Operator.OPERATOR_COOKIE] !== undefined
          ? "operator"
          : area.credentials,
        caller._tag === "Refused" ? caller.suspended ? "suspended" : "wrong" : "none"
      )
    }
    // A signed-in request (dashboard or console) that changes anything proves it came from its page.
    if (
      (caller._tag === "Holder" || caller._tag === "OperatorSession") && endpoint.authenticated &&
      !SAFE_METHODS.has(request.method)
    ) {
      const sent = request.headers[Session.CSRF_HEADER]
      if (sent === undefined || !sameText(sent, caller.csrf)) {
        return new ApiError.Forbidden({
          message: `Missing or wrong ${Session.CSRF_HEADER} header: reload the page and try again`
        })
      }
    }
    if (endpoint.policy.ownersOnly && caller._tag === "OperatorSession" && caller.session.role !== "owner") {
      return new ApiError.Forbidden({ message: "Only an owner (or the admin token) may do this" })
    }
    return invalid
  }

  /**
   * The sequence for a request under an area: what it `decision` names, at canonical `path`,
   * the answer's headers gathered in `answer`, what the log line needs set on `info`.
   */
  const admit = (
    request: HttpServerRequest.HttpServerRequest,
    decision: Exclude<Routes.Decision, { readonly _tag: "Static" }>,
    path: string,
    answer: Answer,
    info: RequestContext.RequestInfo
  ): Now<Admitted, unknown> => {
    const { area } = decision
    // Built only when it is the answer: an error captures a stack trace.
    const notFound = () => new ApiError.NotFound({ message: `No route for ${request.method} ${path}` })
    if (area === undefined) return Effect.fail(notFound())
    const { headers } = answer
    if (area.credentials === "session" || area.credentials === "console") Object.assign(headers, DASHBOARD_HEADERS)
    const address = ClientAddress.of(request, trusted)
    info.address = address
    const identified = identify(request, area, address, headers)
    return andThen(identified, (caller) => {
      // The console's pages read the admin API too: its answers to them are never cached or framed.
      if (caller._tag === "OperatorSession") Object.assign(headers, DASHBOARD_HEADERS)
      if (caller._tag === "Reseller") info.accountId = caller.principal.ownerId
      if (caller._tag === "Holder") info.accountId = caller.session.accountId
      const policy = decision._tag === "Endpoint" ? decision.endpoint.policy : area.policy
      const limited = limit(policy, caller, address, headers)
      return andThen(limited, (): Now<Admitted, unknown> => {
        if (decision._tag === "MethodNotAllowed") {
          headers.allow = decision.allowed.join(", ")
          return Effect.fail(
            new ApiError.MethodNotAllowed({
              message: `${request.method} is not allowed on ${path}; use ${decision.allowed.join(" or ")}`
            })
          )
        }
        if (decision._tag === "NotFound") return Effect.fail(notFound())
        const { endpoint } = decision
        if (told !== undefined && !Effect.isEffect(identified) && !Effect.isEffect(limited)) told(info, "memory")
        // A secret is never cached.
        if (endpoint.policy.carriesSecret) headers["cache-control"] = "no-store"
        if (!endpoint.hasPayload) {
          const refusal = check(request, endpoint, caller, undefined)
          return refusal === undefined ? { caller, body: NO_BODY } : Effect.fail(refusal)
        }
        return Effect.flatMap(readBody(request, endpoint.policy.bodyLimit, answer), ({ body, invalid }) => {
          const refusal = check(request, endpoint, caller, invalid)
          return refusal === undefined ? Effect.succeed({ caller, body }) : Effect.fail(refusal)
        })
      })
    })
  }

  return { admit }
})
