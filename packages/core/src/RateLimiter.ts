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
 * The store is the Layer: `layerMemory` serves one process; `layerSql` keeps the counts in
 * the database, so every process on it enforces one limit together.
 */
import type { RateLimit } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schedule } from "effect"
import { orDie } from "./Database.js"
import { prepared } from "./Prepared.js"
import * as Worker from "./Worker.js"

/** The limited scopes: the spec's three, the dashboard's, and failed authentications per client address. */
export type Scope = RateLimit.RateLimitScope | RateLimit.DashboardRateLimitScope | "auth"

/** A scope a request falls in, with the limit that applies to it. */
export interface Quota {
  readonly scope: Scope
  readonly limit: number
}

/** What the limiter decided, reported for the tightest scope (or the one that refused). */
export interface RateDecision {
  readonly allowed: boolean
  readonly scope: Scope
  readonly limit: number
  readonly remaining: number
  /** Seconds until the scope's count next goes down. */
  readonly resetSeconds: number
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  readonly retryAfterSeconds: number
}

/** The number of one-second buckets a check spans: this second and the 60 before it. */
export const WINDOW_BUCKETS = 61

/** Counted requests of one subject and scope: [second, count] pairs, oldest first. */
export type Counts = ReadonlyArray<readonly [second: number, count: number]>

/**
 * The decision for the counts in the window, as a pure function so every store shares it.
 * `counts[i]` holds the counts of `quotas[i]` (oldest first); `nowMs` is the current time.
 * An admitted request is reported as if already counted (`remaining` excludes it).
 */
export const decide = (quotas: ReadonlyArray<Quota>, counts: ReadonlyArray<Counts>, nowMs: number): RateDecision => {
  const second = Math.floor(nowMs / 1000)
  // When bucket b leaves the window, in seconds from now.
  const expiry = (bucket: number) => Math.max(1, Math.ceil(((bucket + WINDOW_BUCKETS) * 1000 - nowMs) / 1000))
  let refused: RateDecision | undefined
  let tightest: RateDecision | undefined
  quotas.forEach((quota, i) => {
    const buckets = (counts[i] ?? []).filter(([bucket]) => bucket > second - WINDOW_BUCKETS)
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
    const candidate: RateDecision = {
      allowed: true,
      scope: quota.scope,
      limit: quota.limit,
      remaining,
      resetSeconds: expiry(buckets.length > 0 ? buckets[0]![0] : second),
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
  /** What `consume` would decide, counting nothing. */
  readonly check: (subject: string, quotas: ReadonlyArray<Quota>) => Effect.Effect<RateDecision>
  /**
   * Gives back one request `consume` admitted for `subject` in each scope of `quotas` (its
   * newest), as if it had never been counted: an attempt that takes its slot before it is
   * judged returns it when it turns out not to count (a right password).
   */
  readonly release: (subject: string, quotas: ReadonlyArray<Quota>) => Effect.Effect<void>
  /**
   * `consume`, synchronously: present only where the counts live in this process's memory,
   * absent where deciding takes a database round trip.
   */
  readonly consumeNow?: (subject: string, quotas: ReadonlyArray<Quota>) => RateDecision
}>() {}

/**
 * An in-memory store for a single server process. Subjects idle for a whole window are
 * swept every minute, so memory follows the number of recently active subjects.
 */
export const layerMemory: Layer.Layer<RateLimiter> = Layer.scoped(
  RateLimiter,
  Effect.gen(function*() {
    const store = new Map<string, Array<[number, number]>>()
    const live = (key: string, second: number) => {
      const buckets = store.get(key) ?? []
      let drop = 0
      while (drop < buckets.length && buckets[drop]![0] <= second - WINDOW_BUCKETS) drop++
      if (drop > 0) buckets.splice(0, drop)
      return buckets
    }
    // One clock for every count, whichever way it is asked for (`consumeNow` has no fiber to ask).
    const clock = yield* Effect.clock
    const sweep = Effect.sync(() => {
      const second = Math.floor(clock.unsafeCurrentTimeMillis() / 1000)
      for (const key of store.keys()) {
        if (live(key, second).length === 0) store.delete(key)
      }
    })
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced("60 seconds")))

    const run = (subject: string, quotas: ReadonlyArray<Quota>, count: boolean, nowMs: number) => {
      const second = Math.floor(nowMs / 1000)
      const keys = quotas.map((quota) => `${subject}\u0000${quota.scope}`)
      const lists = keys.map((key) => live(key, second))
      const decision = decide(quotas, lists, nowMs)
      if (count && decision.allowed) {
        keys.forEach((key, i) => {
          const buckets = lists[i]!
          const last = buckets[buckets.length - 1]
          if (last !== undefined && last[0] === second) last[1]++
          else buckets.push([second, 1])
          store.set(key, buckets)
        })
      }
      return decision
    }

    return RateLimiter.of({
      consume: (subject, quotas) => Effect.sync(() => run(subject, quotas, true, clock.unsafeCurrentTimeMillis())),
      check: (subject, quotas) => Effect.sync(() => run(subject, quotas, false, clock.unsafeCurrentTimeMillis())),
      release: (subject, quotas) =>
        Effect.sync(() => {
          const second = Math.floor(clock.unsafeCurrentTimeMillis() / 1000)
          for (const quota of quotas) {
            const key = `${subject}\u0000${quota.scope}`
            const buckets = live(key, second)
            const last = buckets[buckets.length - 1]
            if (last === undefined) continue
            if (--last[1] === 0) buckets.pop()
          }
        }),
      consumeNow: (subject, quotas) => run(subject, quotas, true, clock.unsafeCurrentTimeMillis())
    })
  })
)

/**
 * A store in the database, shared by every process on it. One statement per decision: the
 * `bundles_rate_limit` function (migration 0002) takes a per-subject advisory lock, reads
 * the window's counts, counts the request when every scope has room, and returns the
 * counts it read with the database's clock, from which `decide` reports. Old buckets are
 * swept every minute.
 */
export const layerSql: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = Layer.scoped(
  RateLimiter,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const sweep = orDie(sql`
      DELETE FROM rate_limit_counts
      WHERE bucket <= floor(extract(epoch FROM clock_timestamp()))::bigint - ${WINDOW_BUCKETS}
    `)
    yield* Effect.forkScoped(
      Worker.supervise("rate limit sweep", sweep, { interval: "60 seconds" })
    )

    const run = (subject: string, quotas: ReadonlyArray<Quota>, count: boolean) =>
      Effect.gen(function*() {
        // Read by hand, not by a schema: decoding a busy window's pairs would cost a third of a
        // read on every request (docs/benchmarks.md); the shape is the function's (migration 0002).
        const [row] = yield* sql<{ now_ms: string; counts: Record<string, Array<[number, number]>> }>`${prepared(sql)}
          SELECT now_ms, counts FROM bundles_rate_limit(
            ${subject},
            ${`{${quotas.map((q) => q.scope).join(",")}}`}::text[],
            ${`{${quotas.map((q) => q.limit).join(",")}}`}::integer[],
            ${count}
          )
        `
        // The function applies the same rule as `decide` (admit when every scope has room) to
        // the same counts, so `decide` describes what it did.
        return decide(quotas, quotas.map((q) => row!.counts[q.scope] ?? []), Number(row!.now_ms))
      }).pipe(orDie, Effect.withSpan("RateLimiter.consume", { captureStackTrace: false }))

    // The newest bucket of each scope loses one count (a bucket left at 0 counts nothing until swept).
    const release = (subject: string, quotas: ReadonlyArray<Quota>) =>
      orDie(sql`
        UPDATE rate_limit_counts c SET count = c.count - 1
        FROM (
          SELECT scope, max(bucket) AS bucket FROM rate_limit_counts
          WHERE subject = ${subject} AND ${sql.in("scope", quotas.map((q) => q.scope))} AND count > 0
          GROUP BY scope
        ) newest
        WHERE c.subject = ${subject} AND c.scope = newest.scope AND c.bucket = newest.bucket
      `).pipe(Effect.asVoid, Effect.withSpan("RateLimiter.release", { captureStackTrace: false }))

    return RateLimiter.of({
      consume: (subject, quotas) => run(subject, quotas, true),
      check: (subject, quotas) => run(subject, quotas, false),
      release
    })
  })
)
