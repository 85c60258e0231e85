/** Home: the three balances, the recent orders, and what needs attention. */
import type { Page } from "../App.js"
import { ghs, h } from "../Dom.js"
import { api, type Home, type Order } from "../Endpoints.js"
import { pathOf } from "../Paths.js"

/** A table of orders, each linked to its detail. */
export const ordersTable = (orders: ReadonlyArray<Order>, caption: string): Node =>
  orders.length === 0
    ? h("p", { class: "muted" }, "No orders yet.")
    : h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        null,
        h("caption", { class: "muted" }, caption),
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            h("th", { scope: "col" }, "Order"),
            h("th", { scope: "col" }, "Bundle"),
            h("th", { scope: "col" }, "Number"),
            h("th", { scope: "col", class: "num" }, "Paid"),
            h("th", { scope: "col" }, "Status")
          )
        ),
        h(
          "tbody",
          null,
          orders.map((order) =>
            h(
              "tr",
              null,
              h("td", null, h("a", { href: pathOf("order", { number: order.order_number }) }, order.order_number)),
              h("td", null, order.bundle),
              h("td", null, order.phone_number),
              h("td", { class: "num" }, ghs(order.amount_paid)),
              h("td", null, statusBadge(order.status))
            )
          )
        )
      )
    )

/** A status word, coloured by meaning (and still a word, for those who do not see colour). */
export const statusBadge = (status: string): Node => h("span", { class: `status status-${status}` }, status)

/** The three balances. */
export const balances = (balance: Home["balance"]): Node =>
  h(
    "section",
    { class: "balances", "aria-label": "Balances" },
    (["main", "referral", "agent"] as const).map((wallet) =>
      h(
        "div",
        { class: "card" },
        h("span", { class: "muted" }, `${wallet[0]!.toUpperCase()}${wallet.slice(1)} wallet`),
        h("strong", null, ghs(balance[wallet]))
      )
    )
  )

const attentionLine = (item: Home["attention"][number]): Node => {
  switch (item.kind) {
    case "pending_orders":
      return h("a", { href: `${pathOf("orders")}?status=pending` }, `${item.count} order(s) still pending`)
    case "pending_payments":
      return h("a", { href: pathOf("fund") }, `${item.count} payment(s) waiting for approval`)
    case "failed_webhook_deliveries":
      return h("a", { href: pathOf("webhooks") }, `${item.count} webhook delivery(ies) failed`)
    case "low_balance":
      return h(
        "span",
        null,
        `Low balance: ${ghs(item.balance)} (below ${ghs(item.threshold)}). `,
        h("a", { href: pathOf("fund") }, "Fund your wallet")
      )
  }
}

export const home: Page = {
  title: "Home",
  render: async () => {
    const data = await api.home()
    return h(
      "div",
      null,
      h("h1", null, "Home"),
      balances(data.balance),
      h(
        "section",
        { "aria-labelledby": "attention" },
        h("h2", { id: "attention" }, "Needs your attention"),
        data.attention.length === 0
          ? h("p", { class: "muted" }, "Nothing needs your attention.")
          : h("ul", { class: "plain" }, data.attention.map((item) => h("li", null, attentionLine(item))))
      ),
      h(
        "section",
        { "aria-labelledby": "recent" },
        h("h2", { id: "recent" }, "Recent orders"),
        ordersTable(data.recent_orders, "The five newest orders"),
        h(
          "p",
          null,
          h("a", { href: pathOf("buy") }, "Buy a bundle"),
          " · ",
          h("a", { href: pathOf("orders") }, "All orders")
        )
      )
    )
  }
}
