/**
 * Keeping a bulk run under the rate limit, as the client's pacer (`@databundle/client/Bulk`)
 * reckons it from the `X-RateLimit-*` headers of every POST /orders response: the next order
 * waits for the window instead of being refused, and a 429 all the same (another client on
 * the account) waits its `Retry-After` and tries again, since a refused request did nothing.
 * Here, in effects: every wait is shown and can be interrupted.
 */
import type { BundlesClient } from "@databundle/client"
import * as Pacing from "@databundle/client/Pacing"
import { HttpClient } from "@effect/platform"
import { Clock, Duration, Effect, Either, Predicate } from "effect"

/** What the pacer knows (`@databundle/client/Bulk`'s), and the HttpClient wrapper that teaches it. */
export interface Pacer extends Pacing.Pacer {
  /** Wraps the HttpClient under the typed client, to read the headers of every POST /orders attempt. */
  readonly observe: (client: HttpClient.HttpClient) => HttpClient.HttpClient
}

/** A pacer with nothing learnt yet. */
export const make = (): Pacer => {
  const pacer = Pacing.makePacer()
  return {
    ...pacer,
    observe: (client) =>
      HttpClient.tap(client, (response) =>
        Clock.currentTimeMillis.pipe(Effect.map((now) => {
          if (response.request.method !== "POST" || !response.request.url.endsWith("/orders")) return
          pacer.saw((name) => response.headers[name], now)
        })))
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

/** The wait a 429 asks for, in milliseconds; undefined for any other failure. */
const refusedFor = (error: unknown): number | undefined =>
  Predicate.isTagged(error, "RateLimited")
    ? Pacing.retryAfterMillis(Predicate.hasProperty(error, "retry_after") ? error.retry_after : undefined)
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
