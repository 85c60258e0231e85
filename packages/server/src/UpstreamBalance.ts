/**
 * The upstreams' balances, watched: each reading recorded for the metrics, a fall below the
 * threshold logged and sent to the operator as an alert (`OperatorAlerts`).
 */
import { Money } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Effect, Option, Schedule } from "effect"
import { operatorEvent, sendOperatorAlert } from "./OperatorAlerts.js"
import * as OutsideAnswers from "./OutsideAnswers.js"
import { Upstreams } from "./Upstreams.js"

/**
 * Watches every upstream's balance (`BUNDLES_UPSTREAM_BALANCE_SECONDS`) that has a
 * `low_balance`, and records it in `upstream_balances` (the metrics read it there). When it
 * drops below the threshold, once per crossing among all the server's processes: a warning log
 * line (`event: upstream.balance_low`) and, with `BUNDLES_OPERATOR_WEBHOOK_URL`, a signed
 * `upstream.balance_low` event to the operator. While it stays low, the log line is repeated
 * every 15 minutes by the process that sees it; a top-up logs a notice and re-arms the alert.
 */
export const balanceWatch = Effect.gen(function*() {
  const { all, operator, tuning } = yield* Upstreams
  const sql = yield* SqlClient.SqlClient
  const watched = all.filter((u) => Option.isSome(u.config.lowBalance))
  if (watched.length === 0) return
  const lastWarned = new Map<string, number>()

  /** Records a reading; whether it crossed the threshold (down or up) with this reading. */
  const record = (name: string, balance: bigint, threshold: bigint, low: boolean) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`
        INSERT INTO upstream_balances (upstream, balance, threshold, low)
        VALUES (${name}, ${balance}, ${threshold}, false)
        ON CONFLICT (upstream) DO NOTHING
      `
      const [before] = yield* sql<{ low: boolean }>`
        SELECT low FROM upstream_balances WHERE upstream = ${name} FOR UPDATE
      `
      const crossed = before!.low !== low
      yield* sql`
        UPDATE upstream_balances SET balance = ${balance}, threshold = ${threshold}, low = ${low},
          checked_at = now(), changed_at = ${crossed ? sql`now()` : sql`changed_at`}
        WHERE upstream = ${name}
      `
      return crossed
    }))

  const check = Effect.forEach(watched, (upstream) =>
    Effect.gen(function*() {
      const name = upstream.config.name
      const threshold = Option.getOrThrow(upstream.config.lowBalance)
      const balance = yield* Effect.either(upstream.client.balance())
      if (balance._tag === "Left") return
      const now = yield* Clock.currentTimeMillis
      const main = balance.right.main
      const low = main < threshold
      const crossed = yield* record(name, main, threshold, low).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("upstream balance could not be recorded", Cause.pretty(cause)), false)
        )
      )
      if (low) {
        const last = lastWarned.get(name)
        if (crossed || last === undefined || now - last > 15 * 60_000) {
          lastWarned.set(name, now)
          yield* Effect.logWarning(
            `upstream balance low: ${name} holds ${Money.formatGhs(main)}, below ${
              Money.formatGhs(threshold)
            }; top it up before orders wait`
          ).pipe(
            Effect.annotateLogs({ event: "upstream.balance_low", upstream: name, balance: Money.formatCedis(main) })
          )
        }
        if (crossed && Option.isSome(operator)) {
          yield* Effect.forkDaemon(
            sendOperatorAlert(
              operator.value,
              operatorEvent("upstream.balance_low", {
                upstream: name,
                balance: Number(Money.formatCedis(main)),
                threshold: Number(Money.formatCedis(threshold))
              }, now)
            ).pipe(Effect.provide(OutsideAnswers.httpClient))
          )
        }
      } else if (lastWarned.delete(name) || crossed) {
        yield* Effect.logInfo(`upstream balance restored: ${name} holds ${Money.formatGhs(main)}`)
      }
    }), { discard: true })
  yield* check.pipe(Effect.repeat(Schedule.spaced(tuning.balanceEvery)))
})
