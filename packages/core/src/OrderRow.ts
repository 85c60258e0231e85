/**
 * An order's row: the columns every read of an order selects, the shapes they read into, and
 * what the API and the provider are shown of them.
 */
import type { Account, Order } from "@databundle/contract"
import { int8 } from "./Database.js"
import type { FulfillmentRequest } from "./Fulfillment.js"

export interface OrderRow {
  readonly id: string
  readonly order_number: string
  readonly account_id: number
  readonly bundle_label: string
  readonly network_name: string
  readonly phone_number: string
  readonly amount: string
  readonly status: Order.OrderStatus
  readonly reference: string | null
  readonly created_at: Date
}

/** An order with what fulfilment needs to deliver it. */
export interface DeliverableRow extends OrderRow {
  readonly bundle_key: string
  readonly network_slug: string
  /** `test` orders are always the simulator's, whatever provider live ones have. */
  readonly mode: "live" | "test"
}

export const ORDER_COLUMNS = "o.id, o.order_number, o.account_id, o.bundle_label, o.network_name, o.phone_number, " +
  "o.amount, o.status, o.reference, o.created_at"

export const toOrder = (row: OrderRow): Order.Order => ({
  order_number: row.order_number as Order.OrderNumber,
  bundle: row.bundle_label,
  network: row.network_name,
  phone_number: row.phone_number,
  amount_paid: int8(row.amount),
  status: row.status,
  reference: row.reference,
  created_at: row.created_at
})

/** An order row with what the operator sees besides: the live account (also of a test order) and the mode. */
export interface AdminOrderRow extends OrderRow {
  readonly owner_id: number
  readonly mode: "live" | "test"
}

/** The columns an `AdminOrderRow` adds to `ORDER_COLUMNS`. */
export const ADMIN_COLUMNS =
  "(SELECT COALESCE(a.live_account_id, a.id) FROM accounts a WHERE a.id = o.account_id) AS owner_id, o.mode"

export const toAdminOrder = (row: AdminOrderRow): Order.AdminOrder => ({
  ...toOrder(row),
  account_id: row.owner_id as Account.AccountId,
  mode: row.mode
})

export const toRequest = (row: DeliverableRow): FulfillmentRequest => ({
  orderNumber: row.order_number,
  networkSlug: row.network_slug,
  bundleKey: row.bundle_key,
  phoneNumber: row.phone_number,
  amount: int8(row.amount),
  createdAt: row.created_at
})
