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
import { BundlesClient } from "@databundle/client"
import { Money, type Order, Webhook } from "@databundle/contract"
import { Fulfillment, Tokens } from "@databundle/core"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import * as OutsideAnswers from "./OutsideAnswers.js"
import * as UpstreamConfig from "./UpstreamConfig.js"

const { FulfillmentOutcome, FulfillmentProvider } = Fulfillment
type FulfillmentOutcome = Fulfillment.FulfillmentOutcome

/** The longest wait between two checks of one order. */
const MAX_WAIT = Duration.minutes(5)

type State = "placing" | "placed" | "clear" | "successful" | "failed"

interface Row {
  readonly upstream: string
  readonly state: State
  readonly upstream_order_number: string | null
  readonly attempts: number
  readonly last_error: string | null
}

/** What one placement attempt proved. */
type Attempt =
  | { readonly _tag: "Answered"; readonly outcome: FulfillmentOutcome }
  /** The upstream certainly holds no order under our reference. */
  | { readonly _tag: "Absent"; readonly wait: Option.Option<Duration.Duration> }
  /** This request did not arrive; earlier ones may have. */
  | { readonly _tag: "NotSent"; readonly wait: Option.Option<Duration.Duration> }
  /** It may or may not have taken it. */
  | { readonly _tag: "Unknown" }

/** One upstream with its client and its in-process circuit. */
export interface Connected {
  readonly config: UpstreamConfig.Upstream
  readonly client: BundlesClient.Service
  readonly circuit: Circuit
}

/** A circuit breaker: after `failures` consecutive failures, nothing is sent for the cooldown. */
export class Circuit {
  private failures = 0
  private openUntil = 0
  private blockedUntil = 0
  constructor(private readonly threshold: number, private readonly cooldownMillis: number) {}
  /** Milliseconds until a request may be sent (0 when it may be now). */
  waitMillis(now: number): number {
    return Math.max(0, this.openUntil - now, this.blockedUntil - now)
  }
  /** Whether the circuit is open now. */
  isOpen(now: number): boolean {
    return this.openUntil > now
  }
  succeeded(): void {
    this.failures = 0
    this.openUntil = 0
  }
  failed(now: number): void {
    this.failures++
    if (this.failures >= this.threshold) this.openUntil = now + this.cooldownMillis
  }
  /** A 429: nothing more until `Retry-After` has passed. */
  rateLimited(now: number, waitMillis: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, now + waitMillis)
  }
}

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
export type Failure =
  | { readonly _tag: "NotConnected"; readonly message: string }
  | { readonly _tag: "RateLimited"; readonly waitMillis: number; readonly message: string }
  /** An answer that says it has no order under the reference (for a placement). */
  | { readonly _tag: "Refused"; readonly message: string; readonly balanceTooLow: boolean }
  | { readonly _tag: "NotFound"; readonly message: string }
  | { readonly _tag: "Unknown"; readonly message: string }

const retryAfterHeader = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** Classifies any failure of a client call. */
export const classify = (error: unknown): Failure => {
  // An answer too large to read: it may have taken the order, so only it is asked again (a replay).
  if (OutsideAnswers.isTooLarge(error)) return { _tag: "Unknown", message: new OutsideAnswers.AnswerTooLarge().message }
  const tagged = error as { _tag?: string; message?: string; retry_after?: number; errors?: Record<string, unknown> }
  const message = typeof tagged?.message === "string" ? tagged.message : String(error)
  switch (tagged?._tag) {
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
          waitMillis: retryAfterHeader(response.headers["retry-after"]) ?? 1000,
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

/** Connects to the configured upstreams (no request is made yet). */
export const connect = (
  upstreams: ReadonlyArray<UpstreamConfig.Upstream>,
  tuning: UpstreamConfig.Tuning
) =>
  Effect.forEach(upstreams, (config) =>
    BundlesClient.make({
      apiKey: config.apiKey,
      baseUrl: config.url,
      timeout: Duration.toMillis(tuning.timeout),
      // Every retry is the worker's, recorded in the database; one attempt per call here.
      retry: false,
      autoReference: false,
      userAgent: "bundles-server-upstream"
    }).pipe(
      Effect.map((client): Connected => ({
        config,
        client,
        circuit: new Circuit(tuning.breakerFailures, Duration.toMillis(tuning.breakerCooldown))
      })),
      Effect.mapError((error) => new Error(`upstream "${config.name}": ${error.message}`))
    )).pipe(Effect.provide(OutsideAnswers.httpClient))

/** The upstreams the server was configured with, connected. */
export class Upstreams extends Effect.Tag("server/Upstreams")<Upstreams, {
  readonly all: ReadonlyArray<Connected>
  readonly tuning: UpstreamConfig.Tuning
  /** Where operator alerts go (`BUNDLES_OPERATOR_WEBHOOK_URL`), when set. */
  readonly operator: Option.Option<UpstreamConfig.OperatorWebhook>
}>() {
  /** From the environment; empty unless `BUNDLES_PROVIDER=upstream`. */
  static readonly layer = Layer.effect(
    Upstreams,
    Effect.gen(function*() {
      const configured = yield* UpstreamConfig.configured
      const tuning = yield* UpstreamConfig.tuning
      const operator = yield* UpstreamConfig.operatorWebhook
      return { all: yield* connect(configured, tuning), tuning, operator }
    })
  )
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

    const rows = (orderNumber: string) =>
      sql<Row>`
        SELECT upstream, state, upstream_order_number, attempts, last_error
        FROM upstream_orders WHERE order_number = ${orderNumber}
      `

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
        Effect.catchTag("SqlError", (error) => Effect.die(error)),
        Effect.withSpan("Upstream.deliver")
      )

    return { deliver }
  })
)

/**
 * The body of an operator alert (`upstream.balance_low`, `payment.reversed`): signed and shaped
 * like an account's webhook event; amounts in `data` are cedis.
 */
export const operatorEvent = (
  type: "upstream.balance_low" | "payment.reversed",
  data: Readonly<Record<string, string | number | null>>,
  now: number
) => JSON.stringify({ id: Tokens.eventId(), type, created_at: new Date(now).toISOString(), livemode: true, data })

/** How many times an operator alert is tried, a few seconds apart, before it is given up (and logged). */
const OPERATOR_ATTEMPTS = 5

/** Posts an operator alert to `BUNDLES_OPERATOR_WEBHOOK_URL`, signed with its secret; retried, never failing. */
export const sendOperatorAlert = (target: UpstreamConfig.OperatorWebhook, body: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const { id, type } = JSON.parse(body) as { id: string; type: string }
    const secret = Redacted.value(target.secret)
    const attempt = Effect.gen(function*() {
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const [signature, standard] = yield* Effect.promise(() =>
        Promise.all([
          Webhook.signatureHeader(secret, timestamp, body),
          Webhook.standardSignature(secret, id, timestamp, body)
        ])
      )
      const response = yield* client.execute(
        HttpClientRequest.post(target.url).pipe(
          HttpClientRequest.setHeaders({
            [Webhook.SIGNATURE_HEADER]: signature,
            [Webhook.ID_HEADER]: id,
            [Webhook.EVENT_HEADER]: type,
            [Webhook.STANDARD_ID_HEADER]: id,
            [Webhook.STANDARD_TIMESTAMP_HEADER]: String(timestamp),
            [Webhook.STANDARD_SIGNATURE_HEADER]: standard,
            "user-agent": "databundle-webhooks/1"
          }),
          HttpClientRequest.bodyText(body, "application/json")
        )
      ).pipe(Effect.scoped, Effect.timeout("10 seconds"))
      if (response.status < 200 || response.status >= 300) {
        return yield* Effect.fail(new Error(`the operator webhook answered ${response.status}`))
      }
    })
    yield* attempt.pipe(
      Effect.retry({ times: OPERATOR_ATTEMPTS - 1, schedule: Schedule.exponential("2 seconds") }),
      Effect.catchAllCause((cause) =>
        Effect.logWarning(`operator webhook ${type} ${id} not delivered`, Cause.pretty(cause)).pipe(
          Effect.annotateLogs({ event: "operator_webhook.failed" })
        )
      )
    )
  })

/**
 * Watches every upstream's balance (`BUNDLES_UPSTREAM_BALANCE_SECONDS`) that has a
 * `low_balance`, and records it in `upstream_balances` (the metrics read it there). When it
 * drops below the threshold, once per crossing among all the server's processes: a warning log
 * line (`event: upstream.balance_low`) and, with `BUNDLES_OPERATOR_WEBHOOK_URL`, a signed
 * `upstream.balance_low` event to the operator. While it stays low, the log line is repeated
 * every 15 minutes by the process that sees it; a top-up logs a notice and re-arms the alert.
 */
export const balanceWatch = Effect.gen(function*() {
  const { all, operator, tuning } = yield* Upstreams
  const sql = yield* SqlClient.SqlClient
  const watched = all.filter((u) => Option.isSome(u.config.lowBalance))
  if (watched.length === 0) return
  const lastWarned = new Map<string, number>()

  /** Records a reading; whether it crossed the threshold (down or up) with this reading. */
  const record = (name: string, balance: bigint, threshold: bigint, low: boolean) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`
        INSERT INTO upstream_balances (upstream, balance, threshold, low)
        VALUES (${name}, ${balance}, ${threshold}, false)
        ON CONFLICT (upstream) DO NOTHING
      `
      const [before] = yield* sql<{ low: boolean }>`
        SELECT low FROM upstream_balances WHERE upstream = ${name} FOR UPDATE
      `
      const crossed = before!.low !== low
      yield* sql`
        UPDATE upstream_balances SET balance = ${balance}, threshold = ${threshold}, low = ${low},
          checked_at = now(), changed_at = ${crossed ? sql`now()` : sql`changed_at`}
        WHERE upstream = ${name}
      `
      return crossed
    }))

  const check = Effect.forEach(watched, (upstream) =>
    Effect.gen(function*() {
      const name = upstream.config.name
      const threshold = Option.getOrThrow(upstream.config.lowBalance)
      const balance = yield* Effect.either(upstream.client.balance())
      if (balance._tag === "Left") return
      const now = yield* Clock.currentTimeMillis
      const main = balance.right.main
      const low = main < threshold
      const crossed = yield* record(name, main, threshold, low).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("upstream balance could not be recorded", Cause.pretty(cause)), false)
        )
      )
      if (low) {
        const last = lastWarned.get(name)
        if (crossed || last === undefined || now - last > 15 * 60_000) {
          lastWarned.set(name, now)
          yield* Effect.logWarning(
            `upstream balance low: ${name} holds ${Money.formatGhs(main)}, below ${
              Money.formatGhs(threshold)
            }; top it up before orders wait`
          ).pipe(
            Effect.annotateLogs({ event: "upstream.balance_low", upstream: name, balance: Money.formatCedis(main) })
          )
        }
        if (crossed && Option.isSome(operator)) {
          yield* Effect.forkDaemon(
            sendOperatorAlert(
              operator.value,
              operatorEvent("upstream.balance_low", {
                upstream: name,
                balance: Number(Money.formatCedis(main)),
                threshold: Number(Money.formatCedis(threshold))
              }, now)
            ).pipe(Effect.provide(OutsideAnswers.httpClient))
          )
        }
      } else if (lastWarned.delete(name) || crossed) {
        yield* Effect.logInfo(`upstream balance restored: ${name} holds ${Money.formatGhs(main)}`)
      }
    }), { discard: true })
  yield* check.pipe(Effect.repeat(Schedule.spaced(tuning.balanceEvery)))
})
