/**
 * The `upstream` fulfilment provider: each order is bought from an upstream that speaks this
 * same API, through `@databundle/client`, with our order number as its `reference`.
 *
 * The reference makes every repeat a replay: a retry, a lost response or a crash between
 * placement and answer asks the same upstream again and gets the order it already holds.
 * What each upstream may hold is recorded in `upstream_orders` before any request is sent,
 * so the decision to fall over to the next upstream, or to fail and refund at the deadline,
 * is taken only when the previous one certainly did not take the order:
 *
 * - `placing`: a request may have reached it (a timeout, a 5xx, a cut connection). Only that
 *   upstream is asked again until it answers for the order.
 * - `placed`: it holds the order under its own number; that order is followed by polling.
 * - `clear`: it answered in a way that proves it holds no order under our reference (out of
 *   balance, bundle unavailable or unknown: its placement looks the reference up first).
 *
 * A refused connection, a 429 or an open circuit prove only that this request did not
 * arrive; they leave the state as it was. The core's worker calls `deliver` again for
 * every pending order when its next check is due, after a restart too, so all of this
 * resumes from the database.
 */
import { parseRetryAfter, RETRY_AFTER_HEADER } from "@databundle/client"
import type { Order } from "@databundle/contract"
import { Database, Fulfillment } from "@databundle/core"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option, Schema } from "effect"
import * as OutsideAnswers from "./OutsideAnswers.js"
import type * as Seller from "./Seller.js"
import * as UpstreamConfig from "./UpstreamConfig.js"
import { type Connected, Upstreams } from "./Upstreams.js"

const { FulfillmentOutcome, FulfillmentProvider } = Fulfillment
type FulfillmentOutcome = Fulfillment.FulfillmentOutcome

/** The longest wait between two checks of one order. */
const MAX_WAIT = Duration.minutes(5)

/** What an upstream holds of an order (see above). */
const State = Schema.Literal("placing", "placed", "clear", "successful", "failed")

type State = typeof State.Type

/** An order's record at one upstream. */
const Row = Schema.Struct({
  upstream: Schema.String,
  state: State,
  upstream_order_number: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String)
})

type Row = typeof Row.Type

/** What one placement attempt proved. */
type Attempt =
  | { readonly _tag: "Answered"; readonly outcome: FulfillmentOutcome }
  /** The upstream certainly holds no order under our reference. */
  | { readonly _tag: "Absent"; readonly wait: Option.Option<Duration.Duration> }
  /** This request did not arrive; earlier ones may have. */
  | { readonly _tag: "NotSent"; readonly wait: Option.Option<Duration.Duration> }
  /** It may or may not have taken it. */
  | { readonly _tag: "Unknown" }

/** Walks an error's causes for a system error code (`ECONNREFUSED`). */
const errorCode = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && current !== null && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Errors that prove a request never reached the upstream. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/** How an upstream call failed, in the provider's terms. */
export type Failure = Seller.Failure

/** Classifies any failure of a client call. */
export const classify = (error: unknown): Failure => {
  // An answer too large to read: it may have taken the order, so only it is asked again (a replay).
  if (OutsideAnswers.isTooLarge(error)) return { _tag: "Unknown", message: new OutsideAnswers.AnswerTooLarge().message }
  const tagged = error as { _tag?: string; message?: string; retry_after?: number; errors?: Record<string, unknown> }
  const message = typeof tagged?.message === "string" ? tagged.message : String(error)
  switch (tagged?._tag) {
    case "SellerFailure":
      return (error as Seller.SellerFailure).failure
    case "InsufficientBalance":
      return { _tag: "Refused", message: `upstream balance too low: ${message}`, balanceTooLow: true }
    case "BundleUnavailable":
      return { _tag: "Refused", message, balanceTooLow: false }
    case "ValidationError":
      // A reference the upstream already holds for another order is not a refusal.
      return tagged.errors !== undefined && "reference" in tagged.errors
        ? { _tag: "Unknown", message }
        : { _tag: "Refused", message, balanceTooLow: false }
    case "OrderNotFound":
      return { _tag: "NotFound", message }
    case "Unauthorized":
      // Refused before anything was done: our key there is wrong or revoked.
      return { _tag: "NotConnected", message: `the upstream refused our API key: ${message}` }
    case "RateLimited":
      return { _tag: "RateLimited", waitMillis: (tagged.retry_after ?? 1) * 1000, message }
    case "ResponseError": {
      const response = (error as { response: { status: number; headers: Record<string, string> } }).response
      if (response.status === 429) {
        return {
          _tag: "RateLimited",
          waitMillis: parseRetryAfter(response.headers[RETRY_AFTER_HEADER], Date.now()) ?? 1000,
          message: "429 from the upstream"
        }
      }
      return { _tag: "Unknown", message: `status ${response.status} from the upstream` }
    }
    case "RequestError": {
      const code = errorCode(error)
      return code !== undefined && NOT_CONNECTED.has(code)
        ? { _tag: "NotConnected", message: `cannot connect (${code})` }
        : { _tag: "Unknown", message }
    }
    default:
      return { _tag: "Unknown", message }
  }
}

const backoff = (base: Duration.Duration, attempts: number) =>
  Duration.min(Duration.times(base, 2 ** Math.min(Math.max(attempts - 1, 0), 16)), MAX_WAIT)

/** The provider over the configured upstreams. */
export const provider = Layer.effect(
  FulfillmentProvider,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { all, tuning } = yield* Upstreams
    const byName = new Map(all.map((u) => [u.config.name, u]))

    const rows = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (orderNumber) =>
        sql`
          SELECT upstream, state, upstream_order_number, attempts, last_error
          FROM upstream_orders WHERE order_number = ${orderNumber}
        `
    })

    const record = (
      orderNumber: string,
      upstream: string,
      state: State,
      fields: { readonly number?: string | null; readonly error?: string | null; readonly attempt?: boolean }
    ) =>
      sql`
        INSERT INTO upstream_orders (order_number, upstream, state, upstream_order_number, attempts, last_error)
        VALUES (${orderNumber}, ${upstream}, ${state}, ${fields.number ?? null}, ${fields.attempt ? 1 : 0},
          ${fields.error ?? null})
        ON CONFLICT (order_number, upstream) DO UPDATE SET
          state = EXCLUDED.state,
          upstream_order_number = COALESCE(EXCLUDED.upstream_order_number, upstream_orders.upstream_order_number),
          attempts = upstream_orders.attempts + EXCLUDED.attempts,
          last_error = EXCLUDED.last_error,
          updated_at = now()
      `.pipe(Effect.asVoid)

    /** The bundle's upstream ids, by upstream. */
    const mappings = (bundleKey: string) =>
      sql<{ upstream: string; upstream_bundle_id: number; active: boolean }>`
        SELECT ub.upstream, ub.upstream_bundle_id, ub.active
        FROM upstream_bundles ub JOIN bundles b ON b.id = ub.bundle_id
        WHERE b.key = ${bundleKey}
      `

    /** What an upstream's order status means for ours, recorded. */
    const answered = (
      request: Fulfillment.FulfillmentRequest,
      upstream: Connected,
      order: { readonly order_number: string; readonly status: Order.OrderStatus },
      attempts: number
    ) =>
      Effect.gen(function*() {
        const name = upstream.config.name
        switch (order.status) {
          case "successful":
            yield* record(request.orderNumber, name, "successful", { number: order.order_number })
            return FulfillmentOutcome.Delivered()
          case "failed":
            yield* record(request.orderNumber, name, "failed", { number: order.order_number })
            return FulfillmentOutcome.Failed({ reason: `The upstream failed the order (${order.order_number})` })
          case "pending":
            yield* record(request.orderNumber, name, "placed", { number: order.order_number })
            return FulfillmentOutcome.Pending({ checkAfter: backoff(tuning.poll, attempts) })
        }
      })

    /** One POST /orders to one upstream, our order number as its reference. */
    const place = (
      request: Fulfillment.FulfillmentRequest,
      upstream: Connected,
      upstreamBundleId: number,
      before: Row | undefined
    ) =>
      Effect.gen(function*() {
        const name = upstream.config.name
        const now = yield* Clock.currentTimeMillis
        const wait = upstream.circuit.waitMillis(now)
        if (wait > 0) return { _tag: "NotSent", wait: Option.some(Duration.millis(wait)) } satisfies Attempt
        // Recorded before the request leaves: from here on, this upstream may hold the order.
        yield* record(request.orderNumber, name, "placing", { attempt: true, error: before?.last_error ?? null })
        const result = yield* Effect.either(upstream.client.placeOrder({
          bundle_id: upstreamBundleId,
          phone_number: request.phoneNumber,
          reference: request.orderNumber
        }))
        const after = yield* Clock.currentTimeMillis
        if (result._tag === "Right") {
          upstream.circuit.succeeded()
          const outcome = yield* answered(request, upstream, result.right.order, (before?.attempts ?? 0) + 1)
          return { _tag: "Answered", outcome } satisfies Attempt
        }
        const failure = classify(result.left)
        // Earlier requests may still have reached it: only a proof of absence clears a `placing`.
        const unproven: State = before?.state === "placing" ? "placing" : "clear"
        switch (failure._tag) {
          case "Refused":
            upstream.circuit.succeeded()
            yield* record(request.orderNumber, name, "clear", { error: failure.message })
            if (failure.balanceTooLow) {
              yield* Effect.logWarning(`upstream ${name} is out of balance; order ${request.orderNumber} waits`)
            }
            return {
              _tag: "Absent",
              wait: failure.balanceTooLow ? Option.none() : Option.some(MAX_WAIT)
            } satisfies Attempt
          case "RateLimited":
            upstream.circuit.rateLimited(after, failure.waitMillis)
            yield* record(request.orderNumber, name, unproven, { error: failure.message })
            return { _tag: "NotSent", wait: Option.some(Duration.millis(failure.waitMillis)) } satisfies Attempt
          case "NotConnected":
            upstream.circuit.failed(after)
            yield* record(request.orderNumber, name, unproven, { error: failure.message })
            return { _tag: "NotSent", wait: Option.none() } satisfies Attempt
          case "NotFound":
          case "Unknown":
            upstream.circuit.failed(after)
            yield* record(request.orderNumber, name, "placing", { error: failure.message })
            yield* Effect.logWarning(
              `upstream ${name} gave no clear answer for order ${request.orderNumber}: ${failure.message}`
            )
            return { _tag: "Unknown" } satisfies Attempt
        }
      })

    /** Asks the upstream that holds (or may hold) the order where it stands. */
    const follow = (request: Fulfillment.FulfillmentRequest, upstream: Connected, row: Row, pastDeadline: boolean) =>
      Effect.gen(function*() {
        const name = upstream.config.name
        const now = yield* Clock.currentTimeMillis
        const wait = upstream.circuit.waitMillis(now)
        const later = (extra: number = 0) =>
          FulfillmentOutcome.Pending({
            checkAfter: Duration.max(Duration.millis(Math.max(wait, extra)), backoff(tuning.retry, row.attempts))
          })
        if (wait > 0) return Option.some(later())
        // No number yet and before the deadline: placing it again is the lookup (a replay if it holds it).
        if (row.upstream_order_number === null && !pastDeadline) return Option.none()
        const lookup = row.upstream_order_number !== null
          ? upstream.client.getOrder(row.upstream_order_number).pipe(Effect.map(Option.some))
          // No number yet: the reference finds it, if it exists.
          : upstream.client.listOrders({ reference: request.orderNumber }).pipe(
            Effect.map((page) => Option.fromNullable(page.orders[0]))
          )
        const found = yield* Effect.either(lookup)
        const after = yield* Clock.currentTimeMillis
        if (found._tag === "Left") {
          const failure = classify(found.left)
          if (failure._tag === "RateLimited") upstream.circuit.rateLimited(after, failure.waitMillis)
          else upstream.circuit.failed(after)
          yield* record(request.orderNumber, name, row.state, { error: failure.message })
          return Option.some(later(failure._tag === "RateLimited" ? failure.waitMillis : 0))
        }
        upstream.circuit.succeeded()
        if (Option.isSome(found.right)) {
          yield* sql`UPDATE upstream_orders SET attempts = attempts + 1
            WHERE order_number = ${request.orderNumber} AND upstream = ${name}`
          return Option.some(yield* answered(request, upstream, found.right.value, row.attempts + 1))
        }
        if (row.upstream_order_number !== null) {
          yield* Effect.logWarning(`upstream ${name} no longer knows order ${row.upstream_order_number}`)
          return Option.some(later())
        }
        // After the deadline nothing new is bought, so "not there" clears it.
        yield* record(request.orderNumber, name, "clear", { error: "not found by reference after the deadline" })
        return Option.none()
      })

    const deliver = (request: Fulfillment.FulfillmentRequest) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const pastDeadline = now - request.createdAt.getTime() > Duration.toMillis(tuning.deadline)
        const known = yield* rows(request.orderNumber)
        const maps = yield* mappings(request.bundleKey)
        const attempts = known.reduce((sum, row) => sum + row.attempts, 0)

        const settled = known.find((row) => row.state === "successful" || row.state === "failed")
        if (settled !== undefined) {
          return settled.state === "successful"
            ? FulfillmentOutcome.Delivered()
            : FulfillmentOutcome.Failed({ reason: `The upstream failed the order (${settled.upstream_order_number})` })
        }

        const tried = new Set<string>()
        const held = known.find((row) => row.state === "placing" || row.state === "placed")
        if (held !== undefined) {
          const upstream = byName.get(held.upstream)
          if (upstream === undefined) {
            yield* Effect.logWarning(
              `order ${request.orderNumber} may be held by upstream ${held.upstream}, which is no longer configured`
            )
            return FulfillmentOutcome.Pending({ checkAfter: MAX_WAIT })
          }
          const followed = yield* follow(request, upstream, held, pastDeadline)
          if (Option.isSome(followed)) return followed.value
          if (!pastDeadline) {
            const map = maps.find((m) => m.upstream === held.upstream)
            if (map === undefined) return FulfillmentOutcome.Pending({ checkAfter: MAX_WAIT })
            tried.add(held.upstream)
            const replay = yield* place(request, upstream, map.upstream_bundle_id, held)
            if (replay._tag === "Answered") return replay.outcome
            if (replay._tag === "Unknown" || held.state === "placing" && replay._tag === "NotSent") {
              return FulfillmentOutcome.Pending({
                checkAfter: replay._tag === "NotSent"
                  ? Duration.max(Option.getOrElse(replay.wait, () => Duration.zero), backoff(tuning.retry, attempts))
                  : backoff(tuning.retry, attempts)
              })
            }
            // Proven absent there: fall over below.
          }
        }

        if (pastDeadline) {
          return FulfillmentOutcome.Failed({
            reason: `No upstream took the order within ${Duration.format(tuning.deadline)}`
          })
        }

        const candidates = maps
          .filter((m) => m.active && !tried.has(m.upstream))
          .flatMap((m) => {
            const upstream = byName.get(m.upstream)
            if (upstream === undefined) return []
            return Option.match(UpstreamConfig.priorityFor(upstream.config, request.networkSlug), {
              onNone: () => [],
              onSome: (priority) => [{ upstream, bundleId: m.upstream_bundle_id, priority }]
            })
          })
          .sort((a, b) => a.priority - b.priority)
        if (candidates.length === 0 && tried.size === 0) {
          return FulfillmentOutcome.Failed({ reason: "No configured upstream sells this bundle" })
        }

        let wait = Option.none<Duration.Duration>()
        const fresh = yield* rows(request.orderNumber)
        for (const candidate of candidates) {
          const before = fresh.find((row) => row.upstream === candidate.upstream.config.name)
          const attempt = yield* place(request, candidate.upstream, candidate.bundleId, before)
          if (attempt._tag === "Answered") return attempt.outcome
          // It may hold the order: never buy it elsewhere until it answers.
          if (attempt._tag === "Unknown") {
            return FulfillmentOutcome.Pending({ checkAfter: backoff(tuning.retry, attempts + 1) })
          }
          if (attempt._tag === "NotSent" && before?.state === "placing") {
            return FulfillmentOutcome.Pending({
              checkAfter: Duration.max(
                Option.getOrElse(attempt.wait, () => Duration.zero),
                backoff(tuning.retry, attempts + 1)
              )
            })
          }
          if (Option.isSome(attempt.wait)) {
            wait = Option.some(Option.match(wait, {
              onNone: () => attempt.wait.pipe(Option.getOrThrow),
              onSome: (w) => Duration.min(w, Option.getOrThrow(attempt.wait))
            }))
          }
        }
        return FulfillmentOutcome.Pending({
          checkAfter: Duration.max(
            Option.getOrElse(wait, () => Duration.zero),
            backoff(tuning.retry, attempts + 1)
          )
        })
      }).pipe(
        Database.orDie,
        Effect.withSpan("Upstream.deliver")
      )

    return { deliver }
  })
)
