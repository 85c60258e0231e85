/**
 * The API-level middleware every request passes. It takes the one route decision
 * (`Routes`), and everything else acts on it:
 *
 * 1. a path that names no endpoint is a 404 (405 with `Allow` for a wrong method);
 * 2. credentials are checked once: valid ones are never refused for others' failures, and
 *    failed ones count per client address and per key prefix, past the limit a 429;
 * 3. the endpoint's rate-limit scopes (from the contract) are counted, with their headers;
 * 4. a body is read only for an endpoint with a payload, up to its limit (413) and within
 *    its time (408), as UTF-8 JSON (400); any other body is never read, and the connection
 *    is closed after the answer instead of draining it;
 * 5. without valid credentials, a 401; then a body against the contract's JSON rules, a 422;
 * 6. the router is handed the canonical path, the body already read, and the caller in the
 *    fiber, where the security middlewares find it.
 *
 * Every failure leaves as one of the API's envelope errors, defects included (a 500 that
 * names only the request id).
 *
 * The busiest requests can also be answered before the router (`early`, which the request
 * log asks first): the catalogue's reads from memory, and the requests of the handlers the
 * gateway calls itself (an order, the balance, one order) with their bodies read and their
 * handlers called as above. The same decisions, taken by the same functions, from what is
 * already in memory; whatever would take more goes through the steps above.
 */
import { Account, ApiError, ApiKey, JsonBody, Operator, RateLimit, Session, Validation } from "@databundle/contract"
import { ApiKeys, Operators, RateLimiter, Sessions, Settings, Tokens } from "@databundle/core"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpApiSchema,
  HttpApp,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Either, FiberRef, Option, ParseResult, Redacted, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import * as AdminToken from "./AdminToken.js"
import * as Auth from "./Auth.js"
import * as ClientAddress from "./ClientAddress.js"
import * as Metrics from "./Metrics.js"
import * as RequestBody from "./RequestBody.js"
import * as RequestContext from "./RequestContext.js"
import type * as Routes from "./Routes.js"
import * as ServerConfig from "./ServerConfig.js"

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
const carriesBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["transfer-encoding"] !== undefined ||
  (request.headers["content-length"] !== undefined && request.headers["content-length"] !== "0")

const BEARER = /^Bearer /i

/** What an endpoint without a payload is handed as its body, whatever the client sent. */
const NO_BODY = { text: "", json: null, invalid: Option.none<ApiError.ValidationError>() }

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

/**
 * A reseller's read the gateway may answer before the router: its response for the caller
 * and the request's path parameters (as the router would hand them to the handler), from
 * memory alone; `undefined` leaves the request to the router, which answers it as any other.
 */
export type CachedRead = (
  principal: ApiKeys.Principal,
  params: Readonly<Record<string, string>>
) => HttpServerResponse.HttpServerResponse | undefined

/**
 * A reseller endpoint's own handler, which the gateway may call itself instead of handing the
 * request to the router: for an endpoint with no query or header parameters, only path
 * parameters and a payload (or neither), run with the caller's account as the API key's
 * security middleware would provide it.
 */
export type DirectHandler = (
  request: { readonly path: never; readonly payload: never }
) => Effect.Effect<unknown, unknown, Account.CurrentAccount>

/**
 * An endpoint's answer before the router, given the caller, the path's parameters and the
 * request with its decision, path and info: a response, the effect that answers, or
 * `undefined` to leave the request to the router. (A `CachedRead` is one.)
 */
type EarlyAnswer = (
  principal: ApiKeys.Principal,
  params: Readonly<Record<string, string>>,
  request: HttpServerRequest.HttpServerRequest,
  decision: Routes.Decision & { readonly _tag: "Endpoint" },
  path: string,
  info: RequestContext.RequestInfo
) => HttpServerResponse.HttpServerResponse | Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined

/** A direct handler as the gateway calls it: with the caller, the path's parameters and the body's JSON. */
type DirectCall = (
  principal: ApiKeys.Principal,
  params: Readonly<Record<string, string>>,
  json: unknown
) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>

/**
 * The direct handlers of `api` (by endpoint name, `group.endpoint`), each wrapped as the
 * router wraps it: its path parameters and payload decoded and its answer encoded by the
 * endpoint's own schemas, a parameter or payload that does not decode failing as the
 * router's decode error does.
 */
const directCalls = (api: HttpApi.HttpApi.Any, handlers: Readonly<Record<string, DirectHandler>>) => {
  const calls = new Map<string, DirectCall>()
  HttpApi.reflect(api as HttpApi.HttpApi<string, never, never, never>, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, successes }) => {
      const name = `${group.identifier}.${endpoint.name}`
      const handler = handlers[name]
      if (handler === undefined) return
      const [success, ...others] = successes
      if (
        Option.isSome(endpoint.urlParamsSchema) ||
        Option.isSome(endpoint.headersSchema) || success === undefined || others.length > 0 ||
        Option.isNone(success[1].ast) || HttpApiSchema.getEncoding(success[1].ast.value).kind !== "Json"
      ) {
        throw new Error(`${name} cannot be called without the router: it takes more than path parameters and JSON`)
      }
      const [status, { ast }] = success
      const contentType = HttpApiSchema.getEncoding(ast.value).contentType
      const encode = Schema.encode(Schema.make(ast.value))
      const decode = (schema: Option.Option<Schema.Schema<never, unknown>>) => {
        const decoder = Option.map(schema, (s) => Schema.decodeUnknown(s))
        return (input: unknown): Effect.Effect<never, ParseResult.ParseError> =>
          Option.isSome(decoder) ? decoder.value(input) : Effect.succeed(undefined as never)
      }
      const decodePath = decode(endpoint.pathSchema)
      const decodePayload = decode(endpoint.payloadSchema)
      const route = endpoint.path
      calls.set(name, (principal, params, json) => {
        const account = { accountId: principal.accountId, keyId: principal.keyId, priceGroupId: principal.priceGroupId }
        const answer = Effect.flatMap(
          Effect.zip(decodePath(params), decodePayload(json)),
          ([path, payload]) => Effect.provideService(handler({ path, payload }), Account.CurrentAccount, account)
        ).pipe(
          Effect.flatMap(encode),
          Effect.map((body) => HttpServerResponse.unsafeJson(body, { status, contentType })),
          Effect.catchIf(ParseResult.isParseError, HttpApiError.HttpApiDecodeError.refailParseError)
        )
        // The route, as the router names it on the request's span.
        return Effect.zipRight(RequestContext.annotateSpan("http.route", route), answer)
      })
    }
  })
  return calls
}

/**
 * The path parameters of a request for `endpoint` by its canonical `path`, undecoded, as the
 * router would hand them to the handler; `undefined` when one is percent-escaped (the router
 * decodes escapes: such a request is left to it).
 */
const pathParams = (endpoint: Routes.Endpoint, path: string): Readonly<Record<string, string>> | undefined => {
  const params: Record<string, string> = {}
  if (endpoint.params.length === 0) return params
  const parts = path.slice(1).split("/")
  for (let i = 0; i < endpoint.segments.length; i++) {
    const segment = endpoint.segments[i]!
    if (!segment.startsWith(":")) continue
    if (parts[i]!.includes("%")) return undefined
    params[segment.slice(1)] = parts[i]!
  }
  return params
}

/** A test for the API's own errors, from every error schema its endpoints, groups and itself declare. */
const apiErrorTest = (api: HttpApi.HttpApi.Any) => {
  const schemas: Array<Schema.Schema.Any> = []
  HttpApi.reflect(api as HttpApi.HttpApi<string, never, never, never>, {
    onGroup: () => {},
    onEndpoint: ({ errors }) => {
      for (const { ast } of errors.values()) if (Option.isSome(ast)) schemas.push(Schema.make(ast.value))
    }
  })
  const is = Schema.is(Schema.Union(...schemas))
  return (u: unknown): boolean => is(u)
}

/** Headers the gateway adds to a request's response, whatever the answer: one pre-response handler sets them all. */
type ResponseHeaders = Record<string, string>

/** True when two texts are equal, in a time that does not depend on where they differ. */
const sameText = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Methods that change nothing, so need no CSRF token. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

/** The headers of every dashboard API response: no framing, no sniffing, no referrer, nothing cached. */
const DASHBOARD_HEADERS: ResponseHeaders = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/** Adds the headers of an answer the router gives for `endpoint`: a secret is never cached. */
const routedHeaders = (endpoint: Routes.Endpoint, headers: ResponseHeaders) => {
  if (endpoint.policy.carriesSecret) headers["cache-control"] = "no-store"
}

/**
 * The gateway of `api` described by `routes`: `middleware`, an `HttpApiBuilder.middleware`
 * function, and `early`, which answers the `reads` (by endpoint name, `group.endpoint`)
 * before the router when it can (see `early` below).
 */
export const make = (
  api: HttpApi.HttpApi.Any,
  routes: Routes.Routes,
  reads: Readonly<Record<string, CachedRead>> = {},
  direct: Readonly<Record<string, DirectHandler>> = {}
) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys.ApiKeys
    const sessions = yield* Sessions.Sessions
    const operators = yield* Operators.Operators
    const limiter = yield* RateLimiter.RateLimiter
    const settings = yield* Settings.Settings
    const adminToken = Redacted.value(yield* AdminToken.resolve)
    const trusted = yield* ServerConfig.trustedProxies
    const isApiError = apiErrorTest(api)
    const metrics = yield* Metrics.Metrics
    // Each endpoint's request metrics, found by the route decision (no label building per request).
    const routeMetrics = new Map(routes.endpoints.map((endpoint) => [
      endpoint,
      metrics.route(endpoint.method, `/${endpoint.segments.join("/")}`)
    ]))
    const unmatched = metrics.route("", Metrics.UNMATCHED)
    // The endpoints whose handlers the gateway calls itself, by the route decision.
    const calls = directCalls(api, direct)
    const directs = new Map(routes.endpoints.flatMap((endpoint) => {
      const call = calls.get(endpoint.name)
      return call === undefined ? [] : [[endpoint, call] as const]
    }))
    const authFailures: ReadonlyArray<RateLimiter.Quota> = [{ scope: "auth", limit: settings.authFailureLimit }]

    /** Sends a decision's headers with the response; a refusal is a 429, returned (a plain check, no Effect). */
    const enforce = (decision: RateLimiter.RateDecision, headers: ResponseHeaders) => {
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

    /**
     * Who sent the request. Credentials that fail count against the client's address and,
     * for an API key, against its prefix; past either limit the request is a 429. Valid
     * credentials are looked at first and never refused here, so no one behind a shared
     * address can lock the others out.
     */
    const identify = (
      request: HttpServerRequest.HttpServerRequest,
      area: Routes.Area,
      address: string,
      headers: ResponseHeaders
    ) =>
      Effect.gen(function*() {
        const { given, kind } = credentialsOf(request, area)
        if (kind === "none" || given === undefined || given.length === 0) return { _tag: "Anonymous" } as const
        if (kind === "session") {
          const session = yield* sessions.authenticate(given)
          if (Option.isSome(session)) {
            return { _tag: "Holder", session: session.value, csrf: Sessions.csrfToken(given) } as const
          }
        } else if (kind === "operator") {
          const session = yield* operators.authenticate(given)
          if (Option.isSome(session)) {
            return { _tag: "OperatorSession", session: session.value, csrf: Sessions.csrfToken(given) } as const
          }
        } else if (kind === "apiKey") {
          const principal = yield* apiKeys.authenticate(Redacted.make(given))
          if (Option.isSome(principal)) return { _tag: "Reseller", principal: principal.value } as const
        } else if (BEARER.test(given) && AdminToken.secretsEqual(given.slice("Bearer ".length), adminToken)) {
          return { _tag: "AdminToken" } as const
        }
        metrics.authFailed(kind)
        const subjects = [`address:${address}`]
        if (kind === "apiKey") subjects.push(`key-prefix:${Tokens.displayPrefix(given)}`)
        for (const subject of subjects) {
          const decision = yield* limiter.consume(subject, authFailures)
          if (!decision.allowed) return yield* enforce(decision, headers)!
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
     * What a request is counted as: its scopes with the caller's limits, for its account or
     * (without one) its address; `undefined` when its endpoint counts nothing, or when the
     * caller is the operator (the admin token, an operator's session), whose scripts are never
     * throttled: only what reaches the admin area without their credentials counts.
     */
    const admission = (
      policy: Routes.Area["policy"],
      caller: RequestContext.Caller,
      address: string
    ): { readonly subject: string; readonly quotas: ReadonlyArray<RateLimiter.Quota> } | undefined => {
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
      return { subject, quotas }
    }

    /** Counts the request toward its scopes, for its account or (without one) its address. */
    const admit = (
      policy: Routes.Area["policy"],
      caller: RequestContext.Caller,
      address: string,
      headers: ResponseHeaders
    ): Effect.Effect<void, ApiError.RateLimited> => {
      const counted = admission(policy, caller, address)
      if (counted === undefined) return Effect.void
      return Effect.flatMap(limiter.consume(counted.subject, counted.quotas), (decision) => {
        const refused = enforce(decision, headers)
        return refused === undefined ? Effect.void : Effect.fail(refused)
      })
    }

    /**
     * Reads the body of an endpoint with a payload: its framing refused at once (413, 400,
     * 408), and what the contract's JSON rules find wrong in it (a 422) handed back, to be
     * refused after the credentials are checked (a 401 beats a 422).
     */
    const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
      Effect.gen(function*() {
        if (Number(request.headers["content-length"] ?? "0") > limit) {
          return yield* new ApiError.PayloadTooLarge({ message: `Request body over ${limit / 1024} KiB` })
        }
        if (!isJsonContentType(request.headers["content-type"])) {
          return yield* new ApiError.BadRequest({ message: "Content-Type must be application/json" })
        }
        const bytes = yield* RequestBody.readBytes(request, limit)
        const parsed = Either.flatMap(
          JsonBody.decodeUtf8(bytes),
          (text) => Either.map(JsonBody.parse(text), (json) => ({ text, json }))
        )
        if (Either.isRight(parsed)) return { ...parsed.right, invalid: Option.none() }
        const problem = parsed.left
        if (problem._tag === "Malformed") return yield* new ApiError.BadRequest({ message: problem.message })
        return {
          text: "",
          json: null,
          invalid: Option.some(Validation.validationError({ [problem.field]: [`${problem.field} ${problem.message}`] }))
        }
      })

    /**
     * Maps what the router fails with to the API's envelope errors: the API's own errors pass
     * on to its encoder, a decode failure is a 404 (a path parameter) or a 422, and anything
     * else, defects included, is a 500 that names only the request id.
     */
    const toEnvelope = <E>(
      cause: Cause.Cause<E>,
      request: HttpServerRequest.HttpServerRequest,
      decision: Routes.Decision,
      path: string
    ) =>
      Effect.gen(function*() {
        if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) {
          const error: unknown = failure.value
          // (Every HttpApi declares the decode error too; it is answered here, in the envelope.)
          if (error instanceof HttpApiError.HttpApiDecodeError) {
            // A path parameter that does not decode names nothing.
            const params = decision._tag === "Endpoint" ? decision.endpoint.params : []
            if (error.issues.some((issue) => params.includes(String(issue.path[0])))) {
              return yield* new ApiError.NotFound({ message: `Not found: ${path}` })
            }
            return yield* Validation.validationError(Validation.fieldErrors(error.issues, repeatedParams(request.url)))
          }
          if (error instanceof HttpServerError.RouteNotFound) {
            return yield* new ApiError.NotFound({ message: `No route for ${request.method} ${path}` })
          }
          if (isApiError(error)) return yield* Effect.failCause(cause)
        }
        const info = yield* FiberRef.get(RequestContext.current)
        yield* Effect.logError("request failed", cause)
        return yield* new ApiError.ServerError({ message: "Internal server error", request_id: info.id })
      })

    const handle = (
      app: HttpApp.Default,
      request: HttpServerRequest.HttpServerRequest,
      decision: Routes.Decision,
      target: RequestContext.Target,
      bodyRead: Effect.Effect<void>,
      headers: ResponseHeaders,
      info: RequestContext.RequestInfo
    ) =>
      Effect.gen(function*() {
        if (decision._tag === "Static") {
          if (request.method === "GET" || request.method === "HEAD") {
            return yield* routes.statics!.serve(request, decision.segments)
          }
          headers.allow = "GET, HEAD"
          return yield* new ApiError.MethodNotAllowed({
            message: `${request.method} is not allowed on ${target.path}; use GET or HEAD`
          })
        }
        // Built only when it is the answer: an error captures a stack trace.
        const notFound = () => new ApiError.NotFound({ message: `No route for ${request.method} ${target.path}` })
        const { area } = decision
        if (area === undefined) return yield* notFound()
        if (area.credentials === "session" || area.credentials === "console") Object.assign(headers, DASHBOARD_HEADERS)
        const address = ClientAddress.of(request, trusted)
        info.address = address
        const caller = yield* identify(request, area, address, headers)
        // The console's pages read the admin API too: its answers to them are never cached or framed.
        if (caller._tag === "OperatorSession") Object.assign(headers, DASHBOARD_HEADERS)
        if (caller._tag === "Reseller") info.accountId = caller.principal.ownerId
        if (caller._tag === "Holder") info.accountId = caller.session.accountId
        const policy = decision._tag === "Endpoint" ? decision.endpoint.policy : area.policy
        yield* admit(policy, caller, address, headers)
        if (decision._tag === "MethodNotAllowed") {
          headers.allow = decision.allowed.join(", ")
          return yield* new ApiError.MethodNotAllowed({
            message: `${request.method} is not allowed on ${target.path}; use ${decision.allowed.join(" or ")}`
          })
        }
        if (decision._tag === "NotFound") return yield* notFound()
        const { endpoint } = decision
        const body = endpoint.hasPayload
          ? yield* Effect.tap(readBody(request, endpoint.policy.bodyLimit), () => bodyRead)
          : NO_BODY
        if (endpoint.authenticated && (caller._tag === "Anonymous" || caller._tag === "Refused")) {
          return yield* Auth.refusal(
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
            return yield* new ApiError.Forbidden({
              message: `Missing or wrong ${Session.CSRF_HEADER} header: reload the page and try again`
            })
          }
        }
        if (endpoint.policy.ownersOnly && caller._tag === "OperatorSession" && caller.session.role !== "owner") {
          return yield* new ApiError.Forbidden({ message: "Only an owner (or the admin token) may do this" })
        }
        if (Option.isSome(body.invalid)) return yield* body.invalid.value
        routedHeaders(endpoint, headers)
        // An API key's request to an endpoint the gateway can call itself needs nothing more from the router.
        const call = caller._tag === "Reseller" ? directs.get(endpoint) : undefined
        const params = call === undefined ? undefined : pathParams(endpoint, target.path)
        if (call !== undefined && params !== undefined && caller._tag === "Reseller") {
          return yield* call(caller.principal, params, body.json)
        }
        const routed = RequestBody.withBody(request.modify({ url: target.path + target.query }), body.text, body.json)
        return yield* app.pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, routed),
          Effect.locally(RequestContext.caller, caller)
        )
      })

    /** The request's target and route. */
    const route = (request: HttpServerRequest.HttpServerRequest) => {
      const target = RequestContext.splitTarget(request.url)
      return { target, decision: routes.decide(request.method, target.path) }
    }

    const middleware = (app: HttpApp.Default) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const info = yield* FiberRef.get(RequestContext.current)
        // Decided once: `early`, when it was asked first, kept its decision on the request's info.
        const { decision, target } = info.routed ?? route(request)
        info.route = decision._tag === "Endpoint" ? routeMetrics.get(decision.endpoint) : unmatched
        // A body not read to its end (refused, too large, too slow, or for an endpoint
        // without a payload) is not worth draining: the connection closes after the answer.
        // The request log's pre-response handler sends the headers with the request id.
        const headers: ResponseHeaders = {}
        info.headers = headers
        info.closeAfter = carriesBody(request)
        const bodyRead = Effect.sync(() => {
          info.closeAfter = false
        })
        return yield* handle(app, request, decision, target, bodyRead, headers, info).pipe(
          Effect.catchAllCause((cause) => toEnvelope(cause, request, decision, target.path)),
          Effect.catchAll(withRequestId)
        )
      })

    const consumeNow = limiter.consumeNow
    // The API's own encoding of its errors, as the router's failures get it.
    const encodeErrors = yield* HttpApiBuilder.buildMiddleware(api as HttpApi.HttpApi<string, never, never, never>)

    /**
     * A direct handler's request answered before the router: its body read and checked as
     * `handle` reads it, the handler called, and any failure answered as `middleware`'s are
     * (the envelope, the request id, the API's encoding).
     */
    const earlyCall = (call: DirectCall): EarlyAnswer => (principal, params, request, decision, path, info) =>
      Effect.gen(function*() {
        const { endpoint } = decision
        const body = endpoint.hasPayload ? yield* readBody(request, endpoint.policy.bodyLimit) : NO_BODY
        info.closeAfter = false
        if (Option.isSome(body.invalid)) return yield* body.invalid.value
        return yield* call(principal, params, body.json)
      }).pipe(
        Effect.catchAllCause((cause) => toEnvelope(cause, request, decision, path)),
        Effect.catchAll(withRequestId),
        encodeErrors,
        // (Every failure is one of the API's errors by now, so encoded; anything else would be a 500.)
        Effect.orDie
      )

    /**
     * What each endpoint answered before the router gives, once the gateway's decisions are
     * taken: a read's cached response (`undefined` when not cached), or the direct handler's
     * call (`earlyCall`, an effect: nothing runs until the request log runs it).
     */
    const earlyAnswers = new Map(routes.endpoints.flatMap((endpoint) => {
      const call = directs.get(endpoint)
      const answer: EarlyAnswer | undefined = reads[endpoint.name] ?? (call === undefined ? undefined : earlyCall(call))
      return answer === undefined ? [] : [[endpoint, answer] as const]
    }))

    /**
     * The answer to one of `reads`, or to a request of a direct handler, when everything the
     * gateway decides is in memory: the same decisions as `middleware` (the route, the
     * credentials, the counted limits and their headers) from the key cache and the rate
     * limiter's own counts, synchronously. A read answers with its cached response; a direct
     * handler's request with the effect that reads its body and calls the handler (`earlyCall`).
     * `undefined` whenever anything would take more (no key or one not cached as valid, counts
     * kept in the database, a query string, a body the endpoint takes none of, a body not
     * declared as JSON within the endpoint's limit, a read not cached) or the answer would be a
     * refusal: the request then goes through `middleware` unchanged. The request is counted
     * only once everything else is known, and only when admitted (a refused request counts
     * nowhere), so a request that goes on is never counted twice.
     */
    const early = (
      request: HttpServerRequest.HttpServerRequest,
      info: RequestContext.RequestInfo
    ): HttpServerResponse.HttpServerResponse | Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined => {
      if (consumeNow === undefined || earlyAnswers.size === 0) return undefined
      const routed = route(request)
      info.routed = routed
      const { decision, target } = routed
      if (target.query !== "" || decision._tag !== "Endpoint") return undefined
      const { endpoint } = decision
      const answerOf = earlyAnswers.get(endpoint)
      if (answerOf === undefined) return undefined
      // A body only for an endpoint with a payload, declared as JSON and within its limit: the router refuses the rest.
      const body = carriesBody(request)
      if (
        endpoint.hasPayload
          ? !isJsonContentType(request.headers["content-type"]) ||
            Number(request.headers["content-length"] ?? "0") > endpoint.policy.bodyLimit
          : body
      ) return undefined
      const { given, kind } = credentialsOf(request, decision.area)
      if (kind !== "apiKey" || given === undefined || given.length === 0) return undefined
      const found = apiKeys.peek(given)
      if (found === undefined || Option.isNone(found)) return undefined
      // The path is canonical (the decision is an endpoint).
      const params = pathParams(endpoint, target.path)
      if (params === undefined) return undefined
      const answer = answerOf(found.value, params, request, decision, target.path, info)
      if (answer === undefined) return undefined
      const caller: RequestContext.Caller = { _tag: "Reseller", principal: found.value }
      const address = ClientAddress.of(request, trusted)
      const headers: ResponseHeaders = {}
      const counted = admission(endpoint.policy, caller, address)
      if (counted !== undefined) {
        const verdict = consumeNow(counted.subject, counted.quotas)
        if (!verdict.allowed) return undefined
        enforce(verdict, headers)
      }
      routedHeaders(endpoint, headers)
      info.route = routeMetrics.get(endpoint)
      info.headers = headers
      // Until the body is read to its end, the connection closes after the answer (as `middleware` has it).
      info.closeAfter = body
      info.address = address
      info.accountId = caller.principal.ownerId
      return answer
    }

    return { middleware, early }
  })

/**
 * Fails with a copy of `error` that carries the current request's id in its body
 * (`request_id`); the error itself may be shared, so it is not changed.
 */
const withRequestId = (error: unknown) =>
  Effect.flatMap(FiberRef.get(RequestContext.current), (info) =>
    Effect.fail(
      typeof error === "object" && error !== null && !("request_id" in error && error.request_id !== undefined)
        ? Object.create(Object.getPrototypeOf(error), {
          ...Object.getOwnPropertyDescriptors(error),
          request_id: { value: info.id, enumerable: true, writable: true, configurable: true }
        })
        : error
    ))

/** The names of the query parameters given more than once. */
const repeatedParams = (url: string): ReadonlySet<string> => {
  const seen = new Set<string>()
  const repeated = new Set<string>()
  for (const [name] of new URLSearchParams(RequestContext.splitTarget(url).query)) {
    if (seen.has(name)) repeated.add(name)
    seen.add(name)
  }
  return repeated
}
