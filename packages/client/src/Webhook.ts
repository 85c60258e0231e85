/**
 * Webhook signatures (decisions.md): each delivery carries
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`.
 * Verification uses Web Crypto only, so it runs on Node, Bun, Deno and edge runtimes; the
 * comparison is `crypto.subtle.verify`, which takes the same time however much of a forged
 * signature is right. A timestamp outside the tolerance is refused, so a captured delivery
 * cannot be replayed later.
 */
import { WebhookSignatureError } from "./Errors.js"

/** The header carrying the signature. */
export const WEBHOOK_SIGNATURE_HEADER = "x-webhook-signature"

/** The header carrying the event's id; the same event may be delivered more than once. */
export const WEBHOOK_ID_HEADER = "x-webhook-id"

/** The header carrying the event's type. */
export const WEBHOOK_EVENT_HEADER = "x-webhook-event"

/** How far a delivery's timestamp may be from now, either way, by default: five minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** The event types the server sends. */
export type WebhookEventType = "order.successful" | "order.failed" | "wallet.funded" | "wallet.debited"

/**
 * A delivered event, exactly as sent: snake_case, amounts in `data` as JSON numbers of cedis
 * (turn them into pesewas with `parseCedis`). Deliveries are at least once: deduplicate on `id`.
 */
export interface WebhookEvent {
  readonly id: string
  readonly type: WebhookEventType
  /** ISO 8601 UTC. */
  readonly created_at: string
  readonly data: Readonly<Record<string, unknown>>
}

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

const encoder = new TextEncoder()

const bytesOf = (body: VerifyWebhookOptions["body"]): Uint8Array =>
  typeof body === "string" ? encoder.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body)

const subtle = () => {
  const crypto = globalThis.crypto
  if (crypto?.subtle === undefined) {
    throw new Error("Web Crypto (globalThis.crypto.subtle) is missing; Node 18 needs --experimental-global-webcrypto")
  }
  return crypto.subtle
}

const hmacKey = (secret: string, usage: "sign" | "verify") =>
  subtle().importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage])

const signedBytes = (timestamp: number, body: Uint8Array) => {
  const head = encoder.encode(`${timestamp}.`)
  const out = new Uint8Array(head.length + body.length)
  out.set(head)
  out.set(body, head.length)
  return out
}

const hexToBytes = (hex: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return undefined
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

/** Reads `t=...,v1=...` (several `v1` are allowed, as during a secret rotation). */
const parseHeader = (
  header: string
): { timestamp: number; signatures: Array<Uint8Array<ArrayBuffer>> } | undefined => {
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
  const header = parseHeader(options.signature)
  if (header === undefined) {
    throw new WebhookSignatureError("malformed", `the ${WEBHOOK_SIGNATURE_HEADER} header is not t=<seconds>,v1=<hex>`)
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now = options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now
  if (Math.abs(Math.floor(now / 1000) - header.timestamp) > tolerance) {
    throw new WebhookSignatureError("expired", `the signature's timestamp is more than ${tolerance} s from now`)
  }
  const body = bytesOf(options.body)
  const key = await hmacKey(options.secret, "verify")
  const data = signedBytes(header.timestamp, body)
  let valid = false
  for (const signature of header.signatures) {
    if (await subtle().verify("HMAC", key, signature, data)) valid = true
  }
  if (!valid) throw new WebhookSignatureError("mismatch", "the signature does not match the body and secret")
  let event: unknown
  try {
    event = JSON.parse(new TextDecoder().decode(body))
  } catch {
    throw new WebhookSignatureError("body", "the signed body is not JSON")
  }
  const shaped = event as Partial<WebhookEvent> | null
  if (
    typeof shaped !== "object" || shaped === null || typeof shaped.id !== "string" ||
    typeof shaped.type !== "string" || typeof shaped.created_at !== "string" ||
    typeof shaped.data !== "object" || shaped.data === null
  ) {
    throw new WebhookSignatureError("body", "the signed body is not an event (id, type, created_at, data)")
  }
  return shaped as WebhookEvent
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
  const key = await hmacKey(options.secret, "sign")
  const mac = new Uint8Array(await subtle().sign("HMAC", key, signedBytes(timestamp, bytesOf(options.body))))
  let hex = ""
  for (const byte of mac) hex += byte.toString(16).padStart(2, "0")
  return `t=${timestamp},v1=${hex}`
}
