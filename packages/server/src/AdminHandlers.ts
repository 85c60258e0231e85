/**
 * The admin API's handlers: each binds an endpoint of `AdminApi` to the domain. Every change
 * writes its line of the action log in its own transaction (`ActionLog`).
 */
import { Account, AdminApi, Idempotency as IdempotencyContract, type Mode, Money } from "@databundle/contract"
import {
  Accounts,
  ApiKeys,
  Catalog,
  Commissions,
  Idempotency,
  Mailer,
  Orders,
  Payments,
  Wallet
} from "@databundle/core"
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, type Schema } from "effect"
import * as ActionLog from "./ActionLog.js"
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

/** "name, status suspended, limits ..." of an account change, for its log line. */
const describeUpdate = (payload: Account.UpdateAccountPayload): string => {
  const parts: Array<string> = []
  if (payload.name !== undefined) parts.push(`name ${payload.name}`)
  if (payload.status !== undefined) parts.push(`status ${payload.status}`)
  if (payload.price_group !== undefined) parts.push(`price group ${payload.price_group ?? "base"}`)
  if (payload.webhook_url !== undefined) parts.push(`webhook URL ${payload.webhook_url ?? "removed"}`)
  if (payload.rotate_webhook_secret === true) parts.push("webhook secret rotated")
  if (payload.agent_id !== undefined) parts.push(`agent ${payload.agent_id === null ? "none" : payload.agent_id}`)
  if (payload.referred_by !== undefined) {
    parts.push(`referrer ${payload.referred_by === null ? "none" : payload.referred_by}`)
  }
  if (payload.limits !== undefined) {
    for (const [scope, limit] of Object.entries(payload.limits)) {
      if (limit !== undefined) parts.push(`${scope} limit ${limit === null ? "default" : `${limit}/min`}`)
    }
  }
  return parts.length === 0 ? "no change" : parts.join(", ")
}

const countsText = (noun: string, counts: { readonly created: number; readonly updated: number }) =>
  `${counts.created} ${noun}${counts.created === 1 ? "" : "s"} created, ${counts.updated} updated`

/** Accounts. */
export const AccountsLive = HttpApiBuilder.group(ServerApi, "accounts", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("create", ({ payload }) =>
        Effect.map(
          logged(accounts.create(payload), (account) => ({
            action: "account.create",
            targetKind: "account",
            targetId: account.id,
            accountId: account.id,
            summary: `Created account ${account.id} (${account.name})`,
            detail: { name: account.name, price_group: account.price_group }
          })),
          ok
        ))
      .handle("list", ({ urlParams }) => Effect.map(accounts.list(urlParams), ok))
      .handle("show", ({ path }) => Effect.map(accounts.show(path.account_id), ok))
      .handle("update", ({ path, payload }) =>
        Effect.map(
          logged(accounts.update(path.account_id, payload), (account) => ({
            action: "account.update",
            targetKind: "account",
            targetId: account.id,
            accountId: account.id,
            summary: `Account ${account.id} (${account.name}): ${describeUpdate(payload)}`,
            detail: payload
          })),
          ok
        ))
  }))

/** API keys. */
export const ApiKeysLive = HttpApiBuilder.group(ServerApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys.ApiKeys
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("create", ({ path, urlParams }) =>
        Effect.map(
          logged(apiKeys.create(path.account_id, null, urlParams.mode ?? "live"), (key) => ({
            action: "key.create",
            targetKind: "key",
            targetId: key.id,
            accountId: path.account_id,
            summary: `Created ${key.mode} API key ${key.prefix} for account ${path.account_id}`,
            detail: { prefix: key.prefix, mode: key.mode }
          })),
          ok
        ))
      .handle("revoke", ({ path }) =>
        Effect.map(
          logged(apiKeys.revoke(path.account_id, path.key_id), (key) => ({
            action: "key.revoke",
            targetKind: "key",
            targetId: key.id,
            accountId: path.account_id,
            summary: `Revoked API key ${key.prefix} of account ${path.account_id}`,
            detail: { prefix: key.prefix }
          })),
          (key) => ok({ key })
        ))
  }))

/** Wallet funding, adjustments, the ledger and its audit. */
export const WalletsLive = HttpApiBuilder.group(ServerApi, "wallets", (handlers) =>
  Effect.gen(function*() {
    const wallet = yield* Wallet.Wallet
    const { logged } = yield* ActionLog.make
    const movement = (action: "wallet.fund" | "wallet.adjust", accountId: number, mode: Mode.Mode | undefined) =>
    (
      result: {
        readonly entry: {
          readonly id: number
          readonly amount: bigint
          readonly wallet: string
          readonly note: string | null
        }
      }
    ) => ({
      action,
      targetKind: "account" as const,
      targetId: accountId,
      accountId,
      summary: `${action === "wallet.fund" ? "Funded" : "Adjusted"} the ${
        mode === "test" ? "test " : ""
      }${result.entry.wallet} wallet of account ${accountId} by ${Money.formatGhs(result.entry.amount)}${
        result.entry.note === null ? "" : `: ${result.entry.note}`
      }`,
      detail: {
        wallet: result.entry.wallet,
        mode: mode ?? "live",
        amount: Money.formatCedis(result.entry.amount),
        note: result.entry.note,
        ledger_entry_id: result.entry.id
      }
    })
    const apiKeys = yield* ApiKeys.ApiKeys
    // The live account, or its test account for `mode: test` (made on first use).
    const walletsOf = (accountId: Account.AccountId, mode: Mode.Mode | undefined) =>
      Effect.flatMap(
        apiKeys.accountFor(accountId, mode ?? "live"),
        Option.match({
          onNone: () => Effect.fail(new Account.AccountNotFound({ message: `Account ${accountId} not found` })),
          onSome: Effect.succeed
        })
      )
    return handlers
      .handle("fund", ({ headers, path, payload }) =>
        idempotent(
          headers,
          { endpoint: "wallets.fund", target: path.account_id, body: payload },
          AdminApi.WalletMovement,
          Effect.map(
            logged(
              walletsOf(path.account_id, payload.mode).pipe(
                Effect.flatMap((accountId) =>
                  wallet.fund(accountId, {
                    amount: payload.amount,
                    wallet: payload.wallet,
                    ...(payload.note === undefined ? {} : { note: payload.note })
                  })
                )
              ),
              movement("wallet.fund", path.account_id, payload.mode)
            ),
            ok
          )
        ))
      .handle("adjust", ({ headers, path, payload }) =>
        idempotent(
          headers,
          { endpoint: "wallets.adjust", target: path.account_id, body: payload },
          AdminApi.WalletMovement,
          Effect.map(
            logged(
              walletsOf(path.account_id, payload.mode).pipe(
                Effect.flatMap((accountId) => wallet.adjust(accountId, payload))
              ),
              movement("wallet.adjust", path.account_id, payload.mode)
            ),
            ok
          )
        ))
      .handle("ledger", ({ path, urlParams }) =>
        walletsOf(path.account_id, urlParams.mode).pipe(
          Effect.flatMap((accountId) => wallet.ledger(accountId, urlParams)),
          Effect.map(ok)
        ))
      .handle("audit", () => Effect.map(wallet.audit, ok))
  }))

/** Catalogue import and export. */
export const CatalogFileLive = HttpApiBuilder.group(ServerApi, "catalogFile", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("import", ({ payload }) =>
        Effect.map(
          logged(catalog.importFile(payload), (summary) => ({
            action: "catalog.import",
            targetKind: "catalog",
            targetId: null,
            summary: `Imported the catalogue: ${countsText("network", summary.networks)}, ${
              countsText("bundle", summary.bundles)
            }, ${countsText("price group", summary.price_groups)}`,
            detail: { price_groups: summary.price_groups, networks: summary.networks, bundles: summary.bundles }
          })),
          ok
        ))
      .handle("preview", ({ payload }) => Effect.map(catalog.importFile(payload, { dryRun: true }), ok))
      .handle("export", () => Effect.map(catalog.exportFile, ok))
  }))

/** Orders of every account, and settling a stuck one. */
export const OrdersAdminLive = HttpApiBuilder.group(ServerApi, "ordersAdmin", (handlers) =>
  Effect.gen(function*() {
    const orders = yield* Orders.Orders
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("list", ({ urlParams }) => Effect.map(orders.adminList(urlParams), ok))
      .handle("get", ({ path }) => Effect.map(orders.adminGet(path.order_number), (order) => ok({ order })))
      .handle("resolve", ({ headers, path, payload }) =>
        idempotent(
          headers,
          { endpoint: "ordersAdmin.resolve", target: path.order_number, body: payload },
          AdminApi.AdminOrderResponse,
          Effect.map(
            logged(orders.resolve(path.order_number, payload.status, payload.note), (order) => ({
              action: "order.resolve",
              targetKind: "order",
              targetId: order.order_number,
              accountId: order.account_id,
              summary: `Resolved order ${order.order_number} as ${payload.status}${
                payload.note === undefined ? "" : `: ${payload.note}`
              }`,
              detail: {
                status: payload.status,
                note: payload.note ?? null,
                amount: Money.formatCedis(order.amount_paid)
              }
            })),
            (order) => ok({ order })
          )
        ))
  }))

/** The upstreams and the catalogue sync from them. */
export const UpstreamsLive = HttpApiBuilder.group(ServerApi, "upstreams", (handlers) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<UpstreamCatalog.Requirements>()
    const { write } = yield* ActionLog.make
    return handlers
      .handle("list", () => Effect.map(UpstreamCatalog.list, ok).pipe(Effect.provide(context)))
      .handle(
        "catalogSync",
        ({ payload }) =>
          Effect.map(
            UpstreamCatalog.sync(payload, (changes, upstreams) =>
              write(changes, (list) => ({
                action: "catalog.sync",
                targetKind: "catalog",
                targetId: null,
                summary: `Synced the catalogue from ${upstreams.join(", ")}: ${list.length} change${
                  list.length === 1 ? "" : "s"
                }`,
                detail: { upstreams, changes: list }
              }))),
            ok
          ).pipe(Effect.provide(context))
      )
  }))

/** Payments of every account; the operator's decision on manual transfers. */
export const PaymentsAdminLive = HttpApiBuilder.group(ServerApi, "paymentsAdmin", (handlers) =>
  Effect.gen(function*() {
    const payments = yield* Payments.Payments
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("list", ({ urlParams }) => Effect.map(payments.adminList(urlParams), ok))
      .handle("get", ({ path }) => Effect.map(payments.adminGet(path.payment_number), (payment) => ok({ payment })))
      .handle("approve", ({ path }) =>
        Effect.map(
          logged(payments.decide(path.payment_number, { approved: true, reason: null }), (payment) => ({
            action: "payment.approve",
            targetKind: "payment",
            targetId: payment.payment_number,
            accountId: payment.account_id,
            summary: `Approved payment ${payment.payment_number}: ${
              Money.formatGhs(payment.amount)
            } to account ${payment.account_id}`,
            detail: { amount: Money.formatCedis(payment.amount) }
          })),
          (payment) => ok({ payment })
        ))
      .handle("decline", ({ path, payload }) =>
        Effect.map(
          logged(
            payments.decide(path.payment_number, {
              approved: false,
              reason: `Declined by the operator: ${payload.reason}`
            }),
            (payment) => ({
              action: "payment.decline",
              targetKind: "payment",
              targetId: payment.payment_number,
              accountId: payment.account_id,
              summary: `Declined payment ${payment.payment_number}: ${payload.reason}`,
              detail: { amount: Money.formatCedis(payment.amount), reason: payload.reason }
            })
          ),
          (payment) => ok({ payment })
        ))
  }))

/** The email outbox. */
export const MailAdminLive = HttpApiBuilder.group(ServerApi, "mailAdmin", (handlers) =>
  Effect.gen(function*() {
    const mailer = yield* Mailer.Mailer
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("list", ({ urlParams }) => Effect.map(mailer.list(urlParams), ok))
      .handle("requeue", ({ path }) =>
        logged(mailer.requeue(path.email_id), (email) => ({
          action: "email.requeue",
          targetKind: "email",
          targetId: email.id,
          summary: `Queued email ${email.id} to ${email.to} (${email.kind}) again after it failed`,
          detail: { to: email.to, kind: email.kind, last_error: email.last_error }
        })).pipe(
          Effect.tap(mailer.wakeSender),
          Effect.map((email) => ok({ email }))
        ))
  }))

/** The referral rate. */
export const CommissionsLive = HttpApiBuilder.group(ServerApi, "commissions", (handlers) =>
  Effect.gen(function*() {
    const commissions = yield* Commissions.Commissions
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("show", () => Effect.map(commissions.rates, (rates) => ok({ commissions: rates })))
      .handle("set", ({ payload }) =>
        logged(commissions.setRates(payload), (rates) => ({
          action: "commissions.set",
          targetKind: "commissions",
          targetId: "referral",
          summary: `Set the referral rate to ${rates.referral_percent / 100} %`,
          detail: { referral_percent: rates.referral_percent / 100 }
        })).pipe(Effect.map((rates) => ok({ commissions: rates }))))
  }))

/** Every handler of the admin API. */
export const layer = Layer.mergeAll(
  CommissionsLive,
  AccountsLive,
  ApiKeysLive,
  WalletsLive,
  CatalogFileLive,
  OrdersAdminLive,
  UpstreamsLive,
  PaymentsAdminLive,
  MailAdminLive
)
