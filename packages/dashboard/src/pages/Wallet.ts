/** The wallet (of the side shown): balances and the ledger, with the API's filters. */
import type { Page } from "../App.js"
import { balances } from "../Balances.js"
import { h } from "../Dom.js"
import { api } from "../Endpoints.js"
import { ledgerList } from "../LedgerList.js"
import { filters, pageOf, pager, queryOf } from "../List.js"
import { pathOf } from "../Paths.js"
import { showBalance, side, testing } from "../TestMode.js"
import { count } from "../Words.js"
import { earningsSection } from "./Earnings.js"

export const wallet: Page = {
  title: "Wallet",
  render: async ({ app, life, query }) => {
    const answer = await api.ledger({
      query: { ...queryOf(query, ["wallet", "reason", "from", "to"]), ...side(), page: pageOf(query), per_page: 20 },
      signal: life.signal
    })
    showBalance(answer.balance.main)
    const programmes = testing() ? null : await earningsSection(app, life, answer.balance)
    const any = { value: "", label: "Any" }
    return h(
      "div",
      null,
      h("h1", null, testing() ? "Wallet (test mode)" : "Wallet"),
      balances(answer.balance, testing()),
      testing()
        ? h(
          "p",
          { class: "muted" },
          "The test wallet holds play money; the operators refill it. Test orders pay from it."
        )
        : h("p", null, h("a", { href: pathOf("fund"), class: "button" }, "Fund your wallet")),
      programmes,
      h("h2", null, "Ledger"),
      filters(app.go, pathOf("wallet"), query, [
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
            { value: "adjustment", label: "Adjustment" },
            { value: "commission", label: "Commission" },
            { value: "commission_reversal", label: "Commission taken back" },
            { value: "transfer", label: "Transfer" }
          ]
        },
        { name: "from", label: "From", type: "date" },
        { name: "to", label: "To", type: "date" }
      ]),
      h("p", { class: "count" }, count(answer.pagination.total, "movement")),
      ledgerList(answer.entries, {
        caption: "Wallet movements, newest first",
        orderHref: (number) => pathOf("order", { number })
      }),
      pager(pathOf("wallet"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}
