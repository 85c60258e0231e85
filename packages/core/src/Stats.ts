/**
 * The console's figures for its charts: daily totals (UTC days) and sales per network from the
 * daily rollups (`StatsDays.ts`, kept exact by triggers), so their cost follows the days asked
 * for, not the orders in them; orders per hour by status over the last hours and the pending
 * orders by age, each read by an index on its time column. Days and hours are UTC; every day and hour of the range is present,
 * with zeros where nothing happened.
 */
import { Stats as StatsContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Int8, Int8Number, orDie, rowsOf } from "./Database.js"
import { compactStatusCounts } from "./OrderStatusCounts.js"
import { compactStats } from "./StatsDays.js"
import * as Worker from "./Worker.js"

/** The daily range when `days` is left out. */
export const DEFAULT_DAYS = 30

/** The hourly range when `hours` is left out. */
export const DEFAULT_HOURS = 24

/** A UTC day's totals. */
const DailyRow = Schema.Struct({
  date: Schema.String,
  orders: Int8Number,
  sales: Int8,
  // Refunds are credits (positive in the ledger): shown as the amount refunded.
  refunds: Int8,
  funding: Int8,
  commissions: Int8
})

/** An hour's orders by status. */
const HourlyRow = Schema.Struct({
  hour: Schema.DateFromSelf,
  pending: Int8Number,
  successful: Int8Number,
  failed: Int8Number
})

/** A network's successful orders and their sum. */
const NetworkRow = Schema.Struct({
  network_id: Schema.NullOr(Schema.Number),
  name: Schema.String,
  orders: Int8Number,
  sales: Int8
})

/** The pending orders in each age bucket, `a` the youngest. */
const AgesRow = Schema.Struct({ a: Int8Number, b: Int8Number, c: Int8Number, d: Int8Number, e: Int8Number })

/** Reading the figures. */
export class Stats extends Effect.Service<Stats>()("core/Stats", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Folds the rollups' appended rows (`compactStats`) and the orders' kept counts by status
     * (`compactStatusCounts`); the worker runs it every minute.
     */
    const compact = Effect.forEach(
      [...compactStats, compactStatusCounts],
      (statement) => orDie(sql.unsafe(statement)),
      { discard: true }
    ).pipe(
      Effect.withSpan("Stats.compact")
    )
    yield* Effect.forkScoped(Worker.supervise("stats compaction", compact, { interval: "60 seconds" }))

    const get = Effect.fn("Stats.get")(function*(query: StatsContract.StatsParams) {
      const days = query.days ?? DEFAULT_DAYS
      const hours = query.hours ?? DEFAULT_HOURS
      // The first day of the range, midnight UTC, as an instant.
      const [range] = yield* orDie(rowsOf(
        Schema.Struct({ first_day: Schema.DateFromSelf, first_hour: Schema.DateFromSelf }),
        sql`
          SELECT (date_trunc('day', now() AT TIME ZONE 'UTC') - make_interval(days => ${days - 1})) AT TIME ZONE 'UTC'
              AS first_day,
            date_trunc('hour', now()) - make_interval(hours => ${hours - 1}) AS first_hour
        `
      ))
      const { first_day: firstDay, first_hour: firstHour } = range!

      const daily = yield* orDie(rowsOf(
        DailyRow,
        sql`
        WITH days AS (
          SELECT to_char(d, 'YYYY-MM-DD') AS date
          FROM generate_series(${firstDay}::timestamptz AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', interval '1 day') d
        ),
        o AS (
          SELECT to_char(day, 'YYYY-MM-DD') AS date, sum(orders)::int8 AS orders, sum(sales)::int8 AS sales
          FROM stats_order_days WHERE day >= (${firstDay}::timestamptz AT TIME ZONE 'UTC')::date GROUP BY 1
        ),
        l AS (
          SELECT to_char(day, 'YYYY-MM-DD') AS date, sum(refunds)::int8 AS refunds, sum(funding)::int8 AS funding,
            sum(commissions)::int8 AS commissions
          FROM stats_ledger_days WHERE day >= (${firstDay}::timestamptz AT TIME ZONE 'UTC')::date GROUP BY 1
        )
        SELECT days.date, coalesce(o.orders, 0) AS orders, coalesce(o.sales, 0) AS sales,
          coalesce(l.refunds, 0) AS refunds, coalesce(l.funding, 0) AS funding,
          coalesce(l.commissions, 0) AS commissions
        FROM days LEFT JOIN o USING (date) LEFT JOIN l USING (date)
        ORDER BY days.date
      `
      ))

      const hourly = yield* orDie(rowsOf(
        HourlyRow,
        sql`
        WITH hours AS (
          SELECT h AS hour FROM generate_series(${firstHour}::timestamptz, date_trunc('hour', now()), interval '1 hour') h
        ),
        o AS (
          SELECT date_trunc('hour', created_at) AS hour,
            count(*) FILTER (WHERE status = 'pending') AS pending,
            count(*) FILTER (WHERE status = 'successful') AS successful,
            count(*) FILTER (WHERE status = 'failed') AS failed
          FROM orders WHERE created_at >= ${firstHour} AND mode = 'live' GROUP BY 1
        )
        SELECT hours.hour, coalesce(o.pending, 0) AS pending, coalesce(o.successful, 0) AS successful,
          coalesce(o.failed, 0) AS failed
        FROM hours LEFT JOIN o USING (hour)
        ORDER BY hours.hour
      `
      ))

      const networks = yield* orDie(rowsOf(
        NetworkRow,
        sql`
        SELECT b.network_id, coalesce(n.name, min(s.network_name)) AS name, sum(s.successful)::int8 AS orders,
          sum(s.sales)::int8 AS sales
        FROM stats_order_days s LEFT JOIN bundles b ON b.id = s.bundle_id LEFT JOIN networks n ON n.id = b.network_id
        WHERE s.day >= (${firstDay}::timestamptz AT TIME ZONE 'UTC')::date
        GROUP BY b.network_id, n.name
        HAVING sum(s.successful) > 0
        ORDER BY sum(s.sales) DESC, b.network_id
      `
      ))

      const [ages] = yield* orDie(rowsOf(
        AgesRow,
        sql`
        SELECT
          count(*) FILTER (WHERE created_at > now() - interval '1 minute') AS a,
          count(*) FILTER (WHERE created_at <= now() - interval '1 minute' AND created_at > now() - interval '5 minutes') AS b,
          count(*) FILTER (WHERE created_at <= now() - interval '5 minutes' AND created_at > now() - interval '30 minutes') AS c,
          count(*) FILTER (WHERE created_at <= now() - interval '30 minutes' AND created_at > now() - interval '2 hours') AS d,
          count(*) FILTER (WHERE created_at <= now() - interval '2 hours') AS e
        FROM orders WHERE status = 'pending' AND mode = 'live'
      `
      ))

      const buckets = ["a", "b", "c", "d", "e"] as const
      return {
        daily,
        orders_per_hour: hourly,
        sales_by_network: networks,
        pending_age: StatsContract.PENDING_AGE_LABELS.map((label, i) => ({ label, count: ages![buckets[i]!] }))
      }
    })

    return { get, compact }
  })
}) {}
