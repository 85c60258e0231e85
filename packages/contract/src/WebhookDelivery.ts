/**
 * Deliveries of the account's events to its webhook URL (an extension): one per event, with
 * its attempts, the last answer and the next retry; and the account's webhook settings.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { extensions, Failed } from "./ApiError.js"
import { FEED, params } from "./Page.js"
import { EventId, WebhookEventType } from "./Webhook.js"

/**
 * `pending`: queued, not yet attempted (or being attempted); `retrying`: attempted, failed, due
 * again at `next_attempt_at`; `delivered`: a 2xx answer; `abandoned`: still failing when the
 * retry window closed, or no webhook URL when its turn came.
 */
export const DeliveryState = Schema.Literal("pending", "retrying", "delivered", "abandoned").annotations({
  message: () => "must be one of pending, retrying, delivered, abandoned"
})

/** The type of `DeliveryState`. */
export type DeliveryState = typeof DeliveryState.Type

/** A delivery: its id is its event's id. */
export const Delivery = Schema.Struct({
  id: EventId,
  event_type: WebhookEventType,
  url: Schema.NullOr(Schema.String).annotations({ description: "The URL of the last attempt, null before the first" }),
  state: DeliveryState,
  attempts: Schema.Int.annotations({ description: "Attempts since the event was queued or last resent" }),
  last_status: Schema.NullOr(Schema.Int).annotations({
    description: "HTTP status of the last answer; null when there was none (refused, unreachable, timed out)"
  }),
  last_error: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.Date),
  next_attempt_at: Schema.NullOr(Schema.Date).annotations({ description: "Null once delivered or abandoned" }),
  delivered_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date.annotations({ description: "When the event happened" })
}).annotations({ identifier: "WebhookDelivery" })

/** The type of `Delivery`. */
export type Delivery = typeof Delivery.Type

/** Query parameters of GET /webhooks/deliveries. */
export const ListDeliveriesParams = Schema.Struct({
  state: Schema.optional(DeliveryState),
  type: Schema.optional(WebhookEventType),
  ...params(FEED)
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `ListDeliveriesParams`. */
export type ListDeliveriesParams = typeof ListDeliveriesParams.Type

/**
 * The account's webhook settings: its URL (null when none is set; the operator or the
 * dashboard sets it) and the secret deliveries are signed with, which every account has.
 */
export const WebhookSettings = Schema.Struct({
  url: Schema.NullOr(Schema.String),
  secret: Schema.String.annotations({
    description: "whsec_ and base64 text; see docs/webhooks.md for how both signature headers use it"
  })
}).annotations({ identifier: "WebhookSettings" })

/** The type of `WebhookSettings`. */
export type WebhookSettings = typeof WebhookSettings.Type

/** 404: no delivery with that id for this account. */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()(
  "DeliveryNotFound",
  { success: Failed, message: Schema.String, ...extensions("delivery_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}

/** The health of one account's webhook endpoint, as the operator sees it. */
export const EndpointHealth = Schema.Struct({
  account_id: Schema.Int,
  account_name: Schema.String,
  url: Schema.NullOr(Schema.String),
  backlog: Schema.Int.annotations({ description: "Events queued: not yet delivered nor abandoned" }),
  oldest_queued_at: Schema.NullOr(Schema.Date),
  failing_since: Schema.NullOr(Schema.Date).annotations({
    description: "The oldest queued event that has failed at least once, null when none is failing"
  }),
  abandoned: Schema.Int,
  last_status: Schema.NullOr(Schema.Int).annotations({ description: "HTTP status of the newest attempt" }),
  last_attempt_at: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "EndpointHealth" })

/** The type of `EndpointHealth`. */
export type EndpointHealth = typeof EndpointHealth.Type
