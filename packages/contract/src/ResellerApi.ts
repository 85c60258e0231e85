/**
 * The public reseller API, mounted at `/api/v1`.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  BadRequest,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  RequestTimeout,
  ServerError,
  Succeeded,
  ValidationError
} from "./ApiError.js"
import { ApiKeyAuth } from "./ApiKey.js"
import { Bundle, BundleUnavailable } from "./Bundle.js"
import { BodyLimit, DEFAULT_BODY_LIMIT, RateLimitScopes } from "./EndpointPolicy.js"
import { IntegerText } from "./Identifier.js"
import { Cedis } from "./Money.js"
import { Network, NetworkId, NetworkNotFound } from "./Network.js"
import {
  ListOrdersParams,
  Order,
  OrderNotFound,
  OrderStatusView,
  Pagination,
  PlacedOrder,
  PlaceOrderPayload
} from "./Order.js"
import { Balance, InsufficientBalance } from "./Wallet.js"

/** The path prefix of the public API. */
export const RESELLER_PREFIX = "/api/v1"

/** 200 of GET /balance. */
export const BalanceResponse = Schema.Struct({ success: Succeeded, balance: Balance })

/** 200 of GET /networks. */
export const NetworksResponse = Schema.Struct({ success: Succeeded, networks: Schema.Array(Network) })

/** 200 of GET /networks/{network_id}/bundles. */
export const BundlesResponse = Schema.Struct({
  success: Succeeded,
  network: Schema.String.annotations({ description: "Network name" }),
  bundles: Schema.Array(Bundle)
})

/** 200 of POST /orders, also for an idempotent replay (then with `Idempotent-Replayed: true`). */
export const PlaceOrderResponse = Schema.Struct({
  success: Succeeded,
  message: Schema.String,
  order: PlacedOrder,
  wallet_balance: Cedis.annotations({ description: "Main wallet balance after the order" })
})

/** The type of `PlaceOrderResponse`. */
export type PlaceOrderResponse = typeof PlaceOrderResponse.Type

/** 200 of GET /orders/{order_number}. */
export const OrderResponse = Schema.Struct({ success: Succeeded, order: OrderStatusView })

/** 200 of GET /orders. */
export const OrdersPage = Schema.Struct({ success: Succeeded, orders: Schema.Array(Order), pagination: Pagination })

/** The type of `OrdersPage`. */
export type OrdersPage = typeof OrdersPage.Type

/** The response header that marks an idempotent replay of POST /orders. */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed"

/** Wallet balances. */
export class WalletGroup extends HttpApiGroup.make("wallet")
  .add(
    HttpApiEndpoint.get("balance", "/balance")
      .addSuccess(BalanceResponse)
      .annotate(RateLimitScopes, ["all", "balance"])
      .annotate(OpenApi.Summary, "The three wallet balances")
  )
{}

/** Networks and their bundles, priced for the calling account. */
export class CatalogGroup extends HttpApiGroup.make("catalog")
  .add(
    HttpApiEndpoint.get("networks", "/networks")
      .addSuccess(NetworksResponse)
      .annotate(OpenApi.Summary, "Active networks")
  )
  .add(
    HttpApiEndpoint.get("bundles", "/networks/:network_id/bundles")
      .setPath(Schema.Struct({ network_id: IntegerText.pipe(Schema.compose(NetworkId)) }))
      .addSuccess(BundlesResponse)
      .addError(NetworkNotFound)
      .annotate(OpenApi.Summary, "Bundles of a network, in the operator's order, inactive ones included")
  )
{}

/** Placing, looking up and listing orders. */
export class OrdersGroup extends HttpApiGroup.make("orders")
  .add(
    HttpApiEndpoint.post("place", "/orders")
      .setPayload(PlaceOrderPayload)
      .addSuccess(PlaceOrderResponse)
      .addError(InsufficientBalance)
      .addError(BundleUnavailable)
      .annotate(RateLimitScopes, ["all", "orders"])
      .annotate(OpenApi.Summary, "Buy a bundle for a phone number, paid from the main wallet")
      .annotate(
        OpenApi.Description,
        "Repeating a request with the same `reference`, bundle and phone returns the original order " +
          "with the header `Idempotent-Replayed: true` and debits nothing."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orders/:order_number")
      .setPath(Schema.Struct({ order_number: Schema.String }))
      .addSuccess(OrderResponse)
      .addError(OrderNotFound)
      .annotate(OpenApi.Summary, "One order of the calling account")
  )
  .add(
    HttpApiEndpoint.get("list", "/orders")
      .setUrlParams(ListOrdersParams)
      .addSuccess(OrdersPage)
      .annotate(OpenApi.Summary, "The account's orders, newest first")
  )
{}

/** The public reseller API. */
export class ResellerApi extends HttpApi.make("reseller")
  .add(WalletGroup)
  .add(CatalogGroup)
  .add(OrdersGroup)
  .middleware(ApiKeyAuth)
  .addError(BadRequest)
  .addError(NotFound)
  .addError(MethodNotAllowed)
  .addError(PayloadTooLarge)
  .addError(ValidationError)
  .addError(RateLimited)
  .addError(RequestTimeout)
  .addError(ServerError)
  .prefix(RESELLER_PREFIX)
  .annotate(RateLimitScopes, ["all"])
  .annotate(BodyLimit, DEFAULT_BODY_LIMIT)
  .annotate(OpenApi.Title, "Data Bundle Reseller API")
  .annotate(OpenApi.Version, "1")
  .annotate(
    OpenApi.Description,
    "Buy mobile data bundles for Ghana phone numbers from a prepaid wallet. Amounts are in Ghana cedis (GHS)."
  )
{}
