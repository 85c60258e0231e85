/**
 * An order's row: the columns every read of an order selects, the schemas they are decoded
 * with, and what the API and the provider are shown of them.
 */
import { Account, Mode, Order } from "@databundle/contract"
import { Schema } from "effect"
import { Int8 } from "./Database.js"
import type { FulfillmentRequest } from "./Fulfillment.js"

/** An order's row as `ORDER_COLUMNS` read it. */
export const OrderRow = Schema.Struct({
  id: Schema.String,
  order_number: Order.OrderNumber,
  account_id: Account.AccountId,
  bundle_label: Schema.String,
  network_name: Schema.String,
  phone_number: Schema.String,
  amount: Int8,
  status: Order.OrderStatus,
  reference: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})

/** The type of `OrderRow`. */
export type OrderRow = typeof OrderRow.Type

/** An order with what fulfilment needs to deliver it. */
export const DeliverableRow = Schema.Struct({
  ...OrderRow.fields,
  bundle_key: Schema.String,
  network_slug: Schema.String,
  /** `test` orders are always the simulator's, whatever provider live ones have. */
  mode: Mode.Mode
})

/** The type of `DeliverableRow`. */
export type DeliverableRow = typeof DeliverableRow.Type

export const ORDER_COLUMNS = "o.id, o.order_number, o.account_id, o.bundle_label, o.network_name, o.phone_number, " +
  "o.amount, o.status, o.reference, o.created_at"

export const toOrder = (row: OrderRow): Order.Order => ({
  order_number: row.order_number,
  bundle: row.bundle_label,
  network: row.network_name,
  phone_number: row.phone_number,
  amount_paid: row.amount,
  status: row.status,
  reference: row.reference,
  created_at: row.created_at
})

/** An order row with what the operator sees besides: the live account (also of a test order) and the mode. */
export const AdminOrderRow = Schema.Struct({
  ...OrderRow.fields,
  owner_id: Account.AccountId,
  mode: Mode.Mode
})

/** The type of `AdminOrderRow`. */
export type AdminOrderRow = typeof AdminOrderRow.Type

/** The columns an `AdminOrderRow` adds to `ORDER_COLUMNS`. */
export const ADMIN_COLUMNS =
  "(SELECT COALESCE(a.live_account_id, a.id) FROM accounts a WHERE a.id = o.account_id) AS owner_id, o.mode"

export const toAdminOrder = (row: AdminOrderRow): Order.AdminOrder => ({
  ...toOrder(row),
  account_id: row.owner_id,
  mode: row.mode
})

export const toRequest = (row: DeliverableRow): FulfillmentRequest => ({
  orderNumber: row.order_number,
  networkSlug: row.network_slug,
  bundleKey: row.bundle_key,
  phoneNumber: row.phone_number,
  amount: row.amount,
  createdAt: row.created_at
})
