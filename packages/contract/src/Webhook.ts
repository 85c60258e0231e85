/**
 * Webhooks on the wire: the events an account receives, the headers of a delivery and its
 * signature. The server signs with these primitives and the client verifies with them, so the
 * two cannot drift apart. Signing uses Web Crypto only (Node 19+, Bun, Deno, browsers, edge).
 *
 * A delivery is an HTTP POST whose body is one event as JSON, with
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`,
 * `X-Webhook-Id` (the event's id) and `X-Webhook-Event` (its type). It also carries the
 * Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), so an
 * off-the-shelf Standard Webhooks verifier works with the account's `whsec_` secret as is.
 */
import { Schema } from "effect"
import { AccountId } from "./Account.js"
import { EVENT_TYPES } from "./EventTypes.js"
import { LedgerReason } from "./Ledger.js"
import { Cedis } from "./Money.js"
import { Order, OrderNumber } from "./Order.js"
import { WalletKind } from "./Wallet.js"

/** The header carrying the signature. */
export const SIGNATURE_HEADER = "x-webhook-signature"

/** The header carrying the event's id; the same event may be delivered more than once. */
export const ID_HEADER = "x-webhook-id"

/** The header carrying the event's type. */
export const EVENT_HEADER = "x-webhook-event"

/** The Standard Webhooks id header: the event's id. */
export const STANDARD_ID_HEADER = "webhook-id"

/** The Standard Webhooks timestamp header: unix seconds, the same `t` as the signature header's. */
export const STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"

/** The Standard Webhooks signature header: `v1,<base64>`. */
export const STANDARD_SIGNATURE_HEADER = "webhook-signature"

/** An event's id: `evt_` and random characters; deduplicate deliveries on it. */
export const EventId = Schema.String.pipe(Schema.pattern(/^evt_[0-9A-Za-z]+$/), Schema.brand("WebhookEventId"))

/** The type of `EventId`. */
export type EventId = typeof EventId.Type

/** The `data` of `wallet.funded` and `wallet.debited`: one ledger movement and the balance after it. */
export const WalletMovement = Schema.Struct({
  account_id: AccountId,
  wallet: WalletKind,
  /** Always positive: the type says which way it moved. */
  amount: Cedis,
  balance: Cedis,
  reason: LedgerReason,
  order_number: Schema.NullOr(OrderNumber),
  note: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WalletMovement" })

/** The type of `WalletMovement`. */
export type WalletMovement = typeof WalletMovement.Type

const event = <const Type extends string, Data extends Schema.Schema.Any>(type: Type, data: Data) =>
  Schema.Struct({
    id: EventId,
    type: Schema.Literal(type),
    created_at: Schema.Date.annotations({ description: "ISO 8601 UTC timestamp" }),
    livemode: Schema.optionalWith(Schema.Boolean, { default: () => true }).annotations({
      description: "false for an event of a test key's data (test orders, the test wallet); events recorded " +
        "before keys had modes lack it and are live"
    }),
    test: Schema.optional(Schema.Literal(true)).annotations({
      description: "Present (and true) only on a test event sent by POST /events/test: its data describes nothing real"
    }),
    data
  })

/** An order's status became `successful`. */
export const OrderSuccessful = event("order.successful", Order).annotations({ identifier: "OrderSuccessful" })

/** An order's status became `failed` (its refund is a `wallet.funded` of its own). */
export const OrderFailed = event("order.failed", Order).annotations({ identifier: "OrderFailed" })

/** Money came into a wallet: a funding, an adjustment or a refund. */
export const WalletFunded = event("wallet.funded", WalletMovement).annotations({ identifier: "WalletFunded" })

/** Money left a wallet: an order or an adjustment. */
export const WalletDebited = event("wallet.debited", WalletMovement).annotations({ identifier: "WalletDebited" })

/** Every event an account can receive, told apart by `type`. */
export const WebhookEvent = Schema.Union(OrderSuccessful, OrderFailed, WalletFunded, WalletDebited).annotations({
  identifier: "WebhookEvent"
})

/** The type of `WebhookEvent`: amounts in pesewas, times as `Date`. */
export type WebhookEvent = typeof WebhookEvent.Type

/** The event types. */
export type WebhookEventType = WebhookEvent["type"]

/** The event types, as a schema. */
export const WebhookEventType = Schema.Literal(...EVENT_TYPES).annotations({
  identifier: "WebhookEventType",
  message: () => `must be one of ${EVENT_TYPES.join(", ")}`
})

/** An event before it is given its id and time: what the domain announces. */
export type WebhookEventContent = WebhookEvent extends infer E
  ? E extends WebhookEvent ? Omit<E, "id" | "created_at" | "livemode">
  : never
  : never

const encodeEvent = Schema.encodeSync(WebhookEvent)

/**
 * The JSON of an event as it is stored, delivered and listed: the fields in the order id, type,
 * created_at, livemode, test (only on a test event), data; amounts in cedis.
 */
export const eventBody = (event: WebhookEvent): string => {
  const encoded = encodeEvent(event)
  return JSON.stringify({
    id: encoded.id,
    type: encoded.type,
    created_at: encoded.created_at,
    livemode: encoded.livemode ?? true,
    ...(encoded.test === true ? { test: true } : {}),
    data: encoded.data
  })
}

const encoder = new TextEncoder()

/** A body as bytes. */
export const bodyBytes = (body: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> =>
  typeof body === "string"
    ? encoder.encode(body)
    : body instanceof Uint8Array
    ? new Uint8Array(body)
    : new Uint8Array(body)

const subtle = () => {
  const crypto = globalThis.crypto
  if (crypto?.subtle === undefined) {
    throw new Error("Web Crypto (globalThis.crypto.subtle) is missing; Node 18 needs --experimental-global-webcrypto")
  }
  return crypto.subtle
}

const hmacKey = (secret: string, usage: "sign" | "verify") =>
  subtle().importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage])

/** What is signed: `t + "." + raw body`. */
const signedBytes = (timestamp: number, body: Uint8Array) => {
  const head = encoder.encode(`${timestamp}.`)
  const out = new Uint8Array(head.length + body.length)
  out.set(head)
  out.set(body, head.length)
  return out
}

/** `hex(HMAC-SHA256(secret, t + "." + body))`, the `v1` of the signature header. */
export const sign = async (
  secret: string,
  timestamp: number,
  body: string | Uint8Array | ArrayBuffer
): Promise<string> => {
  const key = await hmacKey(secret, "sign")
  const mac = new Uint8Array(await subtle().sign("HMAC", key, signedBytes(timestamp, bodyBytes(body))))
  let hex = ""
  for (const byte of mac) hex += byte.toString(16).padStart(2, "0")
  return hex
}

/** The signature header's value: `t=<unix seconds>,v1=<hex>`. */
export const signatureHeader = async (
  secret: string,
  timestamp: number,
  body: string | Uint8Array | ArrayBuffer
): Promise<string> => `t=${timestamp},v1=${await sign(secret, timestamp, body)}`

/** A signature header, read. */
export interface ParsedSignature {
  readonly timestamp: number
  /** Every `v1` (several during a secret rotation), as bytes. */
  readonly signatures: ReadonlyArray<Uint8Array<ArrayBuffer>>
}

const hexToBytes = (hex: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return undefined
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

/** Reads `t=...,v1=...[,v1=...]`; `undefined` when it is not that. Unknown keys are ignored. */
export const parseSignatureHeader = (header: string): ParsedSignature | undefined => {
  let timestamp: number | undefined
  const signatures: Array<Uint8Array<ArrayBuffer>> = []
  for (const part of header.split(",")) {
    const at = part.indexOf("=")
    if (at < 0) return undefined
    const key = part.slice(0, at).trim()
    const value = part.slice(at + 1).trim()
    if (key === "t") {
      if (!/^\d{1,12}$/.test(value) || timestamp !== undefined) return undefined
      timestamp = Number(value)
    } else if (key === "v1") {
      const bytes = hexToBytes(value)
      if (bytes === undefined) return undefined
      signatures.push(bytes)
    }
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures }
}

/**
 * True when one of the header's signatures is the body's under `secret`. The comparison is
 * `crypto.subtle.verify`, which takes the same time however much of a forged signature is right.
 */
export const verifySignature = async (
  secret: string,
  header: ParsedSignature,
  body: string | Uint8Array | ArrayBuffer
): Promise<boolean> => {
  const key = await hmacKey(secret, "verify")
  const data = signedBytes(header.timestamp, bodyBytes(body))
  let valid = false
  for (const signature of header.signatures) {
    if (await subtle().verify("HMAC", key, signature, data)) valid = true
  }
  return valid
}

/** The key of a Standard Webhooks signature: the base64 after `whsec_`, decoded. */
const standardKey = (secret: string): Uint8Array<ArrayBuffer> => {
  const text = atob(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret)
  const out = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i)
  return out
}

/**
 * The `webhook-signature` value of Standard Webhooks:
 * `v1,<base64(HMAC-SHA256(base64-decoded secret, id + "." + t + "." + body))>`.
 */
export const standardSignature = async (
  secret: string,
  id: string,
  timestamp: number,
  body: string | Uint8Array | ArrayBuffer
): Promise<string> => {
  const key = await subtle().importKey("raw", standardKey(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
  const head = encoder.encode(`${id}.${timestamp}.`)
  const bytes = bodyBytes(body)
  const data = new Uint8Array(head.length + bytes.length)
  data.set(head)
  data.set(bytes, head.length)
  const mac = new Uint8Array(await subtle().sign("HMAC", key, data))
  let binary = ""
  for (const byte of mac) binary += String.fromCharCode(byte)
  return `v1,${btoa(binary)}`
}

/**
 * The signed headers of a delivery of `body` (the event `id` of `type`) at `timestamp` (Unix
 * seconds): `X-Webhook-Signature`, `X-Webhook-Id`, `X-Webhook-Event` and the Standard Webhooks
 * `webhook-id`, `webhook-timestamp` and `webhook-signature`.
 */
export const deliveryHeaders = async (options: {
  readonly id: string
  readonly type: string
  readonly body: string | Uint8Array | ArrayBuffer
  readonly secret: string
  readonly timestamp: number
}): Promise<Record<string, string>> => {
  const [signature, standard] = await Promise.all([
    signatureHeader(options.secret, options.timestamp, options.body),
    standardSignature(options.secret, options.id, options.timestamp, options.body)
  ])
  return {
    [SIGNATURE_HEADER]: signature,
    [ID_HEADER]: options.id,
    [EVENT_HEADER]: options.type,
    [STANDARD_ID_HEADER]: options.id,
    [STANDARD_TIMESTAMP_HEADER]: String(options.timestamp),
    [STANDARD_SIGNATURE_HEADER]: standard
  }
}
