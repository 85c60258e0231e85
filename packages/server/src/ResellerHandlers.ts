/**
 * The public API's handlers: each binds an endpoint of `ResellerApi` to the domain.
 */
import { Account, type Bundle, Idempotency, Money, type Network, type Order, ResellerApi } from "@databundle/contract"
import { Catalog, Commissions, Orders, PhoneNumbers, Wallet, Webhooks } from "@databundle/core"
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Schema } from "effect"
import type * as Dispatch from "./Dispatch.js"
import * as RequestContext from "./RequestContext.js"
import { ServerApi } from "./ServerApi.js"

/** GET /balance. */
const balance = Effect.map(Wallet.Wallet, (wallet) => () =>
  Effect.gen(function*() {
    const { accountId } = yield* Account.CurrentAccount
    const balance = yield* wallet.balances(accountId)
    return { success: true as const, balance: Option.getOrThrow(balance) }
  }))

/** GET /balance and GET /wallet/transactions. */
export const WalletLive = HttpApiBuilder.group(ServerApi, "wallet", (handlers) =>
  Effect.gen(function*() {
    const wallet = yield* Wallet.Wallet
    const commissions = yield* Commissions.Commissions
    return handlers
      .handle("balance", yield* balance)
      .handle("transfer", ({ headers, payload }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Account.CurrentAccount
          const outcome = yield* commissions.transfer(
            accountId,
            payload,
            headers[Idempotency.IDEMPOTENCY_KEY_HEADER]
          )
          if (outcome.replayed) {
            yield* HttpApp.appendPreResponseHandler((_, response) =>
              Effect.succeed(HttpServerResponse.setHeader(response, Idempotency.IDEMPOTENT_REPLAYED_HEADER, "true"))
            )
          }
          return {
            success: true as const,
            message: `Moved ${Money.formatGhs(payload.amount)} from the ${payload.from} wallet to the main wallet`,
            balance: outcome.value.balance
          }
        }))
      .handle("transactions", ({ urlParams }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Account.CurrentAccount
          const page = yield* wallet.ledger(accountId, urlParams).pipe(
            // The authenticated account exists; its absence would be a broken invariant.
            Effect.catchTag("AccountNotFound", (error) => Effect.die(error))
          )
          return { success: true as const, ...page }
        }))
  }))

/**
 * A response made once for each value `Catalog` hands out (the same object for as long as it
 * is cached): the schema's encoding and the JSON are done once per catalogue read, not per
 * request. The router sends a response it is given as it is.
 */
const encodedOnce = <A extends object, I, K extends object>(schema: Schema.Schema<A, I>, value: (key: K) => A) => {
  const encode = Schema.encodeSync(schema)
  const made = new WeakMap<K, HttpServerResponse.HttpServerResponse>()
  return (key: K) => {
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

/** The 200 of GET /networks for the catalogue's networks. */
const networksResponse = encodedOnce(
  ResellerApi.NetworksResponse,
  (networks: ReadonlyArray<Network.Network>) => ({ success: true as const, networks })
)

/** The 200 of GET /networks/{network_id}/bundles for a network's listing. */
const bundlesResponse = encodedOnce(
  ResellerApi.BundlesResponse,
  (listing: { readonly network: string; readonly bundles: ReadonlyArray<Bundle.Bundle> }) => ({
    success: true as const,
    ...listing
  })
)

/** GET /networks and GET /networks/{network_id}/bundles, from the catalogue's cache. */
export const CatalogLive = HttpApiBuilder.group(ServerApi, "catalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    return handlers
      .handle("networks", () => Effect.map(catalog.networks, networksResponse))
      .handle("bundles", ({ path }) =>
        Effect.gen(function*() {
          const { priceGroupId } = yield* Account.CurrentAccount
          return bundlesResponse(yield* catalog.bundles(path.network_id, priceGroupId))
        }))
  }))

const decodeBundlesPath = Schema.decodeUnknownOption(ResellerApi.BundlesPath)

/**
 * The catalogue's two reads as the gateway answers them before the router: the responses
 * above, from what the catalogue has cached, for the caller's price group; the path decoded
 * by the contract's own schema. Anything else (not cached, no such network, a path the
 * schema refuses) is left to the handlers.
 */
export const cachedReads: Effect.Effect<Readonly<Record<string, Dispatch.CachedRead>>, never, Catalog.Catalog> = Effect
  .map(Catalog.Catalog, (catalog) => ({
    "catalog.networks": () => {
      const networks = catalog.peekNetworks()
      return networks === undefined ? undefined : networksResponse(networks)
    },
    "catalog.bundles": (principal, params) => {
      const path = decodeBundlesPath(params)
      if (Option.isNone(path)) return undefined
      const listing = catalog.peekBundles(path.value.network_id, principal.priceGroupId)
      return listing === undefined ? undefined : bundlesResponse(listing)
    }
  }))

const placedMessage = (status: string, replayed: boolean) =>
  replayed
    ? "Order already placed with this reference"
    : status === "successful"
    ? "Order placed successfully"
    : status === "pending"
    ? "Order placed and awaiting delivery"
    : "Order failed; the amount was refunded"

/** POST /orders. */
const place = Effect.map(
  Orders.Orders,
  (orders) => ({ payload }: { readonly payload: Order.PlaceOrderPayload }) =>
    Effect.gen(function*() {
      const { accountId } = yield* Account.CurrentAccount
      const placement = yield* orders.place(accountId, payload)
      yield* RequestContext.annotateSpan("order_number", placement.order.order_number)
      if (placement.replayed) {
        yield* HttpApp.appendPreResponseHandler((_, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, Idempotency.IDEMPOTENT_REPLAYED_HEADER, "true"))
        )
      }
      return {
        success: true as const,
        message: placedMessage(placement.order.status, placement.replayed),
        order: placement.order,
        wallet_balance: placement.walletBalance,
        // Only when there is something to say, so the spec's answer is unchanged otherwise.
        ...(placement.warnings.length > 0 ? { warnings: placement.warnings } : {})
      }
    })
)

/** GET /orders/{order_number}. */
const get = Effect.map(
  Orders.Orders,
  (orders) => ({ path }: { readonly path: { readonly order_number: string } }) =>
    Effect.gen(function*() {
      yield* RequestContext.annotateSpan("order_number", path.order_number)
      const { accountId } = yield* Account.CurrentAccount
      const order = yield* orders.get(accountId, path.order_number)
      return { success: true as const, order }
    })
)

/** POST /orders, GET /orders/{order_number}, GET /orders. */
export const OrdersLive = HttpApiBuilder.group(ServerApi, "orders", (handlers) =>
  Effect.gen(function*() {
    const orders = yield* Orders.Orders
    return handlers
      .handle("place", yield* place)
      .handle("get", yield* get)
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Account.CurrentAccount
          return { success: true as const, ...(yield* orders.list(accountId, urlParams)) }
        }))
  }))

/** GET /phone-numbers/{phone_number}: the network of a number's prefix. */
export const PhoneNumbersLive = HttpApiBuilder.group(
  ServerApi,
  "phoneNumbers",
  (handlers) =>
    Effect.map(
      PhoneNumbers.PhoneNumbers,
      (phoneNumbers) =>
        handlers.handle("lookup", ({ path }) =>
          Effect.map(phoneNumbers.lookup(path.phone_number), (found) => ({ success: true as const, ...found })))
    )
)

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
export const layer = Layer.mergeAll(WalletLive, CatalogLive, OrdersLive, PhoneNumbersLive, EventsLive, WebhooksLive)
