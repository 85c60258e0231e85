/**
 * Two servers with the same history, one on the production road and one whose every request
 * goes through the framework's router behind the same gateway middleware, and how their
 * answers to one request are compared: status, every header (but those that differ from one
 * request to the next) and the body, once what names the same thing in each world (keys,
 * cookies, order numbers, emails) is written alike and what is drawn anew per request (ids of
 * requests, times, new secrets) is masked.
 *
 * Each request goes on a connection of its own that the client closes (`send`), so whether a
 * server would keep a connection open after its answer is not compared here.
 */
import type { Observed, Probe } from "./Probe.js"
import { probe } from "./Probe.js"
import type { World } from "./World.js"

/**
 * Headers that differ from one request to the next on any road. (The counts left in a window
 * too: the two servers' windows start and end at their own times. `FastReads.test.ts` holds
 * the production road to counting each request once.)
 */
export const VARYING = new Set(["date", "x-request-id", "x-ratelimit-reset", "x-ratelimit-remaining"])

/** The strings that name the same thing in both worlds, the reference's first, longest first. */
export const correspondences = (reference: World, production: World): ReadonlyArray<readonly [string, string]> => {
  const pairs: Array<readonly [string, string]> = []
  const add = (a: string, b: string) => {
    if (a !== b && a.length > 0) pairs.push([a, b])
  }
  for (const name of ["rich", "other", "broke"] as const) add(reference[name].key, production[name].key)
  add(reference.revokedKey, production.revokedKey)
  add(reference.suspendedKey, production.suspendedKey)
  for (const name of ["email", "cookie", "csrf", "orderNumber", "paymentNumber", "eventId"] as const) {
    add(reference.holder[name], production.holder[name])
  }
  for (const name of ["email", "cookie", "csrf"] as const) add(reference.operator[name], production.operator[name])
  reference.richOrders.forEach((order, i) => add(order.orderNumber, production.richOrders[i]!.orderNumber))
  reference.otherOrders.forEach((order, i) => add(order.orderNumber, production.otherOrders[i]!.orderNumber))
  reference.richEvents.forEach((id, i) => add(id, production.richEvents[i]!))
  reference.otherEvents.forEach((id, i) => add(id, production.otherEvents[i]!))
  return pairs.sort((x, y) => y[0].length - x[0].length)
}

/** Every occurrence of `from` in `bytes` replaced by `to` (bytes that are not UTF-8 kept as they are). */
const replaceBytes = (bytes: Buffer, from: string, to: string): Buffer => {
  const needle = Buffer.from(from, "utf8")
  const parts: Array<Buffer> = []
  let at = 0
  for (let found = bytes.indexOf(needle, at); found >= 0; found = bytes.indexOf(needle, at)) {
    parts.push(bytes.subarray(at, found), Buffer.from(to, "utf8"))
    at = found + needle.length
  }
  if (parts.length === 0) return bytes
  parts.push(bytes.subarray(at))
  return Buffer.concat(parts)
}

const replaceText = (text: string, pairs: ReadonlyArray<readonly [string, string]>, back = false) => {
  let out = text
  for (const [a, b] of pairs) out = back ? out.split(b).join(a) : out.split(a).join(b)
  return out
}

/** The same request, for the production world: what names a thing of the reference names the production's. */
export const translate = (p: Probe, pairs: ReadonlyArray<readonly [string, string]>): Probe => {
  const headers: Record<string, string | ReadonlyArray<string>> = {}
  for (const [name, value] of Object.entries(p.headers)) {
    headers[name] = typeof value === "string" ? replaceText(value, pairs) : value.map((v) => replaceText(v, pairs))
  }
  let body = p.body
  if (body !== undefined) { for (const [a, b] of pairs) body = replaceBytes(body, a, b) }
  return probe({ ...p, target: replaceText(p.target, pairs), headers, body })
}

/** What is drawn anew for every request or at every start, masked. */
const MASKS: ReadonlyArray<readonly [RegExp, string]> = [
  [/req_[0-9a-f]{16}/g, "req_…"],
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, "…time…"],
  [/ORD-[0-9A-Z]{12}/g, "ORD-…"],
  [/evt_[A-Za-z0-9]{24}/g, "evt_…"],
  [/whsec_[A-Za-z0-9_-]+/g, "whsec_…"],
  // New secrets and tokens in a body: keys, CSRF tokens, webhook secrets; and each account's
  // referral code, which the database draws.
  [/"(api_key|csrf_token|secret|webhook_secret|token|prefix|key_prefix|referral_code)":"[^"]*"/g, "\"$1\":\"…\""],
  [/([?&]ref=)[0-9A-Fa-f]{10}/g, "$1…"]
]

const mask = (text: string) => MASKS.reduce((out, [pattern, by]) => out.replace(pattern, by), text)

/** A response as compared: status, headers (varying ones only present) and the body, masked. */
export const comparable = (
  r: Observed,
  pairs: ReadonlyArray<readonly [string, string]>,
  fromProduction: boolean
) => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(r.headers)) {
    const text = Array.isArray(value) ? value.join("\n") : String(value)
    headers[name] = VARYING.has(name)
      ? "(varies)"
      : name === "set-cookie"
      ? text.replace(/=[^;\n]*/, "=…")
      : mask(fromProduction ? replaceText(text, pairs, true) : text)
  }
  return {
    status: r.status,
    headers,
    body: mask(fromProduction ? replaceText(r.text, pairs, true) : r.text)
  }
}
