/**
 * How the background workers (fulfilment, payments, webhook delivery, mail, rate-limit sweep)
 * run their passes forever. While a pass keeps failing (the database is down, say), a worker
 * writes one line when it starts failing and one when it recovers, never a line per attempt,
 * and waits longer after each failure (the poll interval, doubled each time, at most
 * `MAX_BACKOFF`), so an outage neither floods the log nor the database as it comes back.
 */
import { Cause, Clock, Duration, Effect, Exit } from "effect"

/** The longest wait between two failing passes. */
export const MAX_BACKOFF = Duration.seconds(30)

/** The wait after the `failures`th failure in a row: `interval` doubled each time, at most `MAX_BACKOFF`. */
export const backoff = (interval: Duration.DurationInput, failures: number): Duration.Duration =>
  Duration.min(Duration.times(Duration.decode(interval), 2 ** Math.min(failures - 1, 30)), MAX_BACKOFF)

/** The one-line text of a failure: its first error's message, no stack. */
const reason = (cause: Cause.Cause<unknown>) => {
  const squashed = Cause.squash(cause)
  return squashed instanceof Error ? squashed.message : String(squashed)
}

/**
 * Runs `pass` forever, `idle` between two passes that succeeded (a sleep, or a wait for work),
 * backing off after failures; logs `NAME failing` once when a run of failures starts and
 * `NAME recovered` (with how many failures and how long) when a pass succeeds again.
 */
export const supervise = <E, R, R2 = never>(
  name: string,
  pass: Effect.Effect<unknown, E, R>,
  options: { readonly interval: Duration.DurationInput; readonly idle?: Effect.Effect<unknown, never, R2> }
): Effect.Effect<never, never, R | R2> =>
  Effect.gen(function*() {
    const idle = options.idle ?? Effect.sleep(options.interval)
    let failures = 0
    let since = 0
    for (;;) {
      const exit = yield* Effect.exit(pass)
      if (Exit.isSuccess(exit)) {
        if (failures > 0) {
          const downMs = (yield* Clock.currentTimeMillis) - since
          yield* Effect.logInfo(`${name} recovered`).pipe(Effect.annotateLogs({ failures, down_ms: downMs }))
          failures = 0
        }
        yield* idle
        continue
      }
      if (Cause.isInterruptedOnly(exit.cause)) return yield* Effect.interrupt
      failures++
      if (failures === 1) {
        since = yield* Clock.currentTimeMillis
        yield* Effect.logWarning(`${name} failing; retrying with back-off until it recovers`).pipe(
          Effect.annotateLogs({ error: reason(exit.cause) })
        )
      }
      yield* Effect.sleep(backoff(options.interval, failures))
    }
  })
