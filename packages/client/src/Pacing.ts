/**
 * Pacing a run of orders under the rate limit from what the server reports, as `bundles bulk`
 * and the web dashboard's bulk page both do. Plain TypeScript, no Effect, for the browser.
 */
import { RATE_LIMIT_HEADERS } from "@databundle/contract/RateLimitHeaders"

/** The rate-limit window a response reported. */
export interface RateWindow {
  readonly limit: number
  readonly remaining: number
  /** When (epoch milliseconds) the window's count next goes down. */
  readonly resetAt: number
}

/** Reads the `X-RateLimit-*` headers (by lower-case name); undefined when a response has none. */
export const readWindow = (
  header: (name: string) => string | null | undefined,
  now: number
): RateWindow | undefined => {
  const number = (name: string) => {
    const text = header(name)
    return typeof text === "string" && /^\d+$/.test(text.trim()) ? Number(text) : undefined
  }
  const limit = number(RATE_LIMIT_HEADERS.limit)
  const remaining = number(RATE_LIMIT_HEADERS.remaining)
  const reset = number(RATE_LIMIT_HEADERS.reset)
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined
  return { limit, remaining, resetAt: now + reset * 1000 }
}

/** The length of the server's window, for estimates: 60 seconds and the one it is counting in. */
const WINDOW_MILLIS = 61_000

/**
 * Keeping a bulk run under the rate limit (10 orders a minute by default) from what the server
 * says: every POST /orders response carries `X-RateLimit-Limit`, `-Remaining` and `-Reset`
 * (seconds until the window's count next goes down) for its tightest scope. When nothing
 * remains, the next order waits for the reset instead of being refused. A 429 all the same
 * (another client on the account) is waited out (`retryAfterMillis`) and the row tried again:
 * a refused request did nothing, so it is never a failed row.
 */
export interface Pacer {
  /** Notes the headers of a POST /orders response (any attempt, refused ones too). */
  readonly saw: (header: (name: string) => string | null | undefined, now: number) => void
  /** Milliseconds to wait before the next order may go; 0 when it may go now. */
  readonly delay: (now: number) => number
  /** Notes how long an order took, for the estimate. */
  readonly took: (millis: number) => void
  /** Milliseconds the remaining `rows` orders should take, at the limit; undefined before the first order. */
  readonly eta: (rows: number, now: number) => number | undefined
  /** The last window, if any response reported one. */
  readonly window: () => RateWindow | undefined
}

/** A pacer with nothing learnt yet. */
export const makePacer = (): Pacer => {
  let window: RateWindow | undefined
  let latency: number | undefined
  return {
    saw: (header, now) => {
      window = readWindow(header, now) ?? window
    },
    delay: (now) => window === undefined || window.remaining > 0 || window.resetAt <= now ? 0 : window.resetAt - now,
    took: (millis) => {
      // A moving average: recent orders say more about the next ones.
      latency = latency === undefined ? millis : latency * 0.7 + millis * 0.3
    },
    eta: (rows, now) => {
      if (rows <= 0) return 0
      if (latency === undefined) return undefined
      const calls = rows * latency
      if (window === undefined) return calls
      const beyond = rows - window.remaining
      if (beyond <= 0) return calls
      // Orders beyond what remains wait for the reset, then go a limit's worth a window.
      const toReset = Math.max(0, window.resetAt - now)
      return calls + toReset + (Math.ceil(beyond / Math.max(window.limit, 1)) - 1) * WINDOW_MILLIS
    },
    window: () => window
  }
}

/** The wait a 429 asks for, in milliseconds: its `retry_after` (seconds), at least one second. */
export const retryAfterMillis = (retryAfter: unknown): number =>
  Math.max(1, typeof retryAfter === "number" && Number.isFinite(retryAfter) ? retryAfter : 1) * 1000
