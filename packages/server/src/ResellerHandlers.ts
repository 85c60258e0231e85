/**
 * The public API's handlers: each binds an endpoint of `ResellerApi` to the domain.
 */
import { Account, ResellerApi } from "@databundle/contract"
import { Catalog, Orders, Wallet, Webhooks } from "@databundle/core"
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Schema } from "effect"
import { ServerApi } from "./ServerApi.js"

/** GET /balance and GET /wallet/transactions. */
export const WalletLive = HttpApiBuilder.group(
  ServerApi,
  "wallet",
  (handlers) =>
    handlers
      .handle("balance", () =>
        Effect.gen(function*() {
          const { accountId } = yield* Account.CurrentAccount
          const balance = yield* (yield* Wallet.Wallet).balances(accountId)
          return { success: true as const, balance: Option.getOrThrow(balance) }
        }))
      .handle("transactions", ({ urlParams }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Account.CurrentAccount
          const page = yield* (yield* Wallet.Wallet).ledger(accountId, urlParams).pipe(
            // The authenticated account exists; its absence would be a broken invariant.
            Effect.catchTag("AccountNotFound", (error) => Effect.die(error))
          )
          return { success: true as const, ...page }
        }))
)

/**
 * A response made once for each value `Catalog` hands out (the same object for as long as it
 * is cached): the schema's encoding and the JSON are done once per catalogue read, not per
 * request. The router sends a response it is given as it is.
 */
const encodedOnce = <A extends object, I>(schema: Schema.Schema<A, I>) => {
  const encode = Schema.encodeSync(schema)
  const made = new WeakMap<object, HttpServerResponse.HttpServerResponse>()
  return <K extends object>(key: K, value: (key: K) => A) => {
    let response = made.get(key)
    if (response === undefined) {
      response = HttpServerResponse.uint8Array(new TextEncoder().encode(JSON.stringify(encode(value(key)))), {
        contentType: "application/json"
      })
      made.set(key, response)
    }
    return response
  }
}

/** GET /networks and GET /networks/{network_id}/bundles, from the catalogue's cache. */
export const CatalogLive = HttpApiBuilder.group(ServerApi, "catalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    const networksResponse = encodedOnce(ResellerApi.NetworksResponse)
    const bundlesResponse = encodedOnce(ResellerApi.BundlesResponse)
    return handlers
      .handle("networks", () =>
        Effect.map(catalog.networks, (networks) =>
          networksResponse(networks, (networks) => ({ success: true as const, networks }))))
      .handle("bundles", ({ path }) =>
        Effect.gen(function*() {
          const { priceGroupId } = yield* Account.CurrentAccount
          const listing = yield* catalog.bundles(path.network_id, priceGroupId)
          return bundlesResponse(listing, (listing) => ({ success: true as const, ...listing }))
        }))
  }))

const placedMessage = (status: string, replayed: boolean) =>
  replayed
    ? "Order already placed with this reference"
    : status === "successful"
    ? "Order placed successfully"
    : status === "pending"
    ? "Order placed and awaiting delivery"
    : "Order failed; the amount was refunded"

/** POST /orders, GET /orders/{order_number}, GET /orders. */
export const OrdersLive = HttpApiBuilder.group(ServerApi, "orders", (handlers) =>
  handlers
    .handle("place", ({ payload }) =>
      Effect.gen(function*() {
        const { accountId } = yield* Account.CurrentAccount
        const placement = yield* (yield* Orders.Orders).place(accountId, payload)
        yield* Effect.annotateCurrentSpan("order_number", placement.order.order_number)
        if (placement.replayed) {
          yield* HttpApp.appendPreResponseHandler((_, response) =>
            Effect.succeed(HttpServerResponse.setHeader(response, ResellerApi.IDEMPOTENT_REPLAYED_HEADER, "true"))
          )
        }
        return {
          success: true as const,
          message: placedMessage(placement.order.status, placement.replayed),
          order: placement.order,
          wallet_balance: placement.walletBalance
        }
      }))
    .handle("get", ({ path }) =>
      Effect.gen(function*() {
        yield* Effect.annotateCurrentSpan("order_number", path.order_number)
        const { accountId } = yield* Account.CurrentAccount
        const order = yield* (yield* Orders.Orders).get(accountId, path.order_number)
        return { success: true as const, order }
      }))
    .handle("list", ({ urlParams }) =>
      Effect.gen(function*() {
        const { accountId } = yield* Account.CurrentAccount
        return { success: true as const, ...(yield* (yield* Orders.Orders).list(accountId, urlParams)) }
      })))

/** GET /events and POST /events/test. */
export const EventsLive = HttpApiBuilder.group(ServerApi, "events", (handlers) =>
  handlers
    .handle("list", ({ urlParams }) =>
      Effect.gen(function*() {
        const { accountId } = yield* Account.CurrentAccount
        return { success: true as const, ...(yield* (yield* Webhooks.Webhooks).events(accountId, urlParams)) }
      }))
    .handle("trigger", ({ payload }) =>
      Effect.gen(function*() {
        const { accountId } = yield* Account.CurrentAccount
        const triggered = yield* (yield* Webhooks.Webhooks).trigger(accountId, payload.type).pipe(
          Effect.catchTag("AccountNotFound", (error) => Effect.die(error))
        )
        return { success: true as const, ...triggered }
      })))

/** GET /webhooks, GET /webhooks/deliveries and POST /webhooks/deliveries/{delivery_id}/resend. */
export const WebhooksLive = HttpApiBuilder.group(ServerApi, "webhooks", (handlers) =>
  handlers
    .handle("settings", () =>
      Effect.gen(function*() {
        const { accountId } = yield* Account.CurrentAccount
        const webhook = yield* (yield* Webhooks.Webhooks).settings(accountId).pipe(
          Effect.catchTag("AccountNotFound", (error) => Effect.die(error))
        )
        return { success: true as const, webhook }
      }))
    .handle("deliveries", ({ urlParams }) =>
      Effect.gen(function*() {
        const { accountId } = yield* Account.CurrentAccount
        return { success: true as const, ...(yield* (yield* Webhooks.Webhooks).deliveries(accountId, urlParams)) }
      }))
    .handle("resend", ({ path }) =>
      Effect.gen(function*() {
        const { accountId } = yield* Account.CurrentAccount
        const delivery = yield* (yield* Webhooks.Webhooks).resend(accountId, path.delivery_id)
        return { success: true as const, delivery }
      })))

/** Every handler of the public API. */
export const layer = Layer.mergeAll(WalletLive, CatalogLive, OrdersLive, EventsLive, WebhooksLive)
