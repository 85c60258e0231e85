/**
 * The holder's orders as a list (cards on a phone): number, status, bundle, phone number and
 * price first, then when and under which reference. Home, the orders page and later pages
 * (an order's warnings, a referral's orders) show orders with it. Test orders are marked.
 */
import { h } from "./Dom.js"
import type { Order } from "./Endpoints.js"
import { type Column, list, status } from "./List.js"
import { pathOf } from "./Paths.js"
import { testing } from "./TestMode.js"
import { ghs, when } from "./Words.js"

/** A "Test" mark beside what belongs to the test side. */
export const testMark = (): Node | null => testing() ? h("span", { class: "mode mode-test" }, "Test") : null

/** An order's bundle, with its network when the bundle's name does not say it ("MTN 1GB", "1GB · AT iShare"). */
export const bundleOf = (order: { readonly bundle: string; readonly network: string }): string =>
  order.bundle.toLowerCase().startsWith(order.network.toLowerCase())
    ? order.bundle
    : `${order.bundle} · ${order.network}`

/** The columns of an order. */
export const orderColumns: ReadonlyArray<Column<Order>> = [
  {
    label: "Order",
    place: "title",
    cell: (
      o
    ) => [h("a", { href: pathOf("order", { number: o.order_number }), class: "id" }, o.order_number), " ", testMark()]
  },
  { label: "Status", place: "badge", cell: (o) => status(o.status) },
  { label: "Bundle", place: "line", cell: (o) => bundleOf(o) },
  { label: "Number", place: "line", cell: (o) => o.phone_number },
  { label: "Paid", place: "amount", numeric: true, cell: (o) => ghs(o.amount_paid) },
  { label: "Placed", cell: (o) => when(o.created_at) },
  { label: "Reference", cell: (o) => o.reference ?? "—" }
]

/** A list of orders, each linked to its detail. */
export const ordersList = (orders: ReadonlyArray<Order>, caption: string, testId = "orders"): Node =>
  list({
    caption,
    columns: orderColumns,
    rows: orders,
    empty: testing() ? "No test orders yet." : "No orders yet.",
    testId
  })
