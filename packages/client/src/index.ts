/**
 * `@databundle/client`: the typed client of the data bundle reseller API, derived from
 * `@databundle/contract`, with an Effect face (`BundlesClient`) and a Promise face
 * (`createClient`), plus the phone and webhook helpers. Runs on `fetch` and Web Crypto only.
 */

/** The Effect face. */
export { BundlesClient } from "./BundlesClient.js"
/** The Promise face. */
export {
  type Balance,
  type Bundle,
  type CallOptions,
  type Client,
  createClient,
  type CreateOrderInput,
  type DeliveriesInput,
  type DeliveriesPage,
  type Delivery,
  type EventsInput,
  type EventsPage,
  type ListOrdersInput,
  type Network,
  type Order,
  type OrdersPage,
  type OrderStatus,
  type PhoneNumberNetwork,
  type PlaceOrderResult,
  type TransactionsInput,
  type TransactionsPage,
  type WebhookSettings
} from "./Promise.js"
/** The errors of the Promise face. */
export * from "./Errors.js"
/** Options of both faces. */
export { type ClientOptions, ClientOptionsError, isLoopback, type RetryOptions } from "./Options.js"
/** The terms of an order, as the contract states them. */
export { DEFAULT_PER_PAGE, MAX_PER_PAGE, ORDER_STATUSES, REFERENCE_PATTERN, REFERENCE_RULE } from "./OrderTerms.js"
/** The response headers the server sets: the request's id, the rate limit's window, a 429's wait. */
export { REQUEST_ID_HEADER } from "@databundle/contract/ApiError"
export { RATE_LIMIT_HEADERS, RETRY_AFTER_HEADER } from "@databundle/contract/RateLimit"
/** A `Retry-After` value, read as the client's retry policy reads it. */
export { parseRetryAfter } from "./Retry.js"
/** Amounts: pesewas in, text out. */
export { formatCedis, formatGhs, parseCedis } from "./Money.js"
/** Ghana phone numbers. */
export { type GhanaPhone, normalizePhone, parsePhone, type PhoneOperator, phoneOperator } from "./Phone.js"
/** The operator prefix table. */
export { PHONE_PREFIXES, type PhoneOperatorId } from "./PhonePrefixes.js"
/** Webhook signatures. */
export {
  DEFAULT_TOLERANCE_SECONDS,
  signWebhook,
  verifyWebhook,
  type VerifyWebhookOptions,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  webhookBody,
  type WebhookEvent,
  type WebhookEventType,
  webhookHeaders
} from "./Webhook.js"
/** The client's version. */
export { USER_AGENT, VERSION } from "./Version.js"
