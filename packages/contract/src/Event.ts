/**
 * The account's event feed (GET /events, an extension): every webhook event of the account,
 * whether or not it has a webhook URL, newest first, with a cursor to follow it.
 *
 * A cursor names a place in the feed; `since=<cursor>` lists only the events after it. An
 * account's events commit in the feed's order, so an event never appears behind a cursor
 * already handed out: a follower that passes each response's `cursor` back as `since` sees
 * every event, once, in order.
 */
import { Schema } from "effect"
import { FEED, pageFields, params } from "./Page.js"
import { WebhookEvent, WebhookEventType } from "./Webhook.js"

const MAX_SEQ = 9_223_372_036_854_775_807n

/** A place in the feed, from a previous response's `cursor`: opaque, compare only for equality. */
export const EventCursor = Schema.String.pipe(
  Schema.filter((s) => /^(0|[1-9]\d{0,18})$/.test(s) && BigInt(s) <= MAX_SEQ, {
    message: () => "must be a cursor from a previous response of GET /events"
  }),
  Schema.brand("EventCursor")
).annotations({ identifier: "EventCursor" })

/** The type of `EventCursor`. */
export type EventCursor = typeof EventCursor.Type

/** The cursor before every event: `since=0` lists the whole feed. */
export const START_CURSOR = EventCursor.make("0")

/** Query parameters of GET /events. */
export const ListEventsParams = Schema.Struct({
  since: Schema.optional(EventCursor).annotations({
    description: "Only events after this cursor; pages then count from the cursor (page 1 is the oldest ones)"
  }),
  type: Schema.optional(WebhookEventType),
  ...params(FEED)
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `ListEventsParams`. */
export type ListEventsParams = typeof ListEventsParams.Type

/** A page of the feed, without the envelope. */
export const EventsPageFields = {
  ...pageFields("events", Schema.Array(WebhookEvent).annotations({ description: "Newest first" })),
  cursor: EventCursor.annotations({
    description: "Pass as `since` to list what came after this page's newest event (or after `since` when empty)"
  })
}

/** The body of POST /events/test. */
export const TriggerEventPayload = Schema.Struct({ type: WebhookEventType }).annotations({
  identifier: "TriggerEventPayload",
  parseOptions: { errors: "all" }
})

/** The type of `TriggerEventPayload`. */
export type TriggerEventPayload = typeof TriggerEventPayload.Type
