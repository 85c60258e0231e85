/**
 * The overview: what needs the operator now (funding requests, pending orders, failing
 * webhooks) and the charts of GET /stats: orders per hour by status, daily totals, sales per
 * network and the pending orders by age.
 */
import type { Page } from "../../App.js"
import { h } from "../../Dom.js"
import { count, ghs } from "../../Words.js"
import { barChart, hbarChart, STATUS_COLORS } from "../Chart.js"
import { api, type Stats } from "../Endpoints.js"
import { consolePath } from "../Paths.js"

const hourLabel = (iso: string) => `${new Date(iso).getUTCHours().toString().padStart(2, "0")}h`
const dayLabel = (date: string) => date.slice(5)
const cedis = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(0))

export const overview: Page = {
  title: "Overview",
  render: async ({ life }) => {
    const { signal } = life
    // Each part stands alone: one figure the server cannot give leaves the others on the page.
    const [stats, waiting, pending, hooks] = await Promise.allSettled([
      api.stats({ query: { days: 14, hours: 24 }, signal }),
      api.payments({ query: { status: "pending", method: "manual_transfer", per_page: 1 }, signal }),
      api.orders({ query: { status: "pending", per_page: 1 }, signal }),
      api.webhooks({ signal })
    ])
    const unavailable = (result: PromiseRejectedResult) =>
      h(
        "p",
        { class: "form-message", role: "alert" },
        result.reason instanceof Error ? result.reason.message : "Unavailable"
      )
    /** One thing that needs the operator: how many, said with its noun, and where to act on it. */
    const attention = (
      result: PromiseSettledResult<number>,
      noun: readonly [singular: string, plural: string],
      href: string
    ) =>
      h(
        "a",
        { class: "card attention", href },
        result.status === "fulfilled"
          ? [h("strong", null, String(result.value)), ` ${result.value === 1 ? noun[0] : noun[1]}`]
          : `${noun[1]}: unavailable`
      )
    const figureOf = <A>(result: PromiseSettledResult<A>, f: (a: A) => number): PromiseSettledResult<number> =>
      result.status === "fulfilled" ? { status: "fulfilled", value: f(result.value) } : result
    return h(
      "div",
      null,
      h("h1", null, "Overview"),
      h(
        "section",
        { class: "balances", "aria-label": "Needs attention" },
        attention(
          figureOf(waiting, (w) => w.pagination.total),
          ["funding request waiting", "funding requests waiting"],
          consolePath("money")
        ),
        attention(
          figureOf(pending, (p) => p.pagination.total),
          ["order pending", "orders pending"],
          consolePath("orders")
        ),
        attention(
          figureOf(hooks, (x) => x.endpoints.filter((e) => e.failing_since !== null || e.abandoned > 0).length),
          ["webhook endpoint failing", "webhook endpoints failing"],
          consolePath("webhooks")
        )
      ),
      stats.status === "rejected" ? unavailable(stats) : charts(stats.value)
    )
  }
}

const charts = (stats: Stats): Node => {
  const today = stats.daily[stats.daily.length - 1]
  const hours = stats.orders_per_hour
  const ordersToday = hours.reduce((n, x) => n + x.pending + x.successful + x.failed, 0)
  return h(
    "div",
    null,
    today
      ? h(
        "p",
        null,
        `Today (UTC): ${count(today.orders, "order")}, ${ghs(today.sales)} sold, ${ghs(today.refunds)} refunded, ${
          ghs(today.funding)
        } funded, ${ghs(today.commissions)} paid in commissions.`
      )
      : null,
    h(
      "div",
      { class: "charts" },
      barChart({
        title: "Orders per hour (UTC), by status, last 24 hours",
        labels: hours.map((x) => hourLabel(x.hour)),
        series: [
          { name: "successful", color: STATUS_COLORS.successful },
          { name: "pending", color: STATUS_COLORS.pending },
          { name: "failed", color: STATUS_COLORS.failed }
        ],
        values: hours.map((x) => [x.successful, x.pending, x.failed]),
        summary: `${count(ordersToday, "order")} in the last 24 hours`
      }),
      barChart({
        title: "Daily totals (GH₵, UTC days), last 14 days",
        labels: stats.daily.map((d) => dayLabel(d.date)),
        series: [
          { name: "sales", color: "#0b6e4f" },
          { name: "refunds", color: "#b42318" },
          { name: "funding", color: "#1f5fa8" },
          { name: "commissions", color: "#7a4fa8" }
        ],
        values: stats.daily.map((d) => [d.sales, d.refunds, d.funding, d.commissions]),
        format: cedis,
        summary: `${ghs(stats.daily.reduce((n, d) => n + d.sales, 0))} sold over ${count(stats.daily.length, "day")}`
      }),
      hbarChart({
        title: "Sales per network (GH₵, last 14 days)",
        labels: stats.sales_by_network.map((n) => n.name),
        values: stats.sales_by_network.map((n) => n.sales),
        color: "#0b6e4f",
        format: (n) => ghs(n),
        summary: stats.sales_by_network.map((n) => `${n.name} ${ghs(n.sales)}`).join(", ") || "no sales"
      }),
      hbarChart({
        title: "Pending orders by age",
        labels: stats.pending_age.map((b) => b.label),
        values: stats.pending_age.map((b) => b.count),
        color: STATUS_COLORS.pending,
        summary: stats.pending_age.map((b) => `${b.label}: ${b.count}`).join(", ")
      })
    )
  )
}
