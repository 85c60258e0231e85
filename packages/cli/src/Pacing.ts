/**
 * Keeping a bulk run under the rate limit (10 orders a minute by default) from what the server
 * says: every POST /orders response carries `X-RateLimit-Limit`, `-Remaining` and `-Reset`
 * (seconds until the window's count next goes down) for its tightest scope. When nothing
 * remains, the next order waits for the reset instead of being refused; a 429 all the same
 * (another client on the account) waits its `Retry-After` and tries again, since a refused
 * request did nothing. Every wait is shown and can be interrupted.
 */
import { type BundlesClient, RATE_LIMIT_HEADERS } from "@databundle/client"
import { HttpClient } from "@effect/platform"
import { Clock, Duration, Effect, Either, Predicate } from "effect"

/** The rate-limit window a response reported. */
export interface Window {
  readonly limit: number
  readonly remaining: number
  /** When (epoch milliseconds) the window's count next goes down. */
  readonly resetAt: number
}

/** Reads the `X-RateLimit-*` headers; undefined when a response has none. */
export const readWindow = (headers: Readonly<Record<string, string | undefined>>, now: number): Window | undefined => {
  const number = (name: string) => {
    const text = headers[name]
    return text !== undefined && /^\d+$/.test(text.trim()) ? Number(text) : undefined
  }
  const limit = number(RATE_LIMIT_HEADERS.limit)
  const remaining = number(RATE_LIMIT_HEADERS.remaining)
  const reset = number(RATE_LIMIT_HEADERS.reset)
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined
  return { limit, remaining, resetAt: now + reset * 1000 }
}

/** The length of the server's window, for estimates: 60 seconds and the one it is counting in. */
const WINDOW_MILLIS = 61_000

/** What the pacer knows: the last window of POST /orders, and how long an order takes. */
export interface Pacer {
  /** Wraps the HttpClient under the typed client, to read the headers of every POST /orders attempt. */
  readonly observe: (client: HttpClient.HttpClient) => HttpClient.HttpClient
  /** Milliseconds to wait before the next order may go; 0 when it may go now. */
  readonly delay: (now: number) => number
  /** Notes how long an order took, for the estimate. */
  readonly took: (millis: number) => void
  /** Milliseconds the remaining `rows` orders should take, at the limit; undefined before the first order. */
  readonly eta: (rows: number, now: number) => number | undefined
  /** The last window, if any response reported one. */
  readonly window: () => Window | undefined
}

/** A pacer with nothing learnt yet. */
export const make = (): Pacer => {
  let window: Window | undefined
  let latency: number | undefined
  return {
    observe: (client) =>
      HttpClient.tap(client, (response) =>
        Clock.currentTimeMillis.pipe(Effect.map((now) => {
          if (response.request.method !== "POST" || !response.request.url.endsWith("/orders")) return
          window = readWindow(response.headers, now) ?? window
        }))),
    delay: (now) => window === undefined || window.remaining > 0 || window.resetAt <= now ? 0 : window.resetAt - now,
    took: (millis) => {
      // A moving average: recent orders say more about the next ones.
      latency = latency === undefined ? millis : latency * 0.7 + millis * 0.3
    },
    eta: (rows, now) => {
      if (rows <= 0) return 0
      if (latency === undefined) return undefined
      const calls = rows * latency
      if (window === undefined) return calls
      const beyond = rows - window.remaining
      if (beyond <= 0) return calls
      // Orders beyond what remains wait for the reset, then go a limit's worth a window.
      const toReset = Math.max(0, window.resetAt - now)
      return calls + toReset + (Math.ceil(beyond / Math.max(window.limit, 1)) - 1) * WINDOW_MILLIS
    },
    window: () => window
  }
}

/** Waits `millis`, showing the time left once a second through `show`. */
export const countdown = <R>(millis: number, show: (left: number) => Effect.Effect<void, never, R>) =>
  Effect.gen(function*() {
    const end = (yield* Clock.currentTimeMillis) + millis
    for (;;) {
      const left = end - (yield* Clock.currentTimeMillis)
      if (left <= 0) return
      yield* show(left)
      yield* Effect.sleep(Duration.millis(Math.min(left, 1000)))
    }
  })

/** The wait a 429 asks for, in milliseconds: its `retry_after` (seconds), at least one second. */
const refusedFor = (error: unknown): number | undefined =>
  Predicate.isTagged(error, "RateLimited")
    ? Math.max(
      1,
      Predicate.hasProperty(error, "retry_after") && typeof error.retry_after === "number"
        ? error.retry_after
        : 1
    ) * 1000
    : undefined

/**
 * Runs `call` until the API stops refusing it for the rate limit, waiting what each 429 asks
 * (shown through `onWait`, interruptible). Any other outcome is returned as it is.
 */
export const untilAdmitted = <A, E, R, R2>(
  call: Effect.Effect<A, E, R>,
  onWait: (millis: number) => Effect.Effect<void, never, R2>
): Effect.Effect<A, E, R | R2> =>
  Effect.gen(function*() {
    for (;;) {
      const result = yield* Effect.either(call)
      if (Either.isRight(result)) return result.right
      const wait = refusedFor(result.left)
      if (wait === undefined) return yield* Effect.fail(result.left)
      yield* onWait(wait)
    }
  })

/** The client with every read waiting out 429s (`untilAdmitted`); orders are placed as they are. */
export const patient = (
  client: BundlesClient.Service,
  onWait: (millis: number) => Effect.Effect<void>
): BundlesClient.Service => {
  const admitted = <A, E>(call: Effect.Effect<A, E>) => untilAdmitted(call, onWait)
  return {
    ...client,
    balance: () => admitted(client.balance()),
    networks: () => admitted(client.networks()),
    bundles: (networkId) => admitted(client.bundles(networkId)),
    getOrder: (orderNumber) => admitted(client.getOrder(orderNumber)),
    listOrders: (params) => admitted(client.listOrders(params))
  }
}
