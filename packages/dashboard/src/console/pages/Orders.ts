/**
 * Orders of every account: search by number, reference, phone, account and status; the
 * pending ones oldest first, each with a resolve form (successful, or failed with the reason
 * kept in the ledger note of the refund). Resolving carries one Idempotency-Key per intent
 * and the server settles an order once, so a double click or a retry never refunds twice.
 */
import type { Page } from "../../App.js"
import { h } from "../../Dom.js"
import { form } from "../../Form.js"
import type { Life } from "../../Life.js"
import { type Column, filters, list, pageOf, pager, queryOf, status } from "../../List.js"
import { bundleOf } from "../../OrderList.js"
import { keyFor, settled } from "../../Pending.js"
import { age, count, ghs, when } from "../../Words.js"
import { api, type Order } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { accountLink } from "../Ui.js"

const FILTERS = ["order_number", "reference", "phone_number", "account_id", "status", "older_than"] as const

/** An order's columns, as the operator reads it: which account's, and how old while pending. */
const orderColumns = (life: Life): ReadonlyArray<Column<Order>> => [
  { label: "Order", place: "title", cell: (o) => h("span", { class: "id" }, o.order_number) },
  { label: "Status", place: "badge", cell: (o) => status(o.status) },
  { label: "Bundle", place: "line", cell: bundleOf },
  { label: "Number", place: "line", cell: (o) => o.phone_number },
  { label: "Paid", place: "amount", numeric: true, cell: (o) => ghs(o.amount_paid) },
  { label: "Account", cell: (o) => accountLink(o.account_id) },
  {
    label: "Placed",
    cell: (o) => `${when(o.created_at)}${o.status === "pending" ? ` (${age(o.created_at)} ago)` : ""}`
  },
  { label: "Reference", cell: (o) => o.reference ?? "—" },
  { label: "Resolve", place: "action", cell: (o) => (o.status === "pending" ? resolveForm(o, life) : null) }
]

/** The resolve form of one pending order. */
const resolveForm = (o: Order, life: Life): Node => {
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
      const question = status === "failed"
        ? `Fail ${o.order_number} and refund ${ghs(o.amount_paid)} to account #${o.account_id}?`
        : `Mark ${o.order_number} successful (the bundle was delivered)? Nothing is refunded.`
      if (!confirm(question)) return handle.setMessage("Not resolved.")
      const intent = { order: o.order_number, ...payload }
      const answer = await api.resolve({
        path: { order_number: o.order_number },
        payload,
        headers: { "idempotency-key": keyFor("console-resolve", intent, "console-") },
        signal: life.signal
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

export const orders: Page = {
  title: "Orders",
  render: async ({ app, life, query }) => {
    const chosen = queryOf(query, FILTERS)
    const searching = Object.keys(chosen).length > 0
    const filterBox = filters(app.go, consolePath("orders"), query, [
      { name: "order_number", label: "Order number" },
      { name: "reference", label: "Reference" },
      { name: "phone_number", label: "Phone number", phone: true },
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
    const columns = orderColumns(life)
    let results: Node
    if (chosen.order_number) {
      const one = await api.order({
        path: { order_number: chosen.order_number.trim().toUpperCase() },
        signal: life.signal
      })
      results = list({ caption: "The order", columns, rows: [one.order], empty: "", testId: "orders" })
    } else if (searching) {
      const { order_number: _, ...rest } = chosen
      const answer = await api.orders({ query: { ...rest, page: pageOf(query), per_page: 20 }, signal: life.signal })
      results = h(
        "div",
        null,
        h("p", { class: "count" }, count(answer.pagination.total, "order")),
        list({
          caption: "Orders, newest first",
          columns,
          rows: answer.orders,
          empty: "No order matches.",
          testId: "orders"
        }),
        pager(consolePath("orders"), query, answer.pagination.current_page, answer.pagination.last_page)
      )
    } else {
      const pending = await api.orders({
        query: { status: "pending", sort: "oldest", per_page: 20 },
        signal: life.signal
      })
      results = h(
        "div",
        null,
        h("h2", null, `Pending orders, oldest first (${pending.pagination.total})`),
        list({
          caption: "Pending orders, oldest first: resolve the ones the network will not settle",
          columns,
          rows: pending.orders,
          empty: "No order is pending.",
          testId: "pending-orders",
          rowProps: (o) => ({ "data-order": o.order_number })
        })
      )
    }
    return h("div", null, h("h1", null, "Orders"), filterBox, results)
  }
}
