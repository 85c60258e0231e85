/**
 * The rate-limit response headers' names as plain values, so code that must not load `Schema`
 * (the bulk pacer in a browser page) reads the same names as the server writes.
 */

/**
 * The response headers of a rate-limited request: its tightest scope's limit per minute, what
 * remains of it, and the seconds until the count next goes down.
 */
export const RATE_LIMIT_HEADERS = {
  limit: "x-ratelimit-limit",
  remaining: "x-ratelimit-remaining",
  reset: "x-ratelimit-reset"
} as const

/** The response header of a 429: the seconds to wait (as the body's `retry_after`). */
export const RETRY_AFTER_HEADER = "retry-after"
