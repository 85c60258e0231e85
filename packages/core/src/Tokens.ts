/**
 * Random identifiers and secrets: order numbers, API keys, webhook secrets and event ids.
 */
import { createHash, randomBytes } from "node:crypto"

const UPPER_ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** `length` characters drawn uniformly from `alphabet` (rejection sampling, so no modulo bias). */
export const randomString = (alphabet: string, length: number): string => {
  const limit = 256 - (256 % alphabet.length)
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) {
        out += alphabet[byte % alphabet.length]
        if (out.length === length) break
      }
    }
  }
  return out
}

/** `ORD-` and 12 characters of `0-9A-Z` (about 62 random bits). */
export const orderNumber = (): string => `ORD-${randomString(UPPER_ALPHANUMERIC, 12)}`

/** `PAY-` and 12 characters of `0-9A-Z`. */
export const paymentNumber = (): string => `PAY-${randomString(UPPER_ALPHANUMERIC, 12)}`

/** The recognisable start of every API key. */
export const API_KEY_PREFIX = "dbk_"

/** How many random characters follow the prefix: 40 base-62 characters carry about 238 bits. */
export const API_KEY_RANDOM_LENGTH = 40

/** A new API key. */
export const apiKey = (): string => `${API_KEY_PREFIX}${randomString(ALPHANUMERIC, API_KEY_RANDOM_LENGTH)}`

/** True when a string has the shape of an API key, checked before any database work. */
export const looksLikeApiKey = (value: string): boolean =>
  value.length === API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH && value.startsWith(API_KEY_PREFIX)

/** The part of a key shown to people so they can tell keys apart (`dbk_Ab12Cd34`). */
export const displayPrefix = (key: string): string => key.slice(0, API_KEY_PREFIX.length + 8)

/** A webhook signing secret. */
export const webhookSecret = (): string => `whsec_${randomString(ALPHANUMERIC, 40)}`

/** A webhook event id. */
export const eventId = (): string => `evt_${randomString(ALPHANUMERIC, 24)}`

/** Lowercase hex SHA-256, how API keys are stored. */
export const sha256Hex = (value: string): string => createHash("sha256").update(value).digest("hex")
