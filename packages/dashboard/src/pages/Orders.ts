/** Orders (of the side shown): the API's filters, a page at a time, the detail of one, and a CSV export of the filtered list. */
import { toCsv } from "@databundle/client/Bulk"
import { MAX_PER_PAGE } from "@databundle/client/OrderTerms"
import type { Page } from "../App.js"
import { h } from "../Dom.js"
import { download } from "../Download.js"
import { api, type Order } from "../Endpoints.js"
import { filters, pageOf, pager, queryOf, status } from "../List.js"
import { ordersList, testMark } from "../OrderList.js"
import { pathOf } from "../Paths.js"
import { side, testing } from "../TestMode.js"
import { count, ghs, when } from "../Words.js"

const FILTERS = ["status", "phone_number", "reference", "from", "to"] as const

export const orders: Page = {
  title: "Orders",
  render: async ({ app, life, query }) => {
    const chosen = queryOf(query, FILTERS)
    const answer = await api.orders({
      query: { ...chosen, ...side(), page: pageOf(query), per_page: 20 },
      signal: life.signal
    })
    const exportButton = h("button", { type: "button", class: "secondary" }, "Export CSV")
    const exportStatus = h("span", { role: "status" })
    exportButton.addEventListener("click", async () => {
      exportButton.disabled = true
      exportStatus.textContent = "Preparing the export…"
      try {
        const all: Array<Order> = []
        for (let p = 1, last = 1; p <= last; p++) {
          const page = await api.orders({
            query: { ...chosen, ...side(), page: p, per_page: MAX_PER_PAGE },
            signal: life.signal
          })
          all.push(...page.orders)
          last = page.pagination.last_page
          exportStatus.textContent = `Preparing the export: page ${p} of ${last}`
        }
        download(
          testing() ? "test-orders.csv" : "orders.csv",
          toCsv(
            ["order_number", "created_at", "network", "bundle", "phone_number", "amount_paid", "status", "reference"],
            all.map((o) => [
              o.order_number,
              o.created_at,
              o.network,
              o.bundle,
              o.phone_number,
              o.amount_paid.toFixed(2),
              o.status,
              o.reference ?? ""
            ])
          )
        )
        exportStatus.textContent = `${count(all.length, "order")} exported.`
      } catch (error) {
        exportStatus.textContent = error instanceof Error ? error.message : String(error)
      } finally {
        exportButton.disabled = false
      }
    })
    return h(
      "div",
      null,
      h("h1", null, testing() ? "Orders (test mode)" : "Orders"),
      filters(app.go, pathOf("orders"), query, [
        {
          name: "status",
          label: "Status",
          options: [
            { value: "", label: "Any" },
            { value: "pending", label: "Pending" },
            { value: "successful", label: "Successful" },
            { value: "failed", label: "Failed" }
          ]
        },
        { name: "phone_number", label: "Phone number", phone: true },
        { name: "reference", label: "Reference" },
        { name: "from", label: "From", type: "date" },
        { name: "to", label: "To", type: "date" }
      ]),
      h(
        "div",
        { class: "actions" },
        h("p", { class: "count" }, count(answer.pagination.total, "order")),
        exportButton,
        exportStatus
      ),
      ordersList(answer.orders, "Orders, newest first"),
      pager(pathOf("orders"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}

export const order: Page = {
  title: "Order",
  render: async ({ life, params }) => {
    const { order: o } = await api.order({
      path: { order_number: params.number! },
      query: side(),
      signal: life.signal
    })
    const row = (label: string, value: Node | string) => [h("dt", null, label), h("dd", null, value)]
    return h(
      "div",
      null,
      h("h1", null, "Order ", h("span", { class: "id" }, o.order_number), " ", testMark()),
      h(
        "dl",
        { class: "detail card" },
        row("Status", status(o.status)),
        row("Bundle", o.bundle),
        row("Network", o.network),
        row("Number", o.phone_number),
        row("Paid", ghs(o.amount_paid)),
        row("Reference", o.reference ?? "—"),
        row("Placed", when(o.created_at))
      ),
      o.status === "failed"
        ? h("p", { class: "muted" }, "The network refused it; the amount was refunded to your wallet.")
        : null,
      h(
        "p",
        { class: "actions" },
        h("a", { href: pathOf("orders"), class: "button secondary" }, "All orders"),
        h(
          "a",
          { href: pathOf("buy"), class: "button secondary" },
          "Buy another"
        )
      )
    )
  }
}
