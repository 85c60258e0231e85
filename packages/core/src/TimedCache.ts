/**
 * A cache whose answers expire: a plain map with a time limit, so a hit is a map read and a
 * clock read, with no fiber work, and can be read synchronously (`peek`) by code that runs
 * outside an effect.
 *
 * Concurrent misses on one key share one lookup. A lookup, once started, runs to its end,
 * so a request cut meanwhile cannot leave the others waiting. A lookup that was under way
 * when something was forgotten does not store its answer, so forgetting is exact: after
 * `forget` or `forgetAll`, no answer read before it is served again. Failed lookups are not
 * stored. Capacity bounds memory: past it the oldest entry goes.
 */
import { Deferred, Duration, Effect, FiberId } from "effect"

/** A cache of `lookup`'s answers by key. */
export interface TimedCache<K, A> {
  /** The cached answer for `key`, or the lookup's (shared with concurrent misses). */
  readonly get: (key: K) => Effect.Effect<A>
  /** The cached answer for `key` when there is one that has not expired, else `undefined`; never looks up. */
  readonly peek: (key: K) => A | undefined
  /** Forgets one key's answer (and the lookup under way for it). */
  readonly forget: (key: K) => Effect.Effect<void>
  /** Forgets every answer (and the lookups under way). */
  readonly forgetAll: Effect.Effect<void>
}

/** A cache of `lookup`'s answers, each kept for `timeToLive`, at most `capacity` of them; `span` names a lookup. */
export const make = <K, A>(options: {
  readonly lookup: (key: K) => Effect.Effect<A>
  readonly timeToLive: Duration.DurationInput
  readonly capacity: number
  readonly span: string
}): TimedCache<K, A> => {
  const ttlMillis = Duration.toMillis(options.timeToLive)
  const entries = new Map<K, { readonly expires: number; readonly value: A }>()
  const pending = new Map<K, Deferred.Deferred<A>>()
  let generation = 0

  const store = (key: K, value: A) => {
    entries.delete(key)
    if (entries.size >= options.capacity) entries.delete(entries.keys().next().value!)
    entries.set(key, { expires: Date.now() + ttlMillis, value })
  }

  const miss = (key: K) =>
    Effect.suspend(() => {
      const waiting = pending.get(key)
      if (waiting !== undefined) return Deferred.await(waiting)
      const deferred = Deferred.unsafeMake<A>(FiberId.none)
      pending.set(key, deferred)
      const started = generation
      return options.lookup(key).pipe(
        Effect.tap((value) => {
          if (started === generation) store(key, value)
        }),
        Effect.exit,
        Effect.flatMap((exit) => {
          if (pending.get(key) === deferred) pending.delete(key)
          return Effect.zipRight(Deferred.done(deferred, exit), exit)
        }),
        Effect.uninterruptible,
        Effect.withSpan(options.span, { captureStackTrace: false })
      )
    })

  const live = (key: K) => {
    const entry = entries.get(key)
    return entry !== undefined && entry.expires > Date.now() ? entry : undefined
  }

  return {
    // Decided when the effect runs, not when it is made: an effect kept and run again asks again.
    get: (key) =>
      Effect.suspend(() => {
        const entry = live(key)
        return entry !== undefined ? Effect.succeed(entry.value) : miss(key)
      }),
    peek: (key) => live(key)?.value,
    forget: (key) =>
      Effect.sync(() => {
        generation++
        entries.delete(key)
        pending.delete(key)
      }),
    forgetAll: Effect.sync(() => {
      generation++
      entries.clear()
      pending.clear()
    })
  }
}
