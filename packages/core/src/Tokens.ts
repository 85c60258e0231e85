/**
 * Random identifiers and secrets: order numbers, API keys, webhook secrets and event ids.
 */
import type { Order } from "@databundle/contract"
import { createHash, randomBytes } from "node:crypto"

const UPPER_ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random bytes are drawn 4 KiB at a time from the system's generator and each is used once:
// one call serves dozens of identifiers (an order draws three: its number and two event ids).
let pool = Buffer.alloc(0)
let used = 0

const nextByte = (): number => {
  if (used === pool.length) {
    pool = randomBytes(4096)
    used = 0
  }
  return pool[used++]!
}

/** `length` characters drawn uniformly from `alphabet` (rejection sampling, so no modulo bias). */
export const randomString = (alphabet: string, length: number): string => {
  const limit = 256 - (256 % alphabet.length)
  let out = ""
  while (out.length < length) {
    const byte = nextByte()
    if (byte < limit) out += alphabet[byte % alphabet.length]
  }
  return out
}

/** `ORD-` and 12 characters of `0-9A-Z` (about 62 random bits): an order number by construction. */
export const orderNumber = (): Order.OrderNumber => `ORD-${randomString(UPPER_ALPHANUMERIC, 12)}` as Order.OrderNumber

/** `PAY-` and 12 characters of `0-9A-Z`. */
export const paymentNumber = (): string => `PAY-${randomString(UPPER_ALPHANUMERIC, 12)}`

/** The recognisable start of every API key. */
export const API_KEY_PREFIX = "dbk_"

/** How many random characters follow the prefix: 40 base-62 characters carry about 238 bits. */
export const API_KEY_RANDOM_LENGTH = 40

/** A key's mode: `test` keys act on the account's test data, `live` keys on the real thing. */
export type KeyMode = "live" | "test"

/** A new API key of a mode: `dbk_live_...` or `dbk_test_...`. */
export const apiKey = (mode: KeyMode = "live"): string =>
  `${API_KEY_PREFIX}${mode}_${randomString(ALPHANUMERIC, API_KEY_RANDOM_LENGTH)}`

/**
 * True when a string has the shape of an API key, checked before any database work: a
 * `dbk_live_` or `dbk_test_` key, or one made before keys had modes (`dbk_` alone, live).
 */
export const looksLikeApiKey = (value: string): boolean => {
  if (!value.startsWith(API_KEY_PREFIX)) return false
  const rest = value.slice(API_KEY_PREFIX.length)
  return rest.length === API_KEY_RANDOM_LENGTH ||
    (rest.length === API_KEY_RANDOM_LENGTH + 5 && (rest.startsWith("live_") || rest.startsWith("test_")))
}

/** The part of a key shown to people so they can tell keys apart (`dbk_test_Ab12Cd34`). */
export const displayPrefix = (key: string): string => {
  const rest = key.slice(API_KEY_PREFIX.length)
  const mode = rest.startsWith("live_") || rest.startsWith("test_") ? 5 : 0
  return key.slice(0, API_KEY_PREFIX.length + mode + 8)
}

/** A webhook signing secret. */
export const webhookSecret = (): string => `whsec_${randomString(ALPHANUMERIC, 40)}`

/** The part of a webhook secret shown to the operator so secrets can be told apart (`whsec_Ab12`). */
export const webhookSecretPrefix = (secret: string): string => secret.slice(0, "whsec_".length + 4)

/** A webhook event id. */
export const eventId = (): string => `evt_${randomString(ALPHANUMERIC, 24)}`

/** Lowercase hex SHA-256, how API keys are stored. */
export const sha256Hex = (value: string): string => createHash("sha256").update(value).digest("hex")
