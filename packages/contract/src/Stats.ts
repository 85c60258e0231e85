/**
 * The console's figures for its charts, in one call: daily totals, orders per hour by status,
 * sales per network and the age of the pending orders. Money is GHS as everywhere in the API.
 */
import { Schema } from "effect"
import { integerParam } from "./Identifier.js"
import { Cedis } from "./Money.js"

/** The most days and hours one call covers. */
export const MAX_DAYS = 90
export const MAX_HOURS = 168

/** Query parameters of GET /admin/v1/stats. */
export const StatsParams = Schema.Struct({
  days: Schema.optional(integerParam(1, MAX_DAYS)).annotations({ description: "Days of daily totals, default 30" }),
  hours: Schema.optional(integerParam(1, MAX_HOURS)).annotations({
    description: "Hours of orders per hour, default 24"
  })
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `StatsParams`. */
export type StatsParams = typeof StatsParams.Type

/** One day (UTC), oldest first; every day of the range is present. */
export const DailyTotals = Schema.Struct({
  date: Schema.String.annotations({ description: "YYYY-MM-DD, UTC" }),
  orders: Schema.Int.annotations({ description: "Orders placed that day" }),
  sales: Cedis.annotations({ description: "Paid for successful orders placed that day" }),
  refunds: Cedis.annotations({ description: "Refunded that day (ledger refunds)" }),
  funding: Cedis.annotations({ description: "Wallet funding that day (admin funding and payments)" }),
  commissions: Cedis.annotations({
    description: "Agent and referral commissions paid that day, less those taken back (live wallets)"
  })
}).annotations({ identifier: "DailyTotals" })

/** One hour (UTC), oldest first; every hour of the range is present. */
export const HourlyOrders = Schema.Struct({
  hour: Schema.Date.annotations({ description: "The start of the hour" }),
  pending: Schema.Int,
  successful: Schema.Int,
  failed: Schema.Int
}).annotations({ identifier: "HourlyOrders" })

/** Successful sales of one network over the daily range. */
export const NetworkSales = Schema.Struct({
  network_id: Schema.NullOr(Schema.Int),
  name: Schema.String,
  orders: Schema.Int,
  sales: Cedis
}).annotations({ identifier: "NetworkSales" })

/** The pending orders by age. */
export const PENDING_AGE_LABELS = ["<1m", "1-5m", "5-30m", "30m-2h", ">2h"] as const

/** One pending-age bucket. */
export const PendingAge = Schema.Struct({
  label: Schema.Literal(...PENDING_AGE_LABELS),
  count: Schema.Int
}).annotations({ identifier: "PendingAge" })

/** The figures of GET /admin/v1/stats. */
export const StatsFields = {
  daily: Schema.Array(DailyTotals),
  orders_per_hour: Schema.Array(HourlyOrders),
  sales_by_network: Schema.Array(NetworkSales),
  pending_age: Schema.Array(PendingAge)
}
