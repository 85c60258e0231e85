/**
 * The public reseller API, mounted at `/api/v1`.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Conflict, Succeeded, withRequestErrors } from "./ApiError.js"
import { ApiKeyAuth } from "./ApiKey.js"
import { Bundle, BundleUnavailable } from "./Bundle.js"
import { BodyLimit, CarriesSecret, DEFAULT_BODY_LIMIT, RateLimitScopes } from "./EndpointPolicy.js"
import { EventsPageFields, ListEventsParams, TriggerEventPayload } from "./Event.js"
import * as Extension from "./Extension.js"
import { IdempotencyHeaders } from "./Idempotency.js"
import { IntegerText } from "./Identifier.js"
import { LedgerEntry, ListTransactionsParams } from "./Ledger.js"
import { Cedis } from "./Money.js"
import { Network, NetworkId, NetworkNotFound } from "./Network.js"
import { ListOrdersParams, Order, OrderNotFound, OrderStatusView, PlacedOrder, PlaceOrderPayload } from "./Order.js"
import { envelope } from "./Page.js"
import { OrderWarning, PhoneNumber, PhoneNumberNetwork } from "./Phone.js"
import { Balance, InsufficientBalance, TransferPayload, TransferResponse } from "./Wallet.js"
import { EventId, WebhookEvent } from "./Webhook.js"
import { Delivery, DeliveryNotFound, ListDeliveriesParams, WebhookSettings } from "./WebhookDelivery.js"

/** The path prefix of the public API. */
export const RESELLER_PREFIX = "/api/v1"

/** 200 of GET /balance. */
export const BalanceResponse = Schema.Struct({ success: Succeeded, balance: Balance })

/** 200 of GET /networks. */
export const NetworksResponse = Schema.Struct({ success: Succeeded, networks: Schema.Array(Network) })

/** The path parameters of GET /networks/{network_id}/bundles. */
export const BundlesPath = Schema.Struct({ network_id: IntegerText.pipe(Schema.compose(NetworkId)) })

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
  wallet_balance: Cedis.annotations({ description: "Main wallet balance after the order" }),
  warnings: Schema.optional(Schema.Array(OrderWarning)).annotations({
    description:
      "Present only when the number's prefix is another network's or nobody's; the order is placed all the same"
  })
})

/** The type of `PlaceOrderResponse`. */
export type PlaceOrderResponse = typeof PlaceOrderResponse.Type

/** 200 of GET /orders/{order_number}. */
export const OrderResponse = Schema.Struct({ success: Succeeded, order: OrderStatusView })

/** 200 of GET /orders. */
export const OrdersPage = envelope("orders", Order)

/** The type of `OrdersPage`. */
export type OrdersPage = typeof OrdersPage.Type

/** 200 of GET /wallet/transactions (an extension). */
export const TransactionsPage = envelope("entries", LedgerEntry)

/** The type of `TransactionsPage`. */
export type TransactionsPage = typeof TransactionsPage.Type

/** 200 of GET /events (an extension). */
export const EventsPage = Schema.Struct({ success: Succeeded, ...EventsPageFields })

/** The type of `EventsPage`. */
export type EventsPage = typeof EventsPage.Type

/** 201 of POST /events/test (an extension): the event, and its delivery when the account has a webhook URL. */
export const EventTriggered = Schema.Struct({
  success: Succeeded,
  event: WebhookEvent,
  delivery: Schema.NullOr(Delivery)
})

/** 200 of GET /webhooks (an extension). */
export const WebhookSettingsResponse = Schema.Struct({ success: Succeeded, webhook: WebhookSettings })

/** 200 of GET /webhooks/deliveries (an extension). */
export const DeliveriesPage = envelope("deliveries", Delivery)

/** The type of `DeliveriesPage`. */
export type DeliveriesPage = typeof DeliveriesPage.Type

/** 200 of POST /webhooks/deliveries/{delivery_id}/resend (an extension). */
export const DeliveryResponse = Schema.Struct({ success: Succeeded, delivery: Delivery })

/** Wallet balances, and the account's own ledger (an extension). */
export class WalletGroup extends HttpApiGroup.make("wallet")
  .add(
    HttpApiEndpoint.get("balance", "/balance")
      .addSuccess(BalanceResponse)
      .annotate(RateLimitScopes, ["all", "balance"])
      .annotate(OpenApi.Summary, "The three wallet balances")
  )
  .add(
    HttpApiEndpoint.get("transactions", "/wallet/transactions")
      .setUrlParams(ListTransactionsParams)
      .addSuccess(TransactionsPage)
      .annotateContext(Extension.annotations)
      .annotate(OpenApi.Summary, "The account's ledger: every wallet movement, newest first (extension)")
  )
  .add(
    HttpApiEndpoint.post("transfer", "/wallet/transfers")
      .setPayload(TransferPayload)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(TransferResponse)
      .addError(InsufficientBalance)
      .annotateContext(Extension.annotations)
      .annotate(OpenApi.Summary, "Move earnings from the referral or agent wallet to the main wallet (extension)")
      .annotate(
        OpenApi.Description,
        "More than the wallet holds is a 400 with `balance` (what it holds) and `required` (the amount). " +
          "Repeating the request with the same `Idempotency-Key` replays the first answer and moves nothing."
      )
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
      .setPath(BundlesPath)
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

/** 200 of GET /phone-numbers/{phone_number} (an extension). */
export const PhoneNumberResponse = Schema.Struct({ success: Succeeded, ...PhoneNumberNetwork.fields })

/** The network a number's prefix belongs to (an extension). */
export class PhoneNumbersGroup extends HttpApiGroup.make("phoneNumbers")
  .add(
    HttpApiEndpoint.get("lookup", "/phone-numbers/:phone_number")
      .setPath(Schema.Struct({ phone_number: PhoneNumber }))
      .addSuccess(PhoneNumberResponse)
      .annotateContext(Extension.annotations)
      .annotate(OpenApi.Summary, "The network a number's prefix belongs to; null when none (extension)")
      .annotate(
        OpenApi.Description,
        "Read from the prefix alone: a number ported to another network keeps its old prefix. A number not of " +
          "the two Ghana forms names no number: 404, as any path parameter that does not decode."
      )
  )
  .annotate(OpenApi.Description, "Beyond the specification")
{}

/** The account's event feed and test events (an extension). */
export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events")
      .setUrlParams(ListEventsParams)
      .addSuccess(EventsPage)
      .annotateContext(Extension.annotations)
      .annotate(OpenApi.Summary, "The account's webhook events, newest first, to follow with a cursor (extension)")
      .annotate(
        OpenApi.Description,
        "Every event of the account, whether or not it has a webhook URL. Pass a response's `cursor` back as " +
          "`since` to list only what came after it; with `since`, page 1 holds the events right after the cursor."
      )
  )
  .add(
    HttpApiEndpoint.post("trigger", "/events/test")
      .setPayload(TriggerEventPayload)
      .addSuccess(EventTriggered, { status: 201 })
      .annotateContext(Extension.annotations)
      .annotate(
        OpenApi.Summary,
        "Send a test event of a type, marked `test: true`, to the feed and webhook (extension)"
      )
  )
  .annotate(OpenApi.Description, "Beyond the specification")
{}

/** The account's webhook settings and deliveries (an extension). */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("settings", "/webhooks")
      .addSuccess(WebhookSettingsResponse)
      .annotate(CarriesSecret, true)
      .annotateContext(Extension.annotations)
      .annotate(OpenApi.Summary, "The webhook URL and signing secret (extension)")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/deliveries")
      .setUrlParams(ListDeliveriesParams)
      .addSuccess(DeliveriesPage)
      .annotateContext(Extension.annotations)
      .annotate(OpenApi.Summary, "Deliveries to the webhook URL, newest first (extension)")
  )
  .add(
    HttpApiEndpoint.post("resend", "/webhooks/deliveries/:delivery_id/resend")
      .setPath(Schema.Struct({ delivery_id: EventId }))
      .addSuccess(DeliveryResponse)
      .addError(DeliveryNotFound)
      .addError(Conflict)
      .annotateContext(Extension.annotations)
      .annotate(
        OpenApi.Summary,
        "Deliver an event again now, and retry it as a new one if that fails; 409 without a URL (extension)"
      )
  )
  .annotate(OpenApi.Description, "Beyond the specification")
{}

/** The public reseller API. */
export class ResellerApi extends HttpApi.make("reseller")
  .add(WalletGroup)
  .add(CatalogGroup)
  .add(OrdersGroup)
  .add(PhoneNumbersGroup)
  .add(EventsGroup)
  .add(WebhooksGroup)
  .middleware(ApiKeyAuth)
  .addError(BadRequest)
  .pipe(withRequestErrors)
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
