/**
 * The upstreams' signed webhooks, received at `POST /upstream-webhooks/{upstream}`: an
 * upstream of this same API sends its account's events there (set our URL as the webhook URL
 * of our account there, and its secret in our upstream's configuration).
 *
 * An event is a nudge, never a verdict: an `order.successful` or `order.failed` whose
 * reference is one of our pending orders held by that upstream makes the order due at once,
 * and the fulfilment worker asks the upstream for it and settles it as polling would, only
 * sooner. So a forged or stale event can settle nothing, and a replay (recognised by its id)
 * does nothing at all. A delivery without a valid signature, or older than five minutes, is
 * refused with a 401 and changes nothing.
 */
import { ApiError, Webhook } from "@databundle/contract"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Redacted, Schema } from "effect"
import { Upstreams } from "./Upstreams.js"

/** The path of an upstream's webhooks. */
export const PREFIX = "/upstream-webhooks"

/** The route's template. */
export const path = `${PREFIX}/:upstream`

/** How far a delivery's signed time may be from ours. */
const TOLERANCE_SECONDS = 5 * 60

/** What of an event matters here; the rest of its shape is the upstream's business. */
const Received = Schema.Struct({
  id: Schema.String.pipe(Schema.pattern(/^evt_[0-9A-Za-z]{1,64}$/)),
  type: Schema.String.pipe(Schema.maxLength(64)),
  data: Schema.optional(Schema.Struct({ reference: Schema.optional(Schema.NullOr(Schema.String)) }))
})

const decodeReceived = Schema.decodeUnknownOption(Received, { onExcessProperty: "ignore" })

const unauthorized = (message: string) => new ApiError.Unauthorized({ message })

/** Receives one delivery from a configured upstream. */
const receive = (name: string) =>
  Effect.gen(function*() {
    const { all } = yield* Upstreams
    const sql = yield* SqlClient.SqlClient
    const request = yield* HttpServerRequest.HttpServerRequest
    const upstream = all.find((u) => u.config.name === name)
    if (upstream === undefined || Option.isNone(upstream.config.webhookSecret)) {
      return yield* new ApiError.NotFound({ message: `No upstream ${name} receives webhooks here` })
    }
    const body = yield* request.text.pipe(Effect.orDie)
    const header = request.headers[Webhook.SIGNATURE_HEADER]
    const parsed = header === undefined ? undefined : Webhook.parseSignatureHeader(header)
    if (parsed === undefined) return yield* unauthorized(`Missing or malformed ${Webhook.SIGNATURE_HEADER} header`)
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    if (Math.abs(now - parsed.timestamp) > TOLERANCE_SECONDS) {
      return yield* unauthorized("The signature's time is more than five minutes from ours")
    }
    const secret = Redacted.value(upstream.config.webhookSecret.value)
    if (!(yield* Effect.promise(() => Webhook.verifySignature(secret, parsed, body)))) {
      return yield* unauthorized("The signature does not match the body")
    }
    const event = decodeReceived(JSON.parse(body))
    if (Option.isNone(event)) {
      return yield* ApiError.ValidationError.field("id", "must be the event's evt_ id, with its type")
    }
    const { data, id, type } = event.value
    const reference = data?.reference ?? null
    const fresh = yield* sql<{ event_id: string }>`
      INSERT INTO upstream_webhook_events (upstream, event_id, type, order_number)
      VALUES (${name}, ${id}, ${type}, ${reference})
      ON CONFLICT (upstream, event_id) DO NOTHING
      RETURNING event_id
    `.pipe(Effect.orDie)
    if (fresh.length === 0) {
      return HttpServerResponse.unsafeJson({ success: true, message: `Event ${id} was already received` })
    }
    let nudged = 0
    if ((type === "order.successful" || type === "order.failed") && reference !== null) {
      // Only an order this upstream holds (or may hold), still pending, live.
      const rows = yield* sql<{ order_number: string }>`
        UPDATE orders o SET next_check_at = now()
        WHERE o.order_number = ${reference} AND o.status = 'pending' AND o.mode = 'live'
          AND EXISTS (
            SELECT 1 FROM upstream_orders u
            WHERE u.order_number = o.order_number AND u.upstream = ${name} AND u.state IN ('placing', 'placed')
          )
        RETURNING o.order_number
      `.pipe(Effect.orDie)
      nudged = rows.length
    }
    yield* Effect.logInfo(`upstream ${name} sent ${type} ${id}`).pipe(
      Effect.annotateLogs({ event: "upstream.webhook", upstream: name, order_number: reference, nudged })
    )
    return HttpServerResponse.unsafeJson({
      success: true,
      message: nudged > 0 ? `Order ${reference} will be checked now` : `Event ${id} received`
    })
  })

/** `POST /callbacks/upstreams/:upstream`'s handler. */
export const receiver = Effect.map(
  Effect.context<Upstreams | SqlClient.SqlClient>(),
  (context) =>
    HttpRouter.params.pipe(
      Effect.flatMap((params) => receive(params.upstream ?? "")),
      Effect.provide(context)
    )
)
