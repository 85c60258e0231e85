/**
 * What the account holders' dashboard reads and changes beyond the other services: the home
 * page's summary, the ledger with the payments it came from, named API keys, and the webhook
 * settings with their delivery log, test event and resend.
 */
import {
  type Account,
  ApiError,
  ApiKey,
  type Attention,
  DeliveryLog,
  Page as PageContract,
  Payment,
  type Statement,
  Webhook
} from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Accounts } from "./Accounts.js"
import { ApiKeys } from "./ApiKeys.js"
import { orDie, rowsOf } from "./Database.js"
import { Orders } from "./Orders.js"
import * as Page from "./Page.js"
import { Payments } from "./Payments.js"
import { Settings } from "./Settings.js"
import { LedgerRow, Wallet } from "./Wallet.js"
import { Webhooks } from "./Webhooks.js"

/** A statement's entry: a ledger entry with the payment it came from. */
const StatementRow = Schema.Struct({ ...LedgerRow.fields, payment_number: Schema.NullOr(Payment.PaymentNumber) })

/** A key with its name: its row is the view the API shows. */
const KeyRow = Schema.typeSchema(ApiKey.NamedApiKey)

/** The dashboard's own reads and changes. */
export class Dashboard extends Effect.Service<Dashboard>()("core/Dashboard", {
  dependencies: [
    Accounts.Default,
    ApiKeys.Default,
    Orders.Default,
    Payments.Default,
    Wallet.Default,
    Settings.Default,
    Webhooks.Default
  ],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const apiKeys = yield* ApiKeys
    const orders = yield* Orders
    const payments = yield* Payments
    const wallet = yield* Wallet
    const settings = yield* Settings
    const webhooks = yield* Webhooks

    const balanceOf = (accountId: number) =>
      Effect.map(wallet.balances(accountId), (b) => Option.getOrElse(b, () => ({ main: 0n, referral: 0n, agent: 0n })))

    /** The home page: balances, the five newest orders, and what needs attention. */
    const home = Effect.fn("Dashboard.home")(function*(accountId: Account.AccountId) {
      const balance = yield* balanceOf(accountId)
      const recent = yield* orders.list(accountId, { per_page: 5 })
      const [counts] = yield* orDie(sql<{ pending_orders: string; failed_deliveries: string }>`
        SELECT
          (SELECT count(*) FROM orders WHERE account_id = ${accountId} AND status = 'pending') AS pending_orders,
          (SELECT count(*) FROM webhook_events WHERE account_id = ${accountId} AND delivered_at IS NULL
            AND (abandoned_at IS NOT NULL OR last_error IS NOT NULL)) AS failed_deliveries
      `)
      const attention: Array<Attention.AttentionItem> = []
      const pendingOrders = Number(counts!.pending_orders)
      const pendingPayments = yield* payments.pendingCount(accountId)
      const failed = Number(counts!.failed_deliveries)
      if (pendingOrders > 0) attention.push({ kind: "pending_orders", count: pendingOrders })
      if (pendingPayments > 0) attention.push({ kind: "pending_payments", count: pendingPayments })
      if (failed > 0) attention.push({ kind: "failed_webhook_deliveries", count: failed })
      if (balance.main < settings.lowBalance) {
        attention.push({ kind: "low_balance", balance: balance.main, threshold: settings.lowBalance })
      }
      return { balance, recent_orders: recent.orders, attention }
    })

    /** The ledger, newest first, with the order or payment each entry came from. */
    const ledger = Effect.fn("Dashboard.ledger")(function*(
      accountId: Account.AccountId,
      query: Statement.StatementParams
    ) {
      const conditions = [sql`l.account_id = ${accountId}`]
      if (query.wallet !== undefined) conditions.push(sql`l.wallet = ${query.wallet}`)
      if (query.reason !== undefined) conditions.push(sql`l.reason = ${query.reason}`)
      conditions.push(...Page.dateRange(sql, "l.created_at", query))
      const where = sql.and(conditions)
      const page = Page.resolve(query, PageContract.ACCOUNT_LISTS)
      const [count] = yield* orDie(
        sql<{ total: string }>`SELECT count(*) AS total FROM ledger_entries l WHERE ${where}`
      )
      const entries = yield* orDie(rowsOf(
        StatementRow,
        sql`
        SELECT l.id, l.wallet, l.amount, l.balance_after, l.reason, o.order_number, p.payment_number, l.note,
          l.created_at
        FROM ledger_entries l
        LEFT JOIN orders o ON o.id = l.order_id
        LEFT JOIN payments p ON p.id = l.payment_id
        WHERE ${where}
        ORDER BY l.id DESC
        LIMIT ${page.perPage} OFFSET ${page.offset}
      `
      ))
      return {
        balance: yield* balanceOf(accountId),
        entries,
        pagination: Page.pagination(page, Number(count!.total))
      }
    })

    const keyRows = (accountId: number, keyId?: number) =>
      orDie(rowsOf(
        KeyRow,
        sql`
          SELECT id, name, prefix, mode, created_at, last_used_at, revoked_at FROM api_keys
          WHERE account_id = ${accountId} ${keyId === undefined ? sql`` : sql`AND id = ${keyId}`}
          ORDER BY id DESC
        `
      ))

    /** The account's keys, newest first, with their names. */
    const keys = Effect.fn("Dashboard.keys")(function*(accountId: Account.AccountId) {
      return yield* keyRows(accountId)
    })

    /** A new named key; the key itself is returned only here. */
    const createKey = Effect.fn("Dashboard.createKey")(function*(
      accountId: Account.AccountId,
      name: string,
      mode: ApiKey.ApiKeyMode = "live"
    ) {
      const created = yield* apiKeys.create(accountId, name, mode).pipe(Effect.orDie)
      const [row] = yield* keyRows(accountId, created.id)
      return { key: row!, api_key: created.api_key }
    })

    /** Revokes one of the account's keys (at once in this process, within the cache bound elsewhere). */
    const revokeKey = Effect.fn("Dashboard.revokeKey")(function*(accountId: Account.AccountId, keyId: ApiKey.ApiKeyId) {
      yield* apiKeys.revoke(accountId, keyId)
      const [row] = yield* keyRows(accountId, keyId)
      return row!
    })

    /** The webhook URL and its signing secret (every account has one). */
    const webhook = Effect.fn("Dashboard.webhook")(function*(accountId: Account.AccountId) {
      const settings = yield* webhooks.settings(accountId).pipe(Effect.orDie)
      return { url: settings.url, has_secret: true, secret: settings.secret }
    })

    /** Sets or clears the URL (the first URL gets a secret). */
    const setWebhookUrl = Effect.fn("Dashboard.setWebhookUrl")(
      function*(accountId: Account.AccountId, url: string | null) {
        yield* accounts.update(accountId, { webhook_url: url }).pipe(Effect.orDie)
        return yield* webhook(accountId)
      }
    )

    /** A new signing secret; the old one stops signing at once. */
    const rotateSecret = Effect.fn("Dashboard.rotateSecret")(function*(accountId: Account.AccountId) {
      yield* accounts.update(accountId, { rotate_webhook_secret: true }).pipe(Effect.orDie)
      return (yield* webhook(accountId)).secret
    })

    /** The delivery log, newest first (the public API's view). */
    const deliveries = Effect.fn("Dashboard.deliveries")(function*(
      accountId: Account.AccountId,
      query: DeliveryLog.ListDeliveriesParams
    ) {
      return yield* webhooks.deliveries(accountId, query)
    })

    /** One event's delivery, as the delivery log shows it. */
    const delivery = Effect.fn("Dashboard.delivery")(function*(accountId: Account.AccountId, eventId: string) {
      return yield* webhooks.delivery(accountId, eventId)
    })

    /** Delivers an event again, now, to the current URL; 409 while in flight or without a URL. */
    const resend = Effect.fn("Dashboard.resend")(function*(accountId: Account.AccountId, eventId: string) {
      return yield* webhooks.resend(accountId, eventId)
    })

    /** Queues a test event of a type to the account's URL (a 422 on `url` without one). */
    const sendTest = Effect.fn("Dashboard.sendTest")(function*(
      accountId: Account.AccountId,
      type: Webhook.WebhookEventType
    ) {
      const { delivery: queued } = yield* webhooks.trigger(accountId, type).pipe(Effect.orDie)
      if (queued === null) return yield* ApiError.ValidationError.field("url", "is not set: set a webhook URL first")
      return queued
    })

    return {
      home,
      ledger,
      keys,
      createKey,
      revokeKey,
      webhook,
      setWebhookUrl,
      rotateSecret,
      deliveries,
      delivery,
      resend,
      sendTest
    }
  })
}) {}
