/** Orders: the API's filters, a page at a time, the detail of one, and a CSV export of the filtered list. */
import { toCsv } from "@databundle/client/Bulk"
import { MAX_PER_PAGE } from "@databundle/client/OrderTerms"
import type { Page } from "../App.js"
import { ghs, h, when } from "../Dom.js"
import { download } from "../Download.js"
import { api, type Order } from "../Endpoints.js"
import { form } from "../Form.js"
import { pathOf } from "../Paths.js"
import { ordersTable, statusBadge } from "./Home.js"

const FILTERS = ["status", "phone_number", "reference", "from", "to"] as const

/** Previous and next links over a listing's pages. */
export const pager = (base: string, query: URLSearchParams, current: number, last: number): Node => {
  const link = (page: number, label: string) => {
    const q = new URLSearchParams(query)
    q.set("page", String(page))
    return h("a", { href: `${base}?${q}` }, label)
  }
  return h(
    "nav",
    { "aria-label": "Pages", class: "actions" },
    current > 1 ? link(current - 1, "Previous page") : null,
    h("span", null, `Page ${current} of ${Math.max(last, 1)}`),
    current < last ? link(current + 1, "Next page") : null
  )
}

/** A filter form that navigates to the same page with the values in the query. */
export const filterForm = (
  go: (path: string) => void,
  base: string,
  query: URLSearchParams,
  fields: Parameters<typeof form>[0]["fields"]
) => {
  const f = form({
    label: "Filters",
    submit: "Apply filters",
    fields: fields.map((field) => ({ ...field, required: false, value: query.get(field.name) ?? "" })),
    onSubmit: async (values) => {
      const q = new URLSearchParams()
      for (const [name, value] of Object.entries(values)) if (value !== "") q.set(name, value)
      go(`${base}${q.size > 0 ? `?${q}` : ""}`)
    }
  })
  f.element.classList.add("filters")
  return f.element
}

const queryOf = (query: URLSearchParams, names: ReadonlyArray<string>) => {
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = query.get(name)
    if (value) out[name] = value
  }
  return out
}

export const orders: Page = {
  title: "Orders",
  render: async ({ app, query }) => {
    const filters = queryOf(query, FILTERS)
    const page = Number(query.get("page") ?? "1") || 1
    const answer = await api.orders({ query: { ...filters, page, per_page: 20 } })
    const exportButton = h("button", { type: "button", class: "secondary" }, "Export CSV")
    const exportStatus = h("span", { role: "status" })
    exportButton.addEventListener("click", async () => {
      exportButton.disabled = true
      exportStatus.textContent = "Preparing the export…"
      try {
        const all: Array<Order> = []
        for (let p = 1, last = 1; p <= last; p++) {
          const pageAnswer = await api.orders({ query: { ...filters, page: p, per_page: MAX_PER_PAGE } })
          all.push(...pageAnswer.orders)
          last = pageAnswer.pagination.last_page
          exportStatus.textContent = `Preparing the export: page ${p} of ${last}`
        }
        download(
          "orders.csv",
          toCsv(
            ["order_number", "created_at", "network", "bundle", "phone_number", "amount_paid", "status", "reference"],
            all.map((
              o
            ) => [
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
        exportStatus.textContent = `${all.length} order(s) exported.`
      } catch (error) {
        exportStatus.textContent = error instanceof Error ? error.message : String(error)
      } finally {
        exportButton.disabled = false
      }
    })
    return h(
      "div",
      null,
      h("h1", null, "Orders"),
      filterForm(app.go, pathOf("orders"), query, [
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
        { name: "phone_number", label: "Phone number", type: "tel", inputmode: "tel" },
        { name: "reference", label: "Reference" },
        { name: "from", label: "From", type: "date" },
        { name: "to", label: "To", type: "date" }
      ]),
      h("div", { class: "actions" }, exportButton, exportStatus),
      h("p", { class: "muted" }, `${answer.pagination.total} order(s)`),
      ordersTable(answer.orders, "Orders, newest first"),
      pager(pathOf("orders"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}

export const order: Page = {
  title: "Order",
  render: async ({ params }) => {
    const { order: o } = await api.order({ path: { order_number: params.number! } })
    return h(
      "div",
      null,
      h("h1", null, `Order ${o.order_number}`),
      h(
        "dl",
        { class: "detail card" },
        h("dt", null, "Status"),
        h("dd", null, statusBadge(o.status)),
        h("dt", null, "Network"),
        h("dd", null, o.network),
        h("dt", null, "Bundle"),
        h("dd", null, o.bundle),
        h("dt", null, "Number"),
        h("dd", null, o.phone_number),
        h("dt", null, "Paid"),
        h("dd", null, ghs(o.amount_paid)),
        h("dt", null, "Reference"),
        h("dd", null, o.reference ?? "—"),
        h("dt", null, "Placed"),
        h("dd", null, when(o.created_at))
      ),
      h("p", null, h("a", { href: pathOf("orders") }, "All orders"))
    )
  }
}
