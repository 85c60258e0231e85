/**
 * Webhook signatures (decisions.md): each delivery carries
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`.
 * The format, the events and the signing primitives are the contract's (`@databundle/contract/Webhook`),
 * the very code the server signs with. Verification uses Web Crypto only, so it runs on Node, Bun,
 * Deno and edge runtimes. A timestamp outside the tolerance is refused, so a captured delivery
 * cannot be replayed later.
 */
import * as Webhook from "@databundle/contract/Webhook"
import { Either, ParseResult, Schema } from "effect"
import { WebhookSignatureError } from "./Errors.js"

/** The header carrying the signature. */
export const WEBHOOK_SIGNATURE_HEADER = Webhook.SIGNATURE_HEADER

/** The header carrying the event's id; the same event may be delivered more than once. */
export const WEBHOOK_ID_HEADER = Webhook.ID_HEADER

/** The header carrying the event's type. */
export const WEBHOOK_EVENT_HEADER = Webhook.EVENT_HEADER

/** How far a delivery's timestamp may be from now, either way, by default: five minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** The event types the server sends. */
export type WebhookEventType = Webhook.WebhookEventType

/**
 * A delivered event, decoded: tell the kinds apart by `type`. Field names are as sent
 * (snake_case); amounts are `bigint` pesewas (format them with `formatCedis`), times are `Date`.
 * Deliveries are at least once: deduplicate on `id`.
 */
export type WebhookEvent = Webhook.WebhookEvent

/** What `verifyWebhook` needs. */
export interface VerifyWebhookOptions {
  /** The raw request body, exactly as received: verify before parsing, never a re-serialised object. */
  readonly body: string | Uint8Array | ArrayBuffer
  /** The `X-Webhook-Signature` header's value. */
  readonly signature: string | null | undefined
  /** The account's webhook secret. */
  readonly secret: string
  /** Seconds the timestamp may differ from now (default 300). */
  readonly toleranceSeconds?: number | undefined
  /** The current time, for tests (default `Date.now()`). */
  readonly now?: Date | number | undefined
}

const decodeEvent = Schema.decodeUnknownEither(Webhook.WebhookEvent)

/**
 * Checks a delivery's signature and returns its event. Throws `WebhookSignatureError` with
 * `reason` `missing`, `malformed`, `expired` (outside the tolerance), `mismatch` (wrong secret or
 * altered body) or `body` (signed, but not an event). Answer 2xx only after it resolves.
 */
export const verifyWebhook = async (options: VerifyWebhookOptions): Promise<WebhookEvent> => {
  if (options.signature === null || options.signature === undefined || options.signature.trim() === "") {
    throw new WebhookSignatureError("missing", `the ${WEBHOOK_SIGNATURE_HEADER} header is missing`)
  }
  if (typeof options.secret !== "string" || options.secret.length === 0) {
    throw new TypeError("verifyWebhook needs the account's webhook secret")
  }
  const header = Webhook.parseSignatureHeader(options.signature)
  if (header === undefined) {
    throw new WebhookSignatureError("malformed", `the ${WEBHOOK_SIGNATURE_HEADER} header is not t=<seconds>,v1=<hex>`)
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now = options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now
  if (Math.abs(Math.floor(now / 1000) - header.timestamp) > tolerance) {
    throw new WebhookSignatureError("expired", `the signature's timestamp is more than ${tolerance} s from now`)
  }
  const body = Webhook.bodyBytes(options.body)
  if (!(await Webhook.verifySignature(options.secret, header, body))) {
    throw new WebhookSignatureError("mismatch", "the signature does not match the body and secret")
  }
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder().decode(body))
  } catch {
    throw new WebhookSignatureError("body", "the signed body is not JSON")
  }
  const event = decodeEvent(json, { onExcessProperty: "ignore" })
  if (Either.isLeft(event)) {
    throw new WebhookSignatureError(
      "body",
      `the signed body is not an event this client knows: ${ParseResult.TreeFormatter.formatErrorSync(event.left)}`
    )
  }
  return event.right
}

/**
 * Signs a body as the server does, returning the `X-Webhook-Signature` value: for testing
 * your receiver without a server.
 */
export const signWebhook = async (options: {
  readonly body: string | Uint8Array | ArrayBuffer
  readonly secret: string
  /** Unix seconds (default now). */
  readonly timestamp?: number | undefined
}): Promise<string> => {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000)
  return Webhook.signatureHeader(options.secret, timestamp, options.body)
}

/**
 * An event's JSON as the server delivers it (the fields in the order id, type, created_at,
 * test, data; amounts in cedis), for forwarding an event of the feed as its delivery would be.
 */
export const webhookBody: (event: WebhookEvent) => string = Webhook.eventBody

/**
 * Every header of a delivery of `body` (the event `id` of `type`), signed with `secret` as the
 * server signs: `X-Webhook-Signature`, `X-Webhook-Id`, `X-Webhook-Event` and the Standard Webhooks
 * `webhook-id`, `webhook-timestamp` and `webhook-signature`. For forwarding events to a receiver
 * (`bundles webhooks listen`) and for testing one.
 */
export const webhookHeaders = async (options: {
  readonly id: string
  readonly type: WebhookEventType
  readonly body: string | Uint8Array | ArrayBuffer
  readonly secret: string
  /** Unix seconds (default now). */
  readonly timestamp?: number | undefined
}): Promise<Record<string, string>> => ({
  "content-type": "application/json",
  ...await Webhook.deliveryHeaders({ ...options, timestamp: options.timestamp ?? Math.floor(Date.now() / 1000) })
})
