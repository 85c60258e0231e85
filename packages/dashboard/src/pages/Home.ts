/** Home: the balances, what needs attention, the quick actions and the recent orders (of the side shown). */
import type { Page } from "../App.js"
import { balances } from "../Balances.js"
import { h } from "../Dom.js"
import { api, type Home } from "../Endpoints.js"
import { ordersList } from "../OrderList.js"
import { pathOf } from "../Paths.js"
import { showBalance, side, testing } from "../TestMode.js"
import { count, ghs } from "../Words.js"

const attentionLine = (item: Home["attention"][number]): Node => {
  switch (item.kind) {
    case "pending_orders":
      return h("a", { href: `${pathOf("orders")}?status=pending` }, `${count(item.count, "order")} still pending`)
    case "pending_payments":
      return h(
        "a",
        { href: pathOf("fund") },
        `${count(item.count, "payment")} waiting for approval or a code`
      )
    case "failed_webhook_deliveries":
      return h(
        "a",
        { href: pathOf("webhooks") },
        `${count(item.count, "webhook delivery", "webhook deliveries")} failed`
      )
    case "low_balance":
      return h(
        "span",
        null,
        `Low balance: ${ghs(item.balance)} (below ${ghs(item.threshold)}). `,
        testing()
          ? "The test wallet is play money, refilled by the operators."
          : h("a", { href: pathOf("fund") }, "Fund your wallet")
      )
  }
}

export const home: Page = {
  title: "Home",
  render: async ({ life }) => {
    const data = await api.home({ query: side(), signal: life.signal })
    showBalance(data.balance.main)
    return h(
      "div",
      null,
      h("h1", null, testing() ? "Home (test mode)" : "Home"),
      balances(data.balance, testing()),
      h(
        "div",
        { class: "actions" },
        h("a", { href: pathOf("buy"), class: "button" }, "Buy a bundle"),
        testing() ? null : h("a", { href: pathOf("fund"), class: "button secondary" }, "Fund wallet"),
        h("a", { href: pathOf("bulk"), class: "button secondary" }, "Bulk from a file")
      ),
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
        ordersList(data.recent_orders, "The five newest orders"),
        h("p", null, h("a", { href: pathOf("orders") }, "All orders"))
      )
    )
  }
}
