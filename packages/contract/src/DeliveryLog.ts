/**
 * The webhook delivery log as an account holder sees it: one delivery per event sent to the
 * account's URL, with its attempts, the last answer and the next retry. Its fields are those of
 * the public API's delivery view, so both read alike.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Failed } from "./ApiError.js"
import { integerParam } from "./Identifier.js"
import { EventId } from "./Webhook.js"

/** The business event types a test event may take. */
export const EVENT_TYPES = ["order.successful", "order.failed", "wallet.funded", "wallet.debited"] as const

/** An event type, as a schema. */
export const EventType = Schema.Literal(...EVENT_TYPES).annotations({
  message: () => `must be one of ${EVENT_TYPES.join(", ")}`
})

/**
 * `pending`: queued, not yet attempted; `retrying`: attempted, failed, due again at
 * `next_attempt_at`; `delivered`: a 2xx answer; `abandoned`: still failing when the retry
 * window closed.
 */
export const DeliveryState = Schema.Literal("pending", "retrying", "delivered", "abandoned").annotations({
  message: () => "must be one of pending, retrying, delivered, abandoned"
})

/** The type of `DeliveryState`. */
export type DeliveryState = typeof DeliveryState.Type

/** A delivery: its id is its event's id. */
export const Delivery = Schema.Struct({
  id: EventId,
  event_type: Schema.String,
  url: Schema.NullOr(Schema.String).annotations({ description: "The URL of the last attempt, null before the first" }),
  state: DeliveryState,
  attempts: Schema.Int,
  last_status: Schema.NullOr(Schema.Int).annotations({
    description: "HTTP status of the last answer; null when there was none (refused, unreachable, timed out)"
  }),
  last_error: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.Date),
  next_attempt_at: Schema.NullOr(Schema.Date).annotations({ description: "Null once delivered or abandoned" }),
  delivered_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date.annotations({ description: "When the event happened" })
}).annotations({ identifier: "Delivery" })

/** The type of `Delivery`. */
export type Delivery = typeof Delivery.Type

/** The largest page of the delivery log. */
export const MAX_PER_PAGE = 100

/** Query parameters of the delivery log. */
export const ListDeliveriesParams = Schema.Struct({
  state: Schema.optional(DeliveryState),
  type: Schema.optional(EventType),
  page: Schema.optional(integerParam(1, 1_000_000)),
  per_page: Schema.optional(integerParam(1, MAX_PER_PAGE))
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `ListDeliveriesParams`. */
export type ListDeliveriesParams = typeof ListDeliveriesParams.Type

/** The body of POST /dashboard/v1/webhook/test: which kind of event to imitate. */
export const TestEventPayload = Schema.Struct({ type: EventType }).annotations({ parseOptions: { errors: "all" } })

/** 404: no delivery with that id for this account. */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()(
  "DeliveryNotFound",
  { success: Failed, message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}
