/**
 * Rate limits: per-minute quotas per subject (an account, or a client address for
 * unauthenticated requests) and scope.
 *
 * Counts are kept in one-second buckets. A request is admitted only if every scope it
 * falls in has counted fewer than its limit over the current second and the 60 before
 * it; that span covers every 60-second window ending now, so no 60-second window ever
 * holds more than the limit (the price: a limit may free up to a second late). A refused
 * request is counted nowhere.
 *
 * The store is the Layer: `layerMemory` serves one process.
 */
import type { RateLimit } from "@databundle/contract"
import { Clock, Context, Effect, Layer, Schedule } from "effect"

/** A scope a request falls in, with the limit that applies to it. */
export interface Quota {
  readonly scope: RateLimit.RateLimitScope
  readonly limit: number
}

/** What the limiter decided, reported for the tightest scope (or the one that refused). */
export interface RateDecision {
  readonly allowed: boolean
  readonly scope: RateLimit.RateLimitScope
  readonly limit: number
  readonly remaining: number
  /** Seconds until the scope's count next goes down. */
  readonly resetSeconds: number
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  readonly retryAfterSeconds: number
}

/** The number of one-second buckets a check spans: this second and the 60 before it. */
export const WINDOW_BUCKETS = 61

/** Counts of one subject and scope: [bucket, count] pairs, oldest first, within the window. */
type Buckets = Array<[bucket: number, count: number]>

const prune = (buckets: Buckets, now: number) => {
  const oldest = now - WINDOW_BUCKETS + 1
  let drop = 0
  while (drop < buckets.length && buckets[drop]![0] < oldest) drop++
  if (drop > 0) buckets.splice(0, drop)
}

/**
 * The decision for counted buckets, as a pure function so every store shares it.
 * `counts` maps each quota to its buckets (oldest first), `nowMs` is the current time.
 */
export const decide = (
  quotas: ReadonlyArray<Quota>,
  counts: ReadonlyArray<ReadonlyArray<readonly [number, number]>>,
  nowMs: number
): RateDecision => {
  const second = Math.floor(nowMs / 1000)
  // When bucket b leaves the window, in seconds from now.
  const expiry = (bucket: number) => Math.max(1, Math.ceil(((bucket + WINDOW_BUCKETS) * 1000 - nowMs) / 1000))
  let refused: RateDecision | undefined
  let tightest: RateDecision | undefined
  quotas.forEach((quota, i) => {
    const buckets = counts[i]!
    const used = buckets.reduce((sum, [, count]) => sum + count, 0)
    if (used >= quota.limit) {
      // The oldest buckets must leave until fewer than `limit` remain.
      let excess = used - quota.limit + 1
      let wait = 1
      for (const [bucket, count] of buckets) {
        excess -= count
        wait = expiry(bucket)
        if (excess <= 0) break
      }
      if (refused === undefined || wait > refused.retryAfterSeconds) {
        refused = {
          allowed: false,
          scope: quota.scope,
          limit: quota.limit,
          remaining: 0,
          resetSeconds: wait,
          retryAfterSeconds: wait
        }
      }
      return
    }
    const remaining = quota.limit - used - 1
    const oldest = buckets.length > 0 ? buckets[0]![0] : second
    const candidate: RateDecision = {
      allowed: true,
      scope: quota.scope,
      limit: quota.limit,
      remaining,
      resetSeconds: expiry(oldest),
      retryAfterSeconds: 0
    }
    if (
      tightest === undefined || remaining < tightest.remaining ||
      (remaining === tightest.remaining && quota.limit < tightest.limit)
    ) {
      tightest = candidate
    }
  })
  return refused ?? tightest!
}

/** Decides and counts requests against quotas. */
export class RateLimiter extends Context.Tag("core/RateLimiter")<RateLimiter, {
  /** Admits a request of `subject` falling in every scope of `quotas`, counting it only if admitted. */
  readonly consume: (subject: string, quotas: ReadonlyArray<Quota>) => Effect.Effect<RateDecision>
}>() {}

/**
 * An in-memory store for a single server process. Subjects idle for a whole window are
 * swept every minute, so memory follows the number of recently active subjects.
 */
export const layerMemory: Layer.Layer<RateLimiter> = Layer.scoped(
  RateLimiter,
  Effect.gen(function*() {
    const store = new Map<string, Buckets>()
    const sweep = Effect.gen(function*() {
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      for (const [key, buckets] of store) {
        prune(buckets, now)
        if (buckets.length === 0) store.delete(key)
      }
    })
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced("60 seconds")))
    return RateLimiter.of({
      consume: (subject, quotas) =>
        Effect.map(Clock.currentTimeMillis, (nowMs) => {
          const second = Math.floor(nowMs / 1000)
          const lists = quotas.map((quota) => {
            const key = `${subject}\u0000${quota.scope}`
            let buckets = store.get(key)
            if (buckets === undefined) {
              buckets = []
              store.set(key, buckets)
            }
            prune(buckets, second)
            return buckets
          })
          const decision = decide(quotas, lists, nowMs)
          if (decision.allowed) {
            for (const buckets of lists) {
              const last = buckets[buckets.length - 1]
              if (last !== undefined && last[0] === second) last[1]++
              else buckets.push([second, 1])
            }
          }
          return decision
        })
    })
  })
)
