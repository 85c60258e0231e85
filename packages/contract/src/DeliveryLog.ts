/**
 * The webhook delivery log as an account holder sees it in the dashboard: the public API's
 * delivery view (`WebhookDelivery`), and the body of the dashboard's test event.
 */
import { Schema } from "effect"
import { WebhookEventType } from "./Webhook.js"

export {
  /** One delivery: its id is its event's id. */
  Delivery,
  /** 404: no delivery with that id for this account. */
  DeliveryNotFound,
  /** Where a delivery stands. */
  DeliveryState,
  /** Query parameters of the delivery log. */
  ListDeliveriesParams
} from "./WebhookDelivery.js"

/** The body of POST /dashboard/v1/webhook/test: which kind of event to imitate. */
export const TestEventPayload = Schema.Struct({ type: WebhookEventType }).annotations({
  parseOptions: { errors: "all" }
})
