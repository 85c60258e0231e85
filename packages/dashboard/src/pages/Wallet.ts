/** The wallet: balances and the ledger, with the API's filters. */
import type { Page } from "../App.js"
import { ghs, h, when } from "../Dom.js"
import { api } from "../Endpoints.js"
import { pathOf } from "../Paths.js"
import { balances } from "./Home.js"
import { filterForm, pager } from "./Orders.js"

export const wallet: Page = {
  title: "Wallet",
  render: async ({ app, query }) => {
    const filters: Record<string, string> = {}
    for (const name of ["wallet", "reason", "from", "to"]) {
      const value = query.get(name)
      if (value) filters[name] = value
    }
    const page = Number(query.get("page") ?? "1") || 1
    const answer = await api.ledger({ query: { ...filters, page, per_page: 20 } })
    const any = { value: "", label: "Any" }
    return h(
      "div",
      null,
      h("h1", null, "Wallet"),
      balances(answer.balance),
      h("h2", null, "Ledger"),
      filterForm(app.go, pathOf("wallet"), query, [
        {
          name: "wallet",
          label: "Wallet",
          options: [any, { value: "main", label: "Main" }, { value: "referral", label: "Referral" }, {
            value: "agent",
            label: "Agent"
          }]
        },
        {
          name: "reason",
          label: "Reason",
          options: [
            any,
            { value: "funding", label: "Funding" },
            { value: "order", label: "Order" },
            { value: "refund", label: "Refund" },
            { value: "adjustment", label: "Adjustment" }
          ]
        },
        { name: "from", label: "From", type: "date" },
        { name: "to", label: "To", type: "date" }
      ]),
      answer.entries.length === 0
        ? h("p", { class: "muted" }, "No entries.")
        : h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            null,
            h("caption", { class: "muted" }, "Wallet movements, newest first"),
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                h("th", { scope: "col" }, "When"),
                h("th", { scope: "col" }, "Wallet"),
                h("th", { scope: "col" }, "What"),
                h("th", { scope: "col", class: "num" }, "Amount"),
                h("th", { scope: "col", class: "num" }, "Balance")
              )
            ),
            h(
              "tbody",
              null,
              answer.entries.map((entry) =>
                h(
                  "tr",
                  null,
                  h("td", null, when(entry.created_at)),
                  h("td", null, entry.wallet),
                  h(
                    "td",
                    null,
                    entry.reason,
                    entry.order_number
                      ? [" ", h("a", { href: pathOf("order", { number: entry.order_number }) }, entry.order_number)]
                      : null,
                    entry.payment_number ? ` ${entry.payment_number}` : "",
                    entry.note ? h("span", { class: "muted" }, ` · ${entry.note}`) : null
                  ),
                  h("td", { class: "num" }, ghs(entry.amount)),
                  h("td", { class: "num" }, ghs(entry.balance_after))
                )
              )
            )
          )
        ),
      pager(pathOf("wallet"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}
