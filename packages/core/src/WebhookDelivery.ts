/**
 * Webhook delivery: the queued events of the outbox (`Webhooks`) delivered at least once,
 * signed, with exponential back-off.
 *
 * Delivery is fair between receivers: at most `PER_ENDPOINT` attempts are in flight to one
 * URL (counted in the database, so across every process), at most `MAX_IN_FLIGHT` per process,
 * and each attempt has `ATTEMPT_DEADLINE` to answer. A receiver that never answers holds two
 * slots, never the queue. The HttpClient in context is the transport: the server provides one
 * that never follows redirects and refuses private addresses.
 */
import { Webhook } from "@databundle/contract"
import { HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Ref, Schema } from "effect"
import { orDie } from "./Database.js"
import { Settings } from "./Settings.js"
import * as UrlCredentials from "./UrlCredentials.js"
import * as Worker from "./Worker.js"

/** The `User-Agent` of every delivery (and of the operator's alerts, which are shaped alike). */
export const USER_AGENT = "databundle-webhooks/1"

/** Deliveries are retried for at least this long before an event is abandoned. */
export const RETRY_WINDOW = Duration.hours(25)

/** The wait before attempt `n + 1`: 10 s doubling per attempt, at most an hour. */
export const backoff = (attempts: number): Duration.Duration =>
  Duration.seconds(Math.min(10 * 2 ** Math.max(0, attempts - 1), 3600))

/** Attempts in flight to one webhook URL at a time, across every server process. */
export const PER_ENDPOINT = 2

/** Attempts in flight at a time in one process. */
export const MAX_IN_FLIGHT = 32

/** How long a receiver has to answer one attempt (connection included) before it counts as failed. */
export const ATTEMPT_DEADLINE = Duration.seconds(5)

/**
 * How long a claimed event stays another process's to leave alone; well past the deadline,
 * so only a process that died mid-attempt lets its lease run out.
 */
export const LEASE = Duration.seconds(60)

/** An event claimed for an attempt, with where it goes and the secret it is signed with. */
const DueEvent = Schema.Struct({
  id: Webhook.EventId,
  type: Webhook.WebhookEventType,
  body: Schema.String,
  attempts: Schema.Number,
  queued_at: Schema.DateFromSelf,
  webhook_url: Schema.NullOr(Schema.String),
  webhook_secret: Schema.NullOr(Schema.String)
})

type DueEvent = typeof DueEvent.Type

/** Why an attempt failed, in a line fit for `last_error` and the log. */
const reason = (error: unknown): string =>
  (error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)).slice(0, 500)

/** Delivers queued events; several processes can run it against one database. */
export class WebhookDelivery extends Effect.Service<WebhookDelivery>()("core/WebhookDelivery", {
  dependencies: [Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* Settings
    // A redirect is an answer other than 2xx: a failed attempt, never followed here.
    const client = HttpClient.filterStatusOk(yield* HttpClient.HttpClient)

    /**
     * Leases up to `limit` due events, at most `PER_ENDPOINT` in flight per URL counting the
     * leases other processes hold, first slots first so every receiver gets its turn. Two
     * processes claiming at once both pick the same rows; the re-checked lease condition lets
     * only the first one have each.
     */
    const claim = SqlSchema.findAll({
      Request: Schema.Number,
      Result: DueEvent,
      execute: (limit) =>
        sql`
        WITH busy AS (
          SELECT a.webhook_url, count(*) AS n
          FROM webhook_events e JOIN webhook_targets a ON a.id = e.account_id
          -- (A leased event has its next attempt set: the due index holds it.)
          WHERE e.next_attempt_at IS NOT NULL AND e.delivered_at IS NULL AND e.abandoned_at IS NULL
            AND e.leased_until > now()
          GROUP BY a.webhook_url
        ), ranked AS (
          SELECT e.id, e.next_attempt_at,
            coalesce(b.n, 0) + row_number() OVER (PARTITION BY a.webhook_url ORDER BY e.next_attempt_at, e.id) AS slot
          FROM webhook_events e
          JOIN webhook_targets a ON a.id = e.account_id
          LEFT JOIN busy b ON b.webhook_url = a.webhook_url
          WHERE e.delivered_at IS NULL AND e.abandoned_at IS NULL AND e.next_attempt_at <= now()
            AND (e.leased_until IS NULL OR e.leased_until <= now())
        ), chosen AS (
          SELECT id FROM ranked WHERE slot <= ${PER_ENDPOINT} ORDER BY slot, next_attempt_at, id LIMIT ${limit}
        )
        UPDATE webhook_events e
        SET leased_until = now() + make_interval(secs => ${Duration.toSeconds(LEASE)}), attempts = e.attempts + 1,
          url = a.webhook_url, last_attempt_at = now()
        FROM webhook_targets a, chosen c
        WHERE e.id = c.id AND a.id = e.account_id AND e.delivered_at IS NULL AND e.abandoned_at IS NULL
          AND (e.leased_until IS NULL OR e.leased_until <= now())
        RETURNING e.id, e.type, e.body, e.attempts, e.queued_at, a.webhook_url, a.webhook_secret
      `
    })

    const deliver = (event: DueEvent) =>
      Effect.gen(function*() {
        if (event.webhook_url === null || event.webhook_secret === null) {
          return yield* sql`
            UPDATE webhook_events SET abandoned_at = now(), leased_until = NULL, last_error = 'no webhook URL'
            WHERE id = ${event.id}
          `
        }
        const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const signed = yield* Effect.promise(() =>
          Webhook.deliveryHeaders({
            id: event.id,
            type: event.type,
            body: event.body,
            secret: event.webhook_secret!,
            timestamp
          })
        )
        // Credentials in the URL go as Basic auth, so no error, log or trace ever holds them.
        const target = UrlCredentials.split(event.webhook_url)
        const sent = yield* client.execute(
          HttpClientRequest.post(target.url).pipe(
            HttpClientRequest.setHeaders({
              ...signed,
              ...(target.authorization === undefined ? {} : { authorization: target.authorization }),
              "user-agent": USER_AGENT
            }),
            HttpClientRequest.bodyText(event.body, "application/json")
          )
        ).pipe(
          Effect.timeoutFail({
            duration: ATTEMPT_DEADLINE,
            onTimeout: () => new Error(`no answer within ${Duration.format(ATTEMPT_DEADLINE)}`)
          }),
          Effect.map((response) => response.status),
          Effect.scoped,
          Effect.either
        )
        if (sent._tag === "Right") {
          return yield* sql`
            UPDATE webhook_events SET delivered_at = now(), leased_until = NULL, last_error = NULL,
              last_status = ${sent.right}
            WHERE id = ${event.id}
          `
        }
        // The receiver's status when it answered (a non-2xx, a redirect); none when it never did.
        const status = HttpClientError.isHttpClientError(sent.left) && sent.left._tag === "ResponseError"
          ? sent.left.response.status
          : null
        const error = reason(sent.left)
        yield* Effect.logInfo("webhook attempt failed").pipe(
          Effect.annotateLogs({ event: event.id, attempt: event.attempts, error })
        )
        const expired = (yield* Clock.currentTimeMillis) - event.queued_at.getTime() > Duration.toMillis(RETRY_WINDOW)
        return yield* expired
          ? sql`
            UPDATE webhook_events SET abandoned_at = now(), leased_until = NULL, last_error = ${error},
              last_status = ${status}
            WHERE id = ${event.id}
          `
          : sql`
            UPDATE webhook_events
            SET next_attempt_at = now() + make_interval(secs => ${Duration.toSeconds(backoff(event.attempts))}),
                leased_until = NULL, last_error = ${error}, last_status = ${status}
            WHERE id = ${event.id}
          `
      }).pipe(orDie, Effect.withSpan("WebhookDelivery.deliver", { attributes: { event: event.id } }))

    /**
     * Delivers every due event, round after round while some are left (a URL takes
     * `PER_ENDPOINT` per round); returns how many attempts were made.
     */
    const deliverDue = Effect.gen(function*() {
      let attempted = 0
      while (true) {
        const events = yield* orDie(claim(MAX_IN_FLIGHT))
        if (events.length === 0) return attempted
        attempted += events.length
        yield* Effect.forEach(events, deliver, { concurrency: "unbounded", discard: true })
      }
    }).pipe(Effect.withSpan("WebhookDelivery.deliverDue"))

    /**
     * Runs forever: every poll interval, claims as many due events as the process has free
     * slots and starts each attempt without waiting for the others, so a receiver that
     * never answers delays nobody else. Failures are logged, not fatal.
     */
    const run = Effect.gen(function*() {
      const inFlight = yield* Ref.make(0)
      const tick = Effect.gen(function*() {
        const free = MAX_IN_FLIGHT - (yield* Ref.get(inFlight))
        if (free <= 0) return
        const events = yield* orDie(claim(free))
        yield* Ref.update(inFlight, (n) => n + events.length)
        for (const event of events) {
          // A child of this fiber: stopping the worker stops its attempts; their leases run out.
          yield* Effect.fork(
            deliver(event).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning("webhook delivery failed", cause)),
              Effect.ensuring(Ref.update(inFlight, (n) => n - 1))
            )
          )
        }
      })
      return yield* Worker.supervise("webhook worker", tick, { interval: settings.pollInterval })
    })

    return { deliverDue, run }
  })
}) {}
