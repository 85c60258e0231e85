/**
 * The webhook delivery log as an account holder sees it: each event sent to the account's
 * URL, its attempts (status code or error), and when the next retry is due.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Failed } from "./ApiError.js"
import { integerParam } from "./Identifier.js"
import { MAX_PER_PAGE } from "./OrderTerms.js"
import { EventId } from "./Webhook.js"

/** Where an event's delivery stands: still trying, delivered, or given up on. */
export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed").annotations({
  message: () => "must be one of pending, delivered, failed"
})

/** The type of `DeliveryStatus`. */
export type DeliveryStatus = typeof DeliveryStatus.Type

/** One attempt to deliver an event. */
export const DeliveryAttempt = Schema.Struct({
  at: Schema.Date,
  status_code: Schema.NullOr(Schema.Int).annotations({ description: "The receiver's HTTP status, null when none" }),
  error: Schema.NullOr(Schema.String).annotations({ description: "Why the attempt failed, null when it succeeded" })
}).annotations({ identifier: "DeliveryAttempt" })

/** One event and its delivery. */
export const Delivery = Schema.Struct({
  event_id: EventId,
  type: Schema.String,
  status: DeliveryStatus,
  url: Schema.NullOr(Schema.String).annotations({ description: "The URL of the last attempt" }),
  attempts: Schema.Int,
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Schema.Date).annotations({ description: "When the next retry is due, while pending" }),
  delivered_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date,
  attempt_log: Schema.Array(DeliveryAttempt).annotations({ description: "The attempts, newest first" })
}).annotations({ identifier: "Delivery" })

/** The type of `Delivery`. */
export type Delivery = typeof Delivery.Type

/** Query parameters of the delivery log. */
export const ListDeliveriesParams = Schema.Struct({
  page: Schema.optional(integerParam(1, 1_000_000)),
  per_page: Schema.optional(integerParam(1, MAX_PER_PAGE)),
  status: Schema.optional(DeliveryStatus)
}).annotations({ parseOptions: { errors: "all" } })

/** 404: no event with that id for this account. */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()(
  "DeliveryNotFound",
  { success: Failed, message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}
