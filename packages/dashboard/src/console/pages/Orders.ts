/**
 * Orders of every account: search by number, reference, phone, account and status; the
 * pending ones oldest first, each with a resolve form (successful, or failed with the reason
 * kept in the ledger note of the refund). Resolving carries one Idempotency-Key per intent
 * and the server settles an order once, so a double click or a retry never refunds twice.
 */
import type { Page } from "../../App.js"
import { ghs, h, when } from "../../Dom.js"
import { form } from "../../Form.js"
import { statusBadge } from "../../pages/Home.js"
import { filterForm, pager } from "../../pages/Orders.js"
import { keyFor, settled } from "../../Pending.js"
import { api, type Order } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { age, queryOf, table } from "../Ui.js"

const FILTERS = ["order_number", "reference", "phone_number", "account_id", "status", "older_than"] as const

const accountLink = (id: number) => h("a", { href: consolePath("account", { id: String(id) }) }, `#${id}`)

const orderCells = (o: Order) => [
  o.order_number,
  accountLink(o.account_id),
  o.network,
  o.bundle,
  o.phone_number,
  ghs(o.amount_paid),
  statusBadge(o.status),
  o.reference ?? "—",
  when(o.created_at)
]

const ORDER_COLUMNS = [
  "Order",
  "Account",
  "Network",
  "Bundle",
  "Number",
  ["Paid", true] as const,
  "Status",
  "Reference",
  "Placed"
]

/** The resolve form of one pending order. */
const resolveForm = (o: Order): Node => {
  const f = form({
    label: `Resolve ${o.order_number}`,
    submit: `Resolve ${o.order_number}`,
    pending: "Resolving…",
    fields: [
      {
        name: "status",
        label: "Outcome",
        options: [
          { value: "failed", label: "Failed: refund the main wallet" },
          { value: "successful", label: "Successful: the bundle was delivered" }
        ]
      },
      {
        name: "note",
        label: "Reason",
        hint: "Kept in the ledger note of the refund. Required when failing the order.",
        required: false,
        attrs: { maxlength: "500" }
      }
    ],
    onSubmit: async (values, handle) => {
      const status = values.status as "successful" | "failed"
      if (status === "failed" && values.note!.trim() === "") {
        return handle.showErrors({ note: ["Say why the order failed: the holder reads it in the ledger."] })
      }
      const payload = status === "failed" ? { status, note: values.note!.trim() } : { status }
      const intent = { order: o.order_number, ...payload }
      const answer = await api.resolve({
        path: { order_number: o.order_number },
        payload,
        headers: { "idempotency-key": keyFor("console-resolve", intent, "console-") }
      })
      settled("console-resolve", intent)
      // Done: nothing left to submit.
      handle.element.querySelectorAll("input, select").forEach((e) => ((e as HTMLInputElement).disabled = true))
      handle.element.querySelector(".actions")?.remove()
      handle.setMessage(
        answer.order.status === "failed"
          ? `${o.order_number} failed: ${ghs(answer.order.amount_paid)} refunded to account #${o.account_id}.`
          : `${o.order_number} is successful.`,
        "ok"
      )
    }
  })
  f.element.classList.add("inline-form")
  return f.element
}

/** The pending orders, oldest first (the queue an operator works through). */
const oldestPending = () => api.orders({ query: { status: "pending", sort: "oldest", per_page: 20 } })

export const orders: Page = {
  title: "Orders",
  render: async ({ app, query }) => {
    const filters = queryOf(query, FILTERS)
    const page = Number(query.get("page") ?? "1") || 1
    const searching = Object.keys(filters).length > 0
    const filterFields = filterForm(app.go, consolePath("orders"), query, [
      { name: "order_number", label: "Order number" },
      { name: "reference", label: "Reference" },
      { name: "phone_number", label: "Phone number", type: "tel", inputmode: "tel" },
      { name: "account_id", label: "Account number", type: "number", inputmode: "numeric" },
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
      { name: "older_than", label: "Older than (minutes)", type: "number", inputmode: "numeric" }
    ])
    let results: Node
    if (filters.order_number) {
      const one = await api.order({ path: { order_number: filters.order_number.trim().toUpperCase() } })
      results = h(
        "div",
        null,
        table("The order", ORDER_COLUMNS, [orderCells(one.order)]),
        one.order.status === "pending" ? resolveForm(one.order) : null
      )
    } else if (searching) {
      const { order_number: _, ...rest } = filters
      const answer = await api.orders({ query: { ...rest, page, per_page: 20 } })
      results = h(
        "div",
        null,
        h("p", { class: "muted" }, `${answer.pagination.total} order(s)`),
        table("Orders, newest first", ORDER_COLUMNS, answer.orders.map(orderCells), { testId: "orders" }),
        pager(consolePath("orders"), query, answer.pagination.current_page, answer.pagination.last_page)
      )
    } else {
      const pending = await oldestPending()
      results = h(
        "div",
        null,
        h("h2", null, `Pending orders, oldest first (${pending.pagination.total})`),
        pending.orders.length === 0
          ? h("p", { class: "muted" }, "No order is pending.")
          : h(
            "ul",
            { class: "plain", "data-testid": "pending-orders" },
            pending.orders.map((o) =>
              h(
                "li",
                { class: "card" },
                h(
                  "p",
                  null,
                  h("strong", null, o.order_number),
                  ` · ${age(o.created_at)} old · `,
                  accountLink(o.account_id),
                  ` · ${o.bundle} (${o.network}) to ${o.phone_number} · ${ghs(o.amount_paid)}`
                ),
                resolveForm(o)
              )
            )
          )
      )
    }
    return h("div", null, h("h1", null, "Orders"), filterFields, results)
  }
}
