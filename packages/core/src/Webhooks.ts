/**
 * Webhooks: events written to an outbox in the same transaction as the change they
 * describe, then delivered at least once, signed, with exponential back-off.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Schedule } from "effect"
import { createHmac } from "node:crypto"
import { orDie } from "./Database.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"

/** The events an account can receive. */
export type WebhookEventType = "order.successful" | "order.failed" | "wallet.funded" | "wallet.debited"

/** The header that carries the signature. */
export const SIGNATURE_HEADER = "x-webhook-signature"

/** `hex(HMAC-SHA256(secret, t + "." + body))`, the `v1` of the signature header. */
export const sign = (secret: string, timestamp: number, body: string): string =>
  createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")

/** The signature header's value: `t=<unix seconds>,v1=<hex>`. */
export const signatureHeader = (secret: string, timestamp: number, body: string): string =>
  `t=${timestamp},v1=${sign(secret, timestamp, body)}`

/** Deliveries are retried for at least this long before an event is abandoned. */
export const RETRY_WINDOW = Duration.hours(25)

/** The wait before attempt `n + 1`: 10 s doubling per attempt, at most an hour. */
export const backoff = (attempts: number): Duration.Duration =>
  Duration.seconds(Math.min(10 * 2 ** Math.max(0, attempts - 1), 3600))

/** Writes events to the outbox. */
export class Webhooks extends Effect.Service<Webhooks>()("core/Webhooks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Queues an event for the account, if it has a webhook URL. Call it inside the
     * transaction that makes the change, so the event exists exactly when the change does.
     */
    const enqueue = Effect.fn("Webhooks.enqueue")(function*(
      accountId: number,
      type: WebhookEventType,
      data: Record<string, unknown>
    ) {
      const id = Tokens.eventId()
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const body = JSON.stringify({ id, type, created_at: createdAt, data })
      yield* orDie(sql`
        INSERT INTO webhook_events (id, account_id, type, body)
        SELECT ${id}, id, ${type}, ${body} FROM accounts WHERE id = ${accountId} AND webhook_url IS NOT NULL
      `)
    })

    return { enqueue }
  })
}) {}

interface DueEvent {
  readonly id: string
  readonly type: WebhookEventType
  readonly body: string
  readonly attempts: number
  readonly created_at: Date
  readonly webhook_url: string | null
  readonly webhook_secret: string | null
}

/** Delivers queued events; several processes can run it against one database. */
export class WebhookDelivery extends Effect.Service<WebhookDelivery>()("core/WebhookDelivery", {
  dependencies: [Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* Settings
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.filterStatusOk,
      HttpClient.transformResponse(Effect.timeout(Duration.seconds(10)))
    )

    // Claiming pushes next_attempt_at a lease ahead, so no other process picks the event up
    // while this one is delivering it; SKIP LOCKED lets processes claim disjoint batches.
    const claim = sql<DueEvent>`
      UPDATE webhook_events e
      SET next_attempt_at = now() + interval '60 seconds', attempts = e.attempts + 1
      FROM accounts a
      WHERE a.id = e.account_id AND e.id IN (
        SELECT id FROM webhook_events
        WHERE delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= now()
        ORDER BY next_attempt_at
        LIMIT 20
        FOR UPDATE SKIP LOCKED
      )
      RETURNING e.id, e.type, e.body, e.attempts, e.created_at, a.webhook_url, a.webhook_secret
    `

    const deliver = (event: DueEvent) =>
      Effect.gen(function*() {
        if (event.webhook_url === null || event.webhook_secret === null) {
          return yield* sql`
            UPDATE webhook_events SET abandoned_at = now(), last_error = 'no webhook URL' WHERE id = ${event.id}
          `
        }
        const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const sent = yield* client.execute(
          HttpClientRequest.post(event.webhook_url).pipe(
            HttpClientRequest.setHeaders({
              [SIGNATURE_HEADER]: signatureHeader(event.webhook_secret, timestamp, event.body),
              "x-webhook-id": event.id,
              "x-webhook-event": event.type,
              "user-agent": "databundle-webhooks/1"
            }),
            HttpClientRequest.bodyText(event.body, "application/json")
          )
        ).pipe(Effect.scoped, Effect.either)
        if (sent._tag === "Right") {
          return yield* sql`UPDATE webhook_events SET delivered_at = now(), last_error = NULL WHERE id = ${event.id}`
        }
        const error = String(sent.left.message ?? sent.left).slice(0, 500)
        const expired = (yield* Clock.currentTimeMillis) - event.created_at.getTime() > Duration.toMillis(RETRY_WINDOW)
        return yield* expired
          ? sql`UPDATE webhook_events SET abandoned_at = now(), last_error = ${error} WHERE id = ${event.id}`
          : sql`
            UPDATE webhook_events
            SET next_attempt_at = now() + make_interval(secs => ${Duration.toSeconds(backoff(event.attempts))}),
                last_error = ${error}
            WHERE id = ${event.id}
          `
      })

    /** Delivers every due event once; returns how many were attempted. */
    const deliverDue = Effect.gen(function*() {
      const events = yield* claim
      yield* Effect.forEach(events, deliver, { concurrency: 5, discard: true })
      return events.length
    }).pipe(orDie, Effect.withSpan("WebhookDelivery.deliverDue"))

    /** Runs forever: delivers due events every poll interval; failures are logged, not fatal. */
    const run = deliverDue.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("webhook delivery failed", cause)),
      Effect.repeat(Schedule.spaced(settings.pollInterval))
    )

    return { deliverDue, run }
  })
}) {}
