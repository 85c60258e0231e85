/**
 * The API-level middleware every request passes: rate limits and their headers, the body
 * rules (size, content type, well-formed JSON), and the mapping of every failure to the
 * contract's JSON envelope, defects included (a 500 that names only the request id).
 *
 * Order of checks: rate limit (429), body framing (413, 400), then inside the router the
 * security middleware (401), payload validation (422) and the handler.
 */
import { AdminApi, ApiError } from "@databundle/contract"
import { ApiKeys, RateLimiter, Settings } from "@databundle/core"
import { type HttpApiError, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, FiberRef, Option, Redacted } from "effect"
import type { ArrayFormatterIssue } from "effect/ParseResult"
import * as ClientAddress from "./ClientAddress.js"
import * as RequestBody from "./RequestBody.js"
import * as RequestContext from "./RequestContext.js"
import type { Route, Routes } from "./Routes.js"
import * as ServerConfig from "./ServerConfig.js"

const SCOPE_NAMES: Record<RateLimiter.Scope, string> = {
  all: "all requests",
  orders: "POST /orders",
  balance: "GET /balance",
  auth: "failed authentications from this address"
}

/** Deepest JSON nesting accepted in a request body. */
export const MAX_JSON_DEPTH = 32

/** The rate-limit scopes a request falls in, by the endpoint it is for. */
export const scopesOf = (route: Route | undefined): ReadonlyArray<"all" | "orders" | "balance"> => {
  if (route?.group === "orders" && route.name === "place") return ["all", "orders"]
  if (route?.group === "wallet" && route.name === "balance") return ["all", "balance"]
  return ["all"]
}

/** True when `value` nests objects or arrays deeper than `limit` (without recursion: the input is hostile). */
export const nestedDeeperThan = (value: unknown, limit: number): boolean => {
  const pending: Array<[unknown, number]> = [[value, 0]]
  while (pending.length > 0) {
    const [next, depth] = pending.pop()!
    if (typeof next !== "object" || next === null) continue
    if (depth + 1 > limit) return true
    for (const child of Object.values(next)) pending.push([child, depth + 1])
  }
  return false
}

const isJsonContentType = (value: string | undefined) =>
  value !== undefined && /^application\/json\s*(;|$)/i.test(value.trim())

/** Turns a decode failure's issues into the 422's per-field messages. */
export const fieldErrors = (issues: ReadonlyArray<ArrayFormatterIssue>): ApiError.FieldErrors => {
  const errors: Record<string, Array<string>> = {}
  for (const issue of issues) {
    // An optional field's union with `undefined` adds a useless "Expected undefined" issue.
    if (issue.message.startsWith("Expected undefined,")) continue
    const field = issue.path.length === 0
      ? "body"
      : issue.path.map((p, i) => typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`).join("")
    const message = `${field} ${describeIssue(issue)}`
    const list = (errors[field] ??= [])
    if (!list.includes(message)) list.push(message)
  }
  return errors
}

const describeIssue = (issue: ArrayFormatterIssue): string => {
  if (issue.path.length === 0) return "must be a JSON object"
  if (issue._tag === "Missing") return "is required"
  if (issue._tag === "Unexpected") return "is not allowed"
  const expected = /^Expected (.+?), actual /s.exec(issue.message)?.[1]
  if (expected === undefined) return issue.message
  if (expected === "number" || expected === "NumberFromString") return "must be a number"
  if (expected === "string") return "must be a string"
  if (expected === "boolean") return "must be true or false"
  if (expected.startsWith("{") || expected.startsWith("Struct")) return "must be a JSON object"
  if (/^(?:"[^"]*"(?: \| )?)+$/.test(expected)) {
    return `must be one of ${expected.replaceAll("\"", "").replaceAll(" |", ",")}`
  }
  return `must be ${expected}`
}

/** A 422 from per-field messages: its message is the first of them, with a count of the rest. */
export const validationError = (errors: ApiError.FieldErrors) => {
  const all = Object.values(errors).flat()
  const rest = all.length - 1
  return new ApiError.ValidationError({
    message: `${all[0] ?? "The request is invalid"}${
      rest > 0 ? ` (and ${rest} more error${rest > 1 ? "s" : ""})` : ""
    }`,
    errors
  })
}

const isEnvelopeError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "success" in error && error.success === false

const hasTag = (error: unknown, tag: string): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === tag

/**
 * What leaves the gateway: only the API's envelope errors (typed loosely here; the API's
 * error encoder turns each into its status and body).
 */
type EnvelopeError = ApiError.ServerError

/** The gateway as an `HttpApiBuilder.middleware` function, for the API described by `routes`. */
export const make = (routes: Routes) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys.ApiKeys
    const limiter = yield* RateLimiter.RateLimiter
    const settings = yield* Settings.Settings

    const trusted = yield* ServerConfig.trustedProxies
    const authFailures: ReadonlyArray<RateLimiter.Quota> = [{ scope: "auth", limit: settings.authFailureLimit }]

    /** Sends a decision's headers with the response; a refusal is a 429. */
    const enforce = (decision: RateLimiter.RateDecision) =>
      Effect.gen(function*() {
        const headers: Record<string, string> = {
          "x-ratelimit-limit": String(decision.limit),
          "x-ratelimit-remaining": String(decision.remaining),
          "x-ratelimit-reset": String(decision.resetSeconds)
        }
        if (!decision.allowed) headers["retry-after"] = String(decision.retryAfterSeconds)
        yield* HttpApp.appendPreResponseHandler((_, response) =>
          Effect.succeed(HttpServerResponse.setHeaders(response, headers))
        )
        if (!decision.allowed) {
          return yield* new ApiError.RateLimited({
            message: `Rate limit exceeded (${decision.limit} per minute for ${
              SCOPE_NAMES[decision.scope]
            }); retry in ${decision.retryAfterSeconds} s`,
            retry_after: decision.retryAfterSeconds
          })
        }
      })

    /** Counts a failed authentication against the client's address. */
    const failedAuthentication = (address: string) => limiter.consume(`address:${address}`, authFailures)

    /**
     * The rate limits of a request. An address that failed too many authentications is
     * refused before its credentials are even looked at, so it learns nothing more about
     * them; an API key that does not authenticate counts as a failure wherever it is sent.
     */
    const admit = (
      request: HttpServerRequest.HttpServerRequest,
      address: string,
      route: Route | undefined,
      isAdmin: boolean
    ) =>
      Effect.gen(function*() {
        const credentials = isAdmin ? request.headers.authorization : request.headers["x-api-key"]
        if (credentials) {
          const blocked = yield* limiter.check(`address:${address}`, authFailures)
          if (!blocked.allowed) return yield* enforce(blocked)
        }
        // Admin requests carry only the failure limit; their failures are counted when AdminAuth refuses them.
        if (isAdmin) return
        const principal = credentials ? yield* apiKeys.authenticate(Redacted.make(credentials)) : Option.none()
        if (credentials && Option.isNone(principal)) yield* failedAuthentication(address)
        const info = yield* FiberRef.get(RequestContext.current)
        info.principal = principal
        const subject = Option.match(principal, {
          onNone: () => `address:${address}`,
          onSome: (p) => `account:${p.accountId}`
        })
        const quotas = scopesOf(route).map((scope) => ({
          scope,
          limit: Option.match(principal, {
            onNone: () => settings.rateLimits[scope],
            onSome: (p) => p.limits[scope] ?? settings.rateLimits[scope]
          })
        }))
        yield* enforce(yield* limiter.consume(subject, quotas))
      })

    /** Checks the body's size, type and JSON; returns the request with the body read. */
    const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
      Effect.gen(function*() {
        const length = Number(request.headers["content-length"] ?? "0")
        if (length > limit) {
          return yield* new ApiError.PayloadTooLarge({ message: `Request body over ${limit / 1024} KiB` })
        }
        if (!isJsonContentType(request.headers["content-type"])) {
          return yield* new ApiError.BadRequest({ message: "Content-Type must be application/json" })
        }
        const text = yield* RequestBody.readText(request, limit)
        let body: unknown
        try {
          body = text.length === 0 ? null : JSON.parse(text)
        } catch {
          return yield* new ApiError.BadRequest({ message: "Malformed JSON in request body" })
        }
        if (nestedDeeperThan(body, MAX_JSON_DEPTH)) {
          return yield* new ApiError.BadRequest({ message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` })
        }
        return RequestBody.withBody(request, text, body)
      }).pipe(
        // An unread body behind a 413 is not worth draining: close the connection after the answer.
        Effect.tapErrorTag("PayloadTooLarge", () =>
          HttpApp.appendPreResponseHandler((_, response) =>
            Effect.succeed(HttpServerResponse.setHeader(response, "connection", "close"))
          ))
      )

    /** Maps any failure to an envelope error, so the API's error encoder can always answer. */
    const toEnvelope = (
      cause: Cause.Cause<unknown>,
      request: HttpServerRequest.HttpServerRequest,
      path: string,
      onUnauthorized: Effect.Effect<unknown>
    ) =>
      Effect.gen(function*() {
        if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) {
          const error = failure.value
          if (hasTag(error, "Unauthorized")) yield* onUnauthorized
          if (isEnvelopeError(error)) return yield* Effect.fail(error)
          if (hasTag(error, "HttpApiDecodeError")) {
            const issues = (error as HttpApiError.HttpApiDecodeError).issues
            const { route } = routes.match(request.method, path)
            const badParam = issues.some((issue) => route?.params.includes(String(issue.path[0])))
            return yield* badParam
              ? Effect.fail(new ApiError.NotFound({ message: `Not found: ${path}` }))
              : Effect.fail(validationError(fieldErrors(issues)))
          }
          if (hasTag(error, "RouteNotFound")) {
            const { allowed } = routes.match(request.method, path)
            // The router also refuses a matching path whose parameter is absurdly long: a 404, not a 405.
            if (allowed.length > 0 && !allowed.includes(request.method)) {
              yield* HttpApp.appendPreResponseHandler((_, response) =>
                Effect.succeed(HttpServerResponse.setHeader(response, "allow", allowed.join(", ")))
              )
              return yield* new ApiError.MethodNotAllowed({
                message: `${request.method} is not allowed on ${path}; use ${allowed.join(" or ")}`
              })
            }
            return yield* new ApiError.NotFound({ message: `No route for ${request.method} ${path}` })
          }
        }
        const info = yield* FiberRef.get(RequestContext.current)
        yield* Effect.logError("request failed", cause)
        return yield* new ApiError.ServerError({ message: "Internal server error", request_id: info.id })
      })

    return (app: HttpApp.Default) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = RequestContext.pathOf(request.url)
        const address = ClientAddress.of(request, trusted)
        const isAdmin = path === AdminApi.ADMIN_PREFIX || path.startsWith(`${AdminApi.ADMIN_PREFIX}/`)
        // A refused admin token is a failed authentication (refused API keys were counted by `admit`).
        const onUnauthorized = isAdmin && request.headers.authorization ? failedAuthentication(address) : Effect.void
        return yield* Effect.gen(function*() {
          const match = routes.match(request.method, path)
          yield* admit(request, address, match.route, isAdmin)
          if (!match.route?.hasPayload) return yield* app
          const withBody = yield* readBody(
            request,
            isAdmin ? ServerConfig.BODY_LIMITS.admin : ServerConfig.BODY_LIMITS.api
          )
          return yield* Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBody)
        }).pipe(Effect.catchAllCause((cause) => toEnvelope(cause, request, path, onUnauthorized)))
      }) as Effect.Effect<HttpServerResponse.HttpServerResponse, EnvelopeError, HttpServerRequest.HttpServerRequest>
  })
