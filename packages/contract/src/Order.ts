/**
 * Orders: one bundle bought for one phone number, paid from the main wallet.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AccountId } from "./Account.js"
import { extensions, Failed } from "./ApiError.js"
import { BundleId } from "./Bundle.js"
import { Mode } from "./Mode.js"
import { Cedis } from "./Money.js"
import { ORDER_STATUSES, REFERENCE_PATTERN, REFERENCE_RULE } from "./OrderTerms.js"
import { ACCOUNT_LISTS, DateBound, params } from "./Page.js"
import { PhoneNumber } from "./Phone.js"
import { text } from "./Text.js"

/** `ORD-` followed by 12 characters of `0-9A-Z`. */
export const OrderNumber = Schema.String.pipe(Schema.pattern(/^ORD-[0-9A-Z]{12}$/), Schema.brand("OrderNumber"))

/** The type of `OrderNumber`. */
export type OrderNumber = typeof OrderNumber.Type

/** `pending` → `successful` | `failed`; terminal states never change. */
export const OrderStatus = Schema.Literal(...ORDER_STATUSES).annotations({
  message: () => `must be one of ${ORDER_STATUSES.join(", ")}`
})

/** The type of `OrderStatus`. */
export type OrderStatus = typeof OrderStatus.Type

/** The caller's own reference: 1 to 64 characters of `A-Z a-z 0-9 _ . : -`, unique per account. */
export const Reference = Schema.String.pipe(
  Schema.pattern(REFERENCE_PATTERN, { message: () => REFERENCE_RULE })
).annotations({ identifier: "Reference" })

/** The body of POST /orders. */
export const PlaceOrderPayload = Schema.Struct({
  bundle_id: BundleId,
  phone_number: PhoneNumber,
  reference: Schema.optional(Reference)
}).annotations({ identifier: "PlaceOrderPayload", parseOptions: { errors: "all" } })

/** The type of `PlaceOrderPayload`. */
export type PlaceOrderPayload = typeof PlaceOrderPayload.Type

const orderFields = {
  order_number: OrderNumber,
  bundle: Schema.String.annotations({ description: "Bundle label" }),
  network: Schema.String.annotations({ description: "Network name" }),
  phone_number: Schema.String.annotations({ description: "Recipient number, as it was sent" }),
  amount_paid: Cedis,
  status: OrderStatus,
  reference: Schema.NullOr(Schema.String).annotations({ description: "The caller's reference, null when none" }),
  created_at: Schema.Date.annotations({ description: "ISO 8601 UTC timestamp" })
}

/** An order as the place-order response shows it. */
export const PlacedOrder = Schema.Struct(orderFields).pipe(Schema.omit("network")).annotations({
  identifier: "PlacedOrder"
})

/** The type of `PlacedOrder`. */
export type PlacedOrder = typeof PlacedOrder.Type

/** An order as the order-status response shows it. */
export const OrderStatusView = Schema.Struct(orderFields).pipe(Schema.omit("reference")).annotations({
  identifier: "OrderStatusView"
})

/** The type of `OrderStatusView`. */
export type OrderStatusView = typeof OrderStatusView.Type

/** An order as lists show it: every field. */
export const Order = Schema.Struct(orderFields).annotations({ identifier: "Order" })

/** The type of `Order`. */
export type Order = typeof Order.Type

/** Query parameters of GET /orders. */
export const ListOrdersParams = Schema.Struct({
  ...params(ACCOUNT_LISTS),
  status: Schema.optional(OrderStatus),
  reference: Schema.optional(Reference),
  reference_prefix: Schema.optional(Reference).annotations({
    description: "Only orders whose reference starts with this (for example a batch's common prefix)"
  }),
  phone_number: Schema.optional(PhoneNumber),
  from: Schema.optional(DateBound),
  to: Schema.optional(DateBound)
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `ListOrdersParams`. */
export type ListOrdersParams = typeof ListOrdersParams.Type

/** 404: no order with that number for this account. */
export class OrderNotFound extends Schema.TaggedError<OrderNotFound>()(
  "OrderNotFound",
  { success: Failed, message: Schema.String, ...extensions("order_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}

/** An order as the operator sees it: with its account (the live one, for a test order) and its mode. */
export const AdminOrder = Schema.Struct({ ...Order.fields, account_id: AccountId, mode: Mode }).annotations({
  identifier: "AdminOrder"
})

/** The type of `AdminOrder`. */
export type AdminOrder = typeof AdminOrder.Type

/**
 * The body of POST /orders/{order_number}/resolve. `note` (failing only) is kept in the ledger
 * on the refund, as a wallet funding's note is: why the operator failed the order.
 */
export const ResolveOrderPayload = Schema.Struct({
  status: Schema.Literal("successful", "failed"),
  note: Schema.optional(text(500).annotations({ description: "Why; kept in the ledger on the refund (failed only)" }))
}).pipe(
  Schema.filter((payload) =>
    payload.note === undefined || payload.status === "failed" ||
    { path: ["note"], message: "is kept on the refund: give it when failing the order (a success moves no money)" }
  )
)
