/**
 * The retry policy, applied to the HttpClient under the derived client: a timeout per attempt,
 * waits on 429 that honour `Retry-After`, and retries of transient failures only when repeating
 * the request cannot buy twice.
 *
 * Retrying sits below the contract's decoding, where the real status, headers and transport
 * failures are visible; the last attempt's response goes on to be decoded into the contract's
 * typed errors as usual.
 */
import { REQUEST_ID_HEADER } from "@databundle/contract/ApiError"
import { RETRY_AFTER_HEADER } from "@databundle/contract/RateLimit"
import { HttpClient, HttpClientError, type HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Cause, Duration, Effect, Either, FiberRef } from "effect"
import { globalValue } from "effect/GlobalValue"

/** The retry settings in force, every field filled in. */
export interface RetryPolicy {
  readonly maxAttempts: number
  readonly maxWaitMillis: number
  readonly onRateLimit: boolean
  readonly onTransient: boolean
  readonly backoffMillis: number
}

/** Three attempts, at most a minute of waiting per call (one full rate-limit window), 250 ms first back-off. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  maxWaitMillis: 60_000,
  onRateLimit: true,
  onTransient: true,
  backoffMillis: 250
}

/** One attempt per call. */
export const NO_RETRY: RetryPolicy = { ...DEFAULT_RETRY, maxAttempts: 1 }

/** The longest back-off between two transient failures. */
export const MAX_BACKOFF_MILLIS = 5_000

/** What one attempt ended with, reported to a call's observer. */
export interface Attempt {
  /** 1 for the first attempt. */
  readonly attempt: number
  /** The response status, when a response arrived. */
  readonly status: number | undefined
  /** The server's `X-Request-Id`, when a response carried one. */
  readonly requestId: string | undefined
  /** The wait before the next attempt in milliseconds, when there is one. */
  readonly retryInMillis: number | undefined
}

/** Settings of one call, set with `Effect.locally(currentCall, ...)` around it. */
export interface CallSettings {
  /** Overrides the client's per-attempt timeout. */
  readonly timeoutMillis?: number | undefined
  /** Told about every attempt, for diagnostics (the Promise face puts the last request id on its errors). */
  readonly observe?: ((attempt: Attempt) => void) | undefined
}

/** The settings of the call in progress. */
export const currentCall: FiberRef.FiberRef<CallSettings> = globalValue(
  "@databundle/client/Retry/currentCall",
  () => FiberRef.unsafeMake<CallSettings>({})
)

/** Whether a failed request may be sent again without risk of doing its work twice. */
export type Idempotence = (request: HttpClientRequest.HttpClientRequest) => boolean

/** Reads are safe to repeat; anything else only when the caller vouches for it. */
export const safeMethods: Idempotence = (request) => request.method === "GET" || request.method === "HEAD"

/** Every request through this client is safe to repeat (an order with a reference). */
export const always: Idempotence = () => true

/**
 * `Retry-After` in milliseconds: delta-seconds or an HTTP date; `undefined` when absent or unreadable.
 */
export const parseRetryAfter = (value: string | undefined, nowMillis: number): number | undefined => {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // Only an HTTP date (it names a day and month); Date.parse would also take "-1" as a year.
  const date = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMillis)
}

/** The wait a 429 asks for: `Retry-After`, else the body's `retry_after`, else one second. */
const rateLimitWait = (response: HttpClientResponse.HttpClientResponse, nowMillis: number) =>
  Effect.gen(function*() {
    const header = parseRetryAfter(response.headers[RETRY_AFTER_HEADER], nowMillis)
    if (header !== undefined) return header
    const bytes = yield* Effect.either(response.arrayBuffer)
    if (Either.isRight(bytes)) {
      try {
        const body = JSON.parse(new TextDecoder().decode(bytes.right))
        if (Number.isInteger(body?.retry_after) && body.retry_after >= 0) return body.retry_after * 1000
      } catch {
        // Not JSON: fall through to the default.
      }
    }
    return 1000
  })

/** Exponential back-off with equal jitter: half the step fixed, half random, so retries spread out. */
const backoff = (policy: RetryPolicy, attempt: number) => {
  const step = Math.min(policy.backoffMillis * 2 ** (attempt - 1), MAX_BACKOFF_MILLIS)
  return Math.round(step / 2 + Math.random() * (step / 2))
}

const isTransport = (error: HttpClientError.HttpClientError) =>
  error._tag === "RequestError" && error.reason === "Transport"

const isJson = (response: HttpClientResponse.HttpClientResponse) =>
  /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(response.headers["content-type"] ?? "")

/**
 * Applies the policy to a client. Each attempt reads the whole body within the timeout, so a
 * stalled body counts as a timeout too, and a timeout is a transport failure like any other.
 */
export const withPolicy = (options: {
  readonly policy: RetryPolicy
  readonly timeoutMillis: number
  readonly idempotent: Idempotence
}) =>
(client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (execute, request) =>
    Effect.gen(function*() {
      const call = yield* FiberRef.get(currentCall)
      const timeoutMillis = call.timeoutMillis ?? options.timeoutMillis
      const { policy } = options
      const safe = policy.onTransient && options.idempotent(request)
      // The whole body is read within the attempt (so the timeout covers it), then handed on as
      // a response of its own: some HttpClients cannot read a body twice.
      const attemptOnce = execute.pipe(
        Effect.flatMap((response) =>
          Effect.mapBoth(response.arrayBuffer, {
            onFailure: (cause) =>
              new HttpClientError.RequestError({
                request,
                reason: "Transport",
                cause,
                description: "the connection broke while the response was being read"
              }),
            onSuccess: (bytes) =>
              HttpClientResponse.fromWeb(
                request,
                new Response(bytes.byteLength === 0 ? null : bytes, {
                  status: response.status,
                  headers: Object.entries(response.headers)
                })
              )
          })
        ),
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMillis),
          onTimeout: () =>
            new HttpClientError.RequestError({
              request,
              reason: "Transport",
              cause: new Cause.TimeoutException(`no complete response within ${timeoutMillis} ms`),
              description: `no complete response within ${timeoutMillis} ms`
            })
        })
      )
      let waited = 0
      for (let attempt = 1;; attempt++) {
        const result = yield* Effect.either(attemptOnce)
        const now = Date.now()
        let wait: number | undefined
        if (Either.isRight(result)) {
          const status = result.right.status
          if (status === 429 && policy.onRateLimit) wait = yield* rateLimitWait(result.right, now)
          else if (status >= 500 && safe) {
            wait = Math.max(
              backoff(policy, attempt),
              parseRetryAfter(result.right.headers[RETRY_AFTER_HEADER], now) ?? 0
            )
          }
        } else if (safe && isTransport(result.left)) {
          wait = backoff(policy, attempt)
        }
        // Never start a wait that cannot end in another attempt within the budget.
        if (wait !== undefined && (attempt >= policy.maxAttempts || waited + wait > policy.maxWaitMillis)) {
          wait = undefined
        }
        call.observe?.({
          attempt,
          status: Either.isRight(result) ? result.right.status : undefined,
          requestId: Either.isRight(result) ? result.right.headers[REQUEST_ID_HEADER] : undefined,
          retryInMillis: wait
        })
        if (wait === undefined) {
          if (Either.isLeft(result)) return yield* result.left
          const response = result.right
          // An error without the contract's JSON envelope (a proxy's HTML 502) keeps its status this way.
          if (response.status >= 400 && !isJson(response)) {
            return yield* new HttpClientError.ResponseError({ request, response, reason: "StatusCode" })
          }
          return response
        }
        yield* Effect.sleep(Duration.millis(wait))
        waited += wait
      }
    }))
