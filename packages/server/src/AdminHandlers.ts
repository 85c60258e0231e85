/**
 * The admin API's handlers: each binds an endpoint of `AdminApi` to the domain.
 */
import { AdminApi, Idempotency as IdempotencyContract } from "@databundle/contract"
import { Accounts, ApiKeys, Catalog, Idempotency, Mailer, Orders, Payments, Wallet } from "@databundle/core"
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, type Schema } from "effect"
import { ServerApi } from "./ServerApi.js"
import * as UpstreamCatalog from "./UpstreamCatalog.js"

const ok = <A extends object>(value: A) => ({ success: true as const, ...value })

/**
 * Runs a handler that moves money under the request's `Idempotency-Key`, when it has one:
 * a repeat replays the first result with `Idempotent-Replayed: true` and moves nothing.
 */
const idempotent = <A, I, E, R>(
  headers: IdempotencyContract.IdempotencyHeaders,
  request: { readonly endpoint: string; readonly target: string | number; readonly body: unknown },
  schema: Schema.Schema<A, I>,
  effect: Effect.Effect<A, E, R>
) => {
  const key = headers[IdempotencyContract.IDEMPOTENCY_KEY_HEADER]
  if (key === undefined) return effect
  return Effect.gen(function*() {
    const idempotency = yield* Idempotency.Idempotency
    const outcome = yield* idempotency.run({ ...request, key, target: String(request.target) }, schema, effect)
    if (outcome.replayed) {
      yield* HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, IdempotencyContract.IDEMPOTENT_REPLAYED_HEADER, "true"))
      )
    }
    return outcome.value
  })
}

/** Accounts. */
export const AccountsLive = HttpApiBuilder.group(ServerApi, "accounts", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    return handlers
      .handle("create", ({ payload }) => Effect.map(accounts.create(payload), ok))
      .handle("list", ({ urlParams }) => Effect.map(accounts.list(urlParams), ok))
      .handle("show", ({ path }) => Effect.map(accounts.show(path.account_id), ok))
      .handle("update", ({ path, payload }) => Effect.map(accounts.update(path.account_id, payload), ok))
  }))

/** API keys. */
export const ApiKeysLive = HttpApiBuilder.group(ServerApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys.ApiKeys
    return handlers
      .handle("create", ({ path }) => Effect.map(apiKeys.create(path.account_id), ok))
      .handle("revoke", ({ path }) => Effect.map(apiKeys.revoke(path.account_id, path.key_id), (key) => ok({ key })))
  }))

/** Wallet funding, adjustments, the ledger and its audit. */
export const WalletsLive = HttpApiBuilder.group(ServerApi, "wallets", (handlers) =>
  Effect.gen(function*() {
    const wallet = yield* Wallet.Wallet
    return handlers
      .handle("fund", ({ headers, path, payload }) =>
        idempotent(
          headers,
          { endpoint: "wallets.fund", target: path.account_id, body: payload },
          AdminApi.WalletMovement,
          Effect.map(
            wallet.fund(path.account_id, {
              amount: payload.amount,
              wallet: payload.wallet,
              ...(payload.note === undefined ? {} : { note: payload.note })
            }),
            ok
          )
        ))
      .handle("adjust", ({ headers, path, payload }) =>
        idempotent(
          headers,
          { endpoint: "wallets.adjust", target: path.account_id, body: payload },
          AdminApi.WalletMovement,
          Effect.map(wallet.adjust(path.account_id, payload), ok)
        ))
      .handle("ledger", ({ path, urlParams }) => Effect.map(wallet.ledger(path.account_id, urlParams), ok))
      .handle("audit", () => Effect.map(wallet.audit, ok))
  }))

/** Catalogue import and export. */
export const CatalogFileLive = HttpApiBuilder.group(ServerApi, "catalogFile", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    return handlers
      .handle("import", ({ payload }) => Effect.map(catalog.importFile(payload), ok))
      .handle("preview", ({ payload }) => Effect.map(catalog.importFile(payload, { dryRun: true }), ok))
      .handle("export", () => Effect.map(catalog.exportFile, ok))
  }))

/** Orders of every account, and settling a stuck one. */
export const OrdersAdminLive = HttpApiBuilder.group(ServerApi, "ordersAdmin", (handlers) =>
  Effect.gen(function*() {
    const orders = yield* Orders.Orders
    return handlers
      .handle("list", ({ urlParams }) => Effect.map(orders.adminList(urlParams), ok))
      .handle("get", ({ path }) => Effect.map(orders.adminGet(path.order_number), (order) => ok({ order })))
      .handle("resolve", ({ headers, path, payload }) =>
        idempotent(
          headers,
          { endpoint: "ordersAdmin.resolve", target: path.order_number, body: payload },
          AdminApi.AdminOrderResponse,
          Effect.map(orders.resolve(path.order_number, payload.status, payload.note), (order) => ok({ order }))
        ))
  }))

/** The upstreams and the catalogue sync from them. */
export const UpstreamsLive = HttpApiBuilder.group(ServerApi, "upstreams", (handlers) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<UpstreamCatalog.Requirements>()
    return handlers
      .handle("list", () => Effect.map(UpstreamCatalog.list, ok).pipe(Effect.provide(context)))
      .handle(
        "catalogSync",
        ({ payload }) => Effect.map(UpstreamCatalog.sync(payload), ok).pipe(Effect.provide(context))
      )
  }))

/** Payments of every account; the operator's decision on manual transfers. */
export const PaymentsAdminLive = HttpApiBuilder.group(ServerApi, "paymentsAdmin", (handlers) =>
  Effect.gen(function*() {
    const payments = yield* Payments.Payments
    return handlers
      .handle("list", ({ urlParams }) => Effect.map(payments.adminList(urlParams), ok))
      .handle("get", ({ path }) => Effect.map(payments.adminGet(path.payment_number), (payment) => ok({ payment })))
      .handle("approve", ({ path }) =>
        Effect.map(
          payments.decide(path.payment_number, { approved: true, reason: null }),
          (payment) => ok({ payment })
        ))
      .handle("decline", ({ path, payload }) =>
        Effect.map(
          payments.decide(path.payment_number, {
            approved: false,
            reason: `Declined by the operator: ${payload.reason}`
          }),
          (payment) => ok({ payment })
        ))
  }))

/** The email outbox. */
export const MailAdminLive = HttpApiBuilder.group(ServerApi, "mailAdmin", (handlers) =>
  Effect.gen(function*() {
    const mailer = yield* Mailer.Mailer
    return handlers.handle("list", ({ urlParams }) => Effect.map(mailer.list(urlParams), ok))
  }))

/** Every handler of the admin API. */
export const layer = Layer.mergeAll(
  AccountsLive,
  ApiKeysLive,
  WalletsLive,
  CatalogFileLive,
  OrdersAdminLive,
  UpstreamsLive,
  PaymentsAdminLive,
  MailAdminLive
)
