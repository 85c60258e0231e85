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
  type Ledger,
  Order as OrderContract,
  type Payment,
  type Statement,
  type Wallet as WalletContract,
  Webhook
} from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { Accounts } from "./Accounts.js"
import { ApiKeys } from "./ApiKeys.js"
import { int8, orDie } from "./Database.js"
import { Orders } from "./Orders.js"
import * as Page from "./Page.js"
import { Payments } from "./Payments.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"
import { Wallet } from "./Wallet.js"

interface LedgerRow {
  readonly id: string | number
  readonly wallet: WalletContract.WalletKind
  readonly amount: string
  readonly balance_after: string
  readonly reason: Ledger.LedgerReason
  readonly order_number: string | null
  readonly payment_number: string | null
  readonly note: string | null
  readonly created_at: Date
}

interface KeyRow {
  readonly id: number
  readonly name: string | null
  readonly prefix: string
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

interface EventRow {
  readonly id: string
  readonly type: string
  readonly attempts: number
  readonly last_error: string | null
  readonly next_attempt_at: Date
  readonly delivered_at: Date | null
  readonly abandoned_at: Date | null
  readonly created_at: Date
  readonly webhook_url: string | null
  readonly leased: boolean
}

const decodeKeyId = Schema.decodeSync(ApiKey.ApiKeyId)

const toKey = (row: KeyRow): ApiKey.NamedApiKey => ({
  id: decodeKeyId(row.id),
  name: row.name,
  prefix: row.prefix,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
  revoked_at: row.revoked_at
})

// `last_error` of an attempt that got an answer other than 2xx reads "StatusCode: non 2xx status code (503 POST ...)".
const statusOf = (error: string | null): number | null => {
  const match = error === null ? null : /status code\D{0,3}([1-5]\d\d)\b/i.exec(error)
  return match === null ? null : Number(match[1])
}

const toDelivery = (row: EventRow): DeliveryLog.Delivery => {
  const finished = row.attempts - (row.leased ? 1 : 0)
  const state: DeliveryLog.DeliveryState = row.delivered_at !== null
    ? "delivered"
    : row.abandoned_at !== null
    ? "abandoned"
    : finished > 0
    ? "retrying"
    : "pending"
  return {
    id: row.id as Webhook.EventId,
    event_type: row.type,
    url: row.attempts > 0 ? row.webhook_url : null,
    state,
    attempts: row.attempts,
    last_status: statusOf(row.last_error),
    last_error: row.last_error,
    last_attempt_at: row.delivered_at ?? row.abandoned_at,
    next_attempt_at: state === "pending" || state === "retrying" ? row.next_attempt_at : null,
    delivered_at: row.delivered_at,
    created_at: row.created_at
  }
}

const boundInstant = (bound: string, edge: "from" | "to"): Date => {
  if (!OrderContract.isWholeDay(bound)) return new Date(bound)
  const start = new Date(`${bound}T00:00:00Z`)
  return edge === "from" ? start : new Date(start.getTime() + 86_400_000)
}

/** The dashboard's own reads and changes. */
export class Dashboard extends Effect.Service<Dashboard>()("core/Dashboard", {
  dependencies: [Accounts.Default, ApiKeys.Default, Orders.Default, Payments.Default, Wallet.Default, Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const apiKeys = yield* ApiKeys
    const orders = yield* Orders
    const payments = yield* Payments
    const wallet = yield* Wallet
    const settings = yield* Settings

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
      if (query.from !== undefined) conditions.push(sql`l.created_at >= ${boundInstant(query.from, "from")}`)
      if (query.to !== undefined) {
        conditions.push(
          OrderContract.isWholeDay(query.to)
            ? sql`l.created_at < ${boundInstant(query.to, "to")}`
            : sql`l.created_at <= ${boundInstant(query.to, "to")}`
        )
      }
      const where = sql.and(conditions)
      const page = Page.resolve(query, OrderContract.DEFAULT_PER_PAGE)
      const [count] = yield* orDie(
        sql<{ total: string }>`SELECT count(*) AS total FROM ledger_entries l WHERE ${where}`
      )
      const rows = yield* orDie(sql<LedgerRow>`
        SELECT l.id, l.wallet, l.amount, l.balance_after, l.reason, o.order_number, p.payment_number, l.note,
          l.created_at
        FROM ledger_entries l
        LEFT JOIN orders o ON o.id = l.order_id
        LEFT JOIN payments p ON p.id = l.payment_id
        WHERE ${where}
        ORDER BY l.id DESC
        LIMIT ${page.perPage} OFFSET ${page.offset}
      `)
      return {
        balance: yield* balanceOf(accountId),
        entries: rows.map((row) => ({
          id: Number(row.id),
          wallet: row.wallet,
          amount: int8(row.amount),
          balance_after: int8(row.balance_after),
          reason: row.reason,
          order_number: row.order_number,
          payment_number: row.payment_number as Payment.PaymentNumber | null,
          note: row.note,
          created_at: row.created_at
        })),
        pagination: Page.pagination(page, Number(count!.total))
      }
    })

    const keyRows = (accountId: number, keyId?: number) =>
      orDie(sql<KeyRow>`
        SELECT id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys
        WHERE account_id = ${accountId} ${keyId === undefined ? sql`` : sql`AND id = ${keyId}`}
        ORDER BY id DESC
      `)

    /** The account's keys, newest first, with their names. */
    const keys = Effect.fn("Dashboard.keys")(function*(accountId: Account.AccountId) {
      return (yield* keyRows(accountId)).map(toKey)
    })

    /** A new named key; the key itself is returned only here. */
    const createKey = Effect.fn("Dashboard.createKey")(function*(accountId: Account.AccountId, name: string) {
      const created = yield* apiKeys.create(accountId, name).pipe(Effect.orDie)
      const [row] = yield* keyRows(accountId, created.id)
      return { key: toKey(row!), api_key: created.api_key }
    })

    /** Revokes one of the account's keys (at once in this process, within the cache bound elsewhere). */
    const revokeKey = Effect.fn("Dashboard.revokeKey")(function*(accountId: Account.AccountId, keyId: ApiKey.ApiKeyId) {
      yield* apiKeys.revoke(accountId, keyId)
      const [row] = yield* keyRows(accountId, keyId)
      return toKey(row!)
    })

    /** The webhook URL and whether a secret exists. */
    const webhook = Effect.fn("Dashboard.webhook")(function*(accountId: Account.AccountId) {
      const detail = yield* accounts.show(accountId).pipe(Effect.orDie)
      return { url: detail.webhook_url, has_secret: detail.webhook_secret !== null, secret: detail.webhook_secret }
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
      return (yield* webhook(accountId)).secret!
    })

    const eventRows = (accountId: number, where: ReturnType<typeof sql.and>, page: Page.Page) =>
      orDie(sql<EventRow>`
        SELECT e.id, e.type, e.attempts, e.last_error, e.next_attempt_at, e.delivered_at, e.abandoned_at, e.created_at,
          a.webhook_url, coalesce(e.leased_until > now(), false) AS leased
        FROM webhook_events e JOIN accounts a ON a.id = e.account_id
        WHERE e.account_id = ${accountId} AND ${where}
        ORDER BY e.created_at DESC, e.id DESC
        LIMIT ${page.perPage} OFFSET ${page.offset}
      `)

    /** The delivery log, newest first. */
    const deliveries = Effect.fn("Dashboard.deliveries")(function*(
      accountId: Account.AccountId,
      query: DeliveryLog.ListDeliveriesParams
    ) {
      const conditions = [sql`true`]
      if (query.type !== undefined) conditions.push(sql`e.type = ${query.type}`)
      const open = sql`e.delivered_at IS NULL AND e.abandoned_at IS NULL`
      const tried = sql`e.attempts - (CASE WHEN e.leased_until > now() THEN 1 ELSE 0 END)`
      if (query.state === "delivered") conditions.push(sql`e.delivered_at IS NOT NULL`)
      if (query.state === "abandoned") conditions.push(sql`e.abandoned_at IS NOT NULL`)
      if (query.state === "pending") conditions.push(sql`${open} AND ${tried} = 0`)
      if (query.state === "retrying") conditions.push(sql`${open} AND ${tried} > 0`)
      const where = sql.and(conditions)
      const page = Page.resolve(query, OrderContract.DEFAULT_PER_PAGE)
      const [count] = yield* orDie(sql<{ total: string }>`
        SELECT count(*) AS total FROM webhook_events e WHERE e.account_id = ${accountId} AND ${where}
      `)
      const rows = yield* eventRows(accountId, where, page)
      return { deliveries: rows.map(toDelivery), pagination: Page.pagination(page, Number(count!.total)) }
    })

    const notFound = (eventId: string) =>
      new DeliveryLog.DeliveryNotFound({ message: `Webhook event ${eventId} not found` })

    /** One event's delivery. */
    const delivery = Effect.fn("Dashboard.delivery")(function*(accountId: Account.AccountId, eventId: string) {
      const [row] = yield* eventRows(accountId, sql.and([sql`e.id = ${eventId}`]), Page.resolve({}, 1))
      if (row === undefined) return yield* notFound(eventId)
      return toDelivery(row)
    })

    /**
     * Delivers an event again, now, to the account's current URL: the same id, its attempts
     * counted afresh. A 409 while an attempt of it is in flight, or without a URL.
     */
    const resend = Effect.fn("Dashboard.resend")(function*(accountId: Account.AccountId, eventId: string) {
      const rows = yield* orDie(sql`
        UPDATE webhook_events e SET delivered_at = NULL, abandoned_at = NULL, next_attempt_at = now(), attempts = 0
        FROM accounts a
        WHERE e.id = ${eventId} AND e.account_id = ${accountId} AND a.id = e.account_id AND a.webhook_url IS NOT NULL
          AND (e.leased_until IS NULL OR e.leased_until <= now())
        RETURNING e.id
      `)
      if (rows.length === 0) {
        const current = yield* delivery(accountId, eventId)
        return yield* new ApiError.Conflict({
          message: current.state === "pending" || current.state === "retrying"
            ? "An attempt of this delivery is in flight; resend it once it has finished"
            : "The account has no webhook URL to deliver to; set one first"
        })
      }
      return yield* delivery(accountId, eventId)
    })

    /**
     * Queues a test event of a type to the account's URL (a 422 on `url` without one): marked
     * `test: true`, with data that describes nothing real.
     */
    const sendTest = Effect.fn("Dashboard.sendTest")(function*(
      accountId: Account.AccountId,
      type: (typeof DeliveryLog.EVENT_TYPES)[number]
    ) {
      const id = Tokens.eventId()
      const now = new Date(yield* Clock.currentTimeMillis)
      const balance = (yield* balanceOf(accountId)).main
      const order = {
        order_number: Tokens.orderNumber(),
        bundle: "Test bundle",
        network: "Test network",
        phone_number: "0240000000",
        amount_paid: 1,
        status: type === "order.failed" ? "failed" : "successful",
        reference: "test-event",
        created_at: now.toISOString()
      }
      const movement = {
        account_id: accountId,
        wallet: "main",
        amount: 1,
        balance: Number(balance) / 100,
        reason: "adjustment",
        order_number: null,
        note: "Test event: no money moved"
      }
      const body = JSON.stringify({
        id,
        type,
        created_at: now.toISOString(),
        test: true,
        data: type.startsWith("order.") ? order : movement
      })
      const rows = yield* orDie(sql`
        INSERT INTO webhook_events (id, account_id, type, body)
        SELECT ${id}, id, ${type}, ${body} FROM accounts
        WHERE id = ${accountId} AND webhook_url IS NOT NULL
        RETURNING id
      `)
      if (rows.length === 0) return yield* ApiError.ValidationError.field("url", "is not set: set a webhook URL first")
      return yield* Effect.orDie(delivery(accountId, id))
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
