/**
 * Orders: one bundle bought for one phone number, paid from the main wallet.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AccountId } from "./Account.js"
import { extensions, Failed } from "./ApiError.js"
import { BundleId } from "./Bundle.js"
import { integerParam } from "./Identifier.js"
import { Mode } from "./Mode.js"
import { Cedis } from "./Money.js"
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, ORDER_STATUSES, REFERENCE_PATTERN, REFERENCE_RULE } from "./OrderTerms.js"
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

const isoDate = /^\d{4}-\d{2}-\d{2}$/
const isoTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/

/** A date (`2026-11-01`) or a timestamp with its offset (`2026-11-01T08:00:00Z`). */
export const DateBound = Schema.String.pipe(
  Schema.filter(
    (s) => {
      if (isoTimestamp.test(s)) return !Number.isNaN(Date.parse(s))
      // A real calendar day: "2026-02-30" parses to another day, "2026-13-01" to nothing.
      const day = Date.parse(`${s}T00:00:00Z`)
      return isoDate.test(s) && !Number.isNaN(day) && new Date(day).toISOString().startsWith(s)
    },
    { message: () => "must be an ISO 8601 date (2026-11-01) or timestamp with offset (2026-11-01T08:00:00Z)" }
  )
).annotations({ identifier: "DateBound" })

/** True when a `DateBound` is a whole day rather than an instant. */
export const isWholeDay = (bound: string): boolean => isoDate.test(bound)

/** The page sizes of GET /orders, from `OrderTerms`. */
export { DEFAULT_PER_PAGE, MAX_PER_PAGE }

/** Query parameters of GET /orders. */
export const ListOrdersParams = Schema.Struct({
  page: Schema.optional(integerParam(1, 1_000_000)).annotations({ description: "Page number, default 1" }),
  per_page: Schema.optional(integerParam(1, MAX_PER_PAGE)).annotations({
    description: `Items per page, default ${DEFAULT_PER_PAGE}, at most ${MAX_PER_PAGE}`
  }),
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

/** Where a page sits in the whole list. */
export const Pagination = Schema.Struct({
  current_page: Schema.Int,
  per_page: Schema.Int,
  total: Schema.Int,
  last_page: Schema.Int
}).annotations({ identifier: "Pagination" })

/** The type of `Pagination`. */
export type Pagination = typeof Pagination.Type

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
