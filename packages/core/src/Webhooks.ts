/**
 * Webhooks: events written to an outbox in the same transaction as the change they
 * describe. Every event is kept in the account's feed (GET /events); only those of an
 * account with a webhook URL are queued for delivery (`WebhookDelivery`).
 */
import {
  Account,
  ApiError,
  Event,
  Mode,
  type Order,
  Page as PageContract,
  Webhook,
  WebhookDelivery as DeliveryContract
} from "@databundle/contract"
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { Int8, Int8Number, orDie, rowsOf } from "./Database.js"
import * as Page from "./Page.js"
import * as Tokens from "./Tokens.js"

/** The most endpoints the operator's health list shows (failing ones first). */
export const HEALTH_LIMIT = 500

/** An event as `DELIVERY_COLUMNS` read its delivery. */
const DeliveryRow = Schema.Struct({
  id: Webhook.EventId,
  type: Webhook.WebhookEventType,
  url: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  leased: Schema.Boolean,
  last_status: Schema.NullOr(Schema.Number),
  last_error: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  next_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  delivered_at: Schema.NullOr(Schema.DateFromSelf),
  abandoned_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})

type DeliveryRow = typeof DeliveryRow.Type

/** An event of the feed: its place, and its body as it was stored (the JSON `Webhook.eventBody` wrote). */
const FeedRow = Schema.Struct({ seq: Event.EventCursor, body: Schema.parseJson(Webhook.WebhookEvent) })

/** How many events a feed's filter selects, and the newest one's place. */
const FeedHead = Schema.Struct({ total: Int8Number, newest: Schema.NullOr(Event.EventCursor) })

/** One endpoint's health, as the operator's list reads it. */
const HealthRow = Schema.Struct({
  account_id: Account.AccountId,
  account_name: Schema.String,
  url: Schema.NullOr(Schema.String),
  backlog: Int8Number,
  oldest_queued_at: Schema.NullOr(Schema.DateFromSelf),
  failing_since: Schema.NullOr(Schema.DateFromSelf),
  abandoned: Int8Number,
  last_status: Schema.NullOr(Schema.Number),
  last_attempt_at: Schema.NullOr(Schema.DateFromSelf)
})

const DELIVERY_COLUMNS = `e.id, e.type, e.url, e.attempts, coalesce(e.leased_until > now(), false) AS leased,
  e.last_status, e.last_error, e.last_attempt_at, e.next_attempt_at, e.delivered_at, e.abandoned_at, e.created_at`

const toDelivery = (row: DeliveryRow): DeliveryContract.Delivery => {
  const finished = row.attempts - (row.leased ? 1 : 0)
  const state: DeliveryContract.DeliveryState = row.delivered_at !== null
    ? "delivered"
    : row.abandoned_at !== null
    ? "abandoned"
    : finished > 0
    ? "retrying"
    : "pending"
  return {
    id: row.id,
    event_type: row.type,
    url: row.url,
    state,
    attempts: row.attempts,
    last_status: row.last_status,
    last_error: row.last_error,
    last_attempt_at: row.last_attempt_at,
    next_attempt_at: state === "pending" || state === "retrying" ? row.next_attempt_at : null,
    delivered_at: row.delivered_at,
    created_at: row.created_at
  }
}

const isEventId = Schema.is(Webhook.EventId)

/** The `data` of a test event of each type: plainly not real, and marked `test: true` besides. */
const testContent = (
  type: Webhook.WebhookEventType,
  accountId: Account.AccountId,
  mainBalance: bigint,
  now: Date
): Webhook.WebhookEventContent => {
  const order: Order.Order = {
    order_number: Tokens.orderNumber(),
    bundle: "Test bundle",
    network: "Test network",
    phone_number: "0240000000",
    amount_paid: 100n,
    status: type === "order.failed" ? "failed" : "successful",
    reference: "test-event",
    created_at: now
  }
  const movement: Webhook.WalletMovement = {
    account_id: accountId,
    wallet: "main",
    amount: 100n,
    balance: mainBalance,
    reason: "adjustment",
    order_number: null,
    note: "Test event: no money moved"
  }
  switch (type) {
    case "order.successful":
      return { type, test: true, data: order }
    case "order.failed":
      return { type, test: true, data: order }
    case "wallet.funded":
      return { type, test: true, data: movement }
    case "wallet.debited":
      return { type, test: true, data: movement }
  }
}

/** A value of an event's body that the statement writing the event supplies. */
export interface SplicedValue {
  /** The JSON text the body was written with in the value's place: it must appear there exactly once. */
  readonly standIn: string
  /** The SQL of the value's JSON text. */
  readonly json: Statement.Fragment
}

/**
 * The SQL of an event's body whose `values` only the statement writing it knows (a price read
 * in that statement, the balance its debit left, its time). `body` is the body written with
 * a stand-in for each of them (`eventBody` of the event so made), and it is cut around them:
 * the text between is sent as parameters, each value's JSON spliced in where its stand-in
 * was, so the stored text is the one `eventBody` would write with the real values.
 */
export const splicedBody = (
  sql: SqlClient.SqlClient,
  body: string,
  values: ReadonlyArray<SplicedValue>
): Statement.Fragment => {
  const found = values.map((value) => {
    const at = body.indexOf(value.standIn)
    if (at < 0 || body.indexOf(value.standIn, at + 1) >= 0) {
      throw new Error(`the stand-in ${value.standIn} must appear exactly once in the event body`)
    }
    return { at, value }
  }).sort((a, b) => a.at - b.at)
  const parts: Array<Statement.Fragment> = []
  let from = 0
  for (const { at, value } of found) {
    parts.push(sql`${body.slice(from, at)}::text`, value.json)
    from = at + value.standIn.length
  }
  parts.push(sql`${body.slice(from)}::text`)
  return sql.join(" || ", false)(parts)
}

/**
 * The outbox and the account's view of it: events written in the transaction of each change,
 * the event feed, deliveries and their resending, test events, the webhook settings. Every
 * method that reads for an account takes its id and shows nothing of another account.
 */
export class Webhooks extends Effect.Service<Webhooks>()("core/Webhooks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (accountId: number, event: Webhook.WebhookEvent) =>
      // Numbering the event from the account's counter locks the account's row until the
      // transaction ends, so the account's events commit in the order of their numbers.
      orDie(sql<{ queued: boolean }>`
        WITH a AS (
          UPDATE accounts SET event_seq = event_seq + 1 WHERE id = ${accountId}
          RETURNING id, event_seq, mode
        )
        INSERT INTO webhook_events (id, account_id, seq, type, body, next_attempt_at, queued_at)
        SELECT ${event.id}, a.id, a.event_seq, ${event.type},
          CASE WHEN a.mode = 'test' THEN ${Webhook.eventBody({ ...event, livemode: false })}
            ELSE ${Webhook.eventBody(event)} END,
          CASE WHEN t.webhook_url IS NULL THEN NULL ELSE now() END,
          CASE WHEN t.webhook_url IS NULL THEN NULL ELSE now() END
        FROM a JOIN webhook_targets t ON t.id = a.id
        RETURNING queued_at IS NOT NULL AS queued
      `)

    const newEvent = (content: Webhook.WebhookEventContent) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        ({
          ...content,
          id: Webhook.EventId.make(Tokens.eventId()),
          created_at: new Date(now),
          // The insert marks a test account's event `false` as it writes it.
          livemode: true
        }) as Webhook.WebhookEvent)

    /**
     * Records an event for the account, in its feed always and queued for delivery when it has
     * a webhook URL. Call it inside the transaction that makes the change, so the event exists
     * exactly when the change does.
     */
    const enqueue = Effect.fn("Webhooks.enqueue")(function*(accountId: number, content: Webhook.WebhookEventContent) {
      yield* insert(accountId, yield* newEvent(content))
    })

    const deliveryRows = (where: ReturnType<typeof sql.and>, tail = sql``) =>
      orDie(
        rowsOf(
          DeliveryRow,
          sql`
            SELECT ${sql.literal(DELIVERY_COLUMNS)} FROM webhook_events e
            WHERE ${where}
            ORDER BY e.queued_at DESC, e.seq DESC
            ${tail}
          `
        )
      )

    // Only a well-formed event id can name a delivery: anything else (a NUL byte too) is not found without a query.
    const deliveryOf = (accountId: number, id: string) =>
      !isEventId(id) ? Effect.succeed(undefined) : Effect.map(
        deliveryRows(sql.and([sql`e.account_id = ${accountId}`, sql`e.id = ${id}`, sql`e.queued_at IS NOT NULL`])),
        ([row]) => row === undefined ? undefined : toDelivery(row)
      )

    /**
     * One page of the account's events, newest first. With `since`, only the events after that
     * cursor, page 1 being the ones right after it. The cursor is the account's event number
     * (see the migration `0005_event_feed`), which commits in order, so a cursor handed out here
     * never has an event committed behind it later.
     */
    const events = Effect.fn("Webhooks.events")(function*(accountId: number, query: Event.ListEventsParams) {
      const page = Page.resolve(query, PageContract.FEED)
      const conditions = [sql`e.account_id = ${accountId}`]
      if (query.type !== undefined) conditions.push(sql`e.type = ${query.type}`)
      if (query.since !== undefined) conditions.push(sql`e.seq > ${query.since}`)
      const where = sql.and(conditions)
      // From the cursor forwards when following, from the newest backwards when browsing.
      const order = query.since === undefined ? sql`ORDER BY e.seq DESC` : sql`ORDER BY e.seq`
      const head = yield* orDie(
        SqlSchema.single({
          Request: Schema.Void,
          Result: FeedHead,
          execute: () =>
            sql`SELECT count(*)::text AS total, max(e.seq)::text AS newest FROM webhook_events e WHERE ${where}`
        })(undefined)
      )
      const rows = yield* orDie(
        rowsOf(
          FeedRow,
          sql`
            SELECT e.seq::text AS seq, e.body FROM webhook_events e WHERE ${where}
            ${order} LIMIT ${page.perPage} OFFSET ${page.offset}
          `
        )
      )
      const listed = query.since === undefined ? rows : [...rows].reverse()
      return {
        events: listed.map((row) => row.body),
        pagination: Page.pagination(page, head.total),
        cursor: listed[0]?.seq ?? query.since ?? head.newest ?? Event.START_CURSOR
      }
    })

    /** One page of the account's deliveries, newest first. */
    const deliveries = Effect.fn("Webhooks.deliveries")(function*(
      accountId: number,
      query: DeliveryContract.ListDeliveriesParams
    ) {
      const page = Page.resolve(query, PageContract.FEED)
      const conditions = [sql`e.account_id = ${accountId}`, sql`e.queued_at IS NOT NULL`]
      if (query.type !== undefined) conditions.push(sql`e.type = ${query.type}`)
      switch (query.state) {
        case "delivered":
          conditions.push(sql`e.delivered_at IS NOT NULL`)
          break
        case "abandoned":
          conditions.push(sql`e.abandoned_at IS NOT NULL`)
          break
        case "pending":
          conditions.push(sql`e.delivered_at IS NULL AND e.abandoned_at IS NULL`)
          conditions.push(sql`e.attempts - (CASE WHEN e.leased_until > now() THEN 1 ELSE 0 END) = 0`)
          break
        case "retrying":
          conditions.push(sql`e.delivered_at IS NULL AND e.abandoned_at IS NULL`)
          conditions.push(sql`e.attempts - (CASE WHEN e.leased_until > now() THEN 1 ELSE 0 END) > 0`)
          break
      }
      const where = sql.and(conditions)
      const [count] = yield* orDie(
        sql<{ total: string }>`SELECT count(*) AS total FROM webhook_events e WHERE ${where}`
      )
      const rows = yield* deliveryRows(where, sql`LIMIT ${page.perPage} OFFSET ${page.offset}`)
      return { deliveries: rows.map(toDelivery), pagination: Page.pagination(page, Number(count!.total)) }
    })

    /**
     * Queues one of the account's events for delivery again, now, to the account's current URL;
     * if that attempt fails it is retried as a new delivery would be. Any event of the account
     * can be resent, also one recorded before it had a URL. Refused (409) while an attempt of
     * it is in flight, and when the account has no webhook URL.
     */
    const resend = Effect.fn("Webhooks.resend")(function*(accountId: number, id: string) {
      if (!isEventId(id)) return yield* new DeliveryContract.DeliveryNotFound({ message: `Delivery ${id} not found` })
      const resent = yield* orDie(sql<{ id: string }>`
        UPDATE webhook_events e
        SET next_attempt_at = now(), queued_at = now(), attempts = 0, delivered_at = NULL, abandoned_at = NULL
        FROM webhook_targets a
        WHERE e.id = ${id} AND e.account_id = ${accountId} AND a.id = e.account_id AND a.webhook_url IS NOT NULL
          AND (e.leased_until IS NULL OR e.leased_until <= now())
        RETURNING e.id
      `)
      if (resent.length === 0) {
        const [why] = yield* orDie(sql<{ leased: boolean; has_url: boolean }>`
          SELECT coalesce(e.leased_until > now(), false) AS leased, a.webhook_url IS NOT NULL AS has_url
          FROM webhook_events e JOIN webhook_targets a ON a.id = e.account_id
          WHERE e.id = ${id} AND e.account_id = ${accountId}
        `)
        if (why === undefined) {
          return yield* new DeliveryContract.DeliveryNotFound({ message: `Delivery ${id} not found` })
        }
        return yield* new ApiError.Conflict({
          message: !why.has_url
            ? "The account has no webhook URL to deliver to; set one first"
            : "An attempt of this delivery is in flight; resend it once it has finished"
        })
      }
      return (yield* deliveryOf(accountId, id))!
    })

    /**
     * The health of every account's webhook endpoint, for the operator: accounts with a URL or
     * with events still queued or abandoned, the failing ones first (oldest failure first), at
     * most `HEALTH_LIMIT`. Each figure is read per account by an index of its own.
     */
    const health = orDie(
      rowsOf(
        HealthRow,
        sql`
      SELECT a.id AS account_id, a.name AS account_name, a.webhook_url AS url, q.backlog, q.oldest_queued_at,
        q.failing_since, ab.abandoned, la.last_status, la.last_attempt_at
      FROM accounts a
      CROSS JOIN LATERAL (
        SELECT count(*) AS backlog, min(e.queued_at) AS oldest_queued_at,
          min(e.queued_at) FILTER (
            WHERE e.attempts - (CASE WHEN e.leased_until > now() THEN 1 ELSE 0 END) > 0
          ) AS failing_since
        FROM webhook_events e
        WHERE e.account_id = a.id AND e.queued_at IS NOT NULL AND e.delivered_at IS NULL AND e.abandoned_at IS NULL
      ) q
      CROSS JOIN LATERAL (
        SELECT count(*) AS abandoned FROM webhook_events e WHERE e.account_id = a.id AND e.abandoned_at IS NOT NULL
      ) ab
      LEFT JOIN LATERAL (
        SELECT e.last_status, e.last_attempt_at FROM webhook_events e
        WHERE e.account_id = a.id AND e.last_attempt_at IS NOT NULL
        ORDER BY e.last_attempt_at DESC LIMIT 1
      ) la ON true
      WHERE a.webhook_url IS NOT NULL OR q.backlog > 0 OR ab.abandoned > 0
      ORDER BY q.failing_since IS NULL, q.failing_since, ab.abandoned DESC, a.id
      LIMIT ${HEALTH_LIMIT}
    `
      )
    ).pipe(Effect.withSpan("Webhooks.health"))

    /**
     * Records a test event of a type for the account, marked `test: true`, with data that
     * describes nothing real; delivered like any other when the account has a webhook URL.
     */
    const trigger = Effect.fn("Webhooks.trigger")(function*(accountId: number, type: Webhook.WebhookEventType) {
      const found = yield* orDie(
        SqlSchema.findOne({
          Request: Schema.Number,
          Result: Schema.Struct({ account_id: Account.AccountId, balance: Int8, mode: Mode.Mode }),
          execute: (id) =>
            sql`
            SELECT w.account_id, w.balance, a.mode FROM wallets w JOIN accounts a ON a.id = w.account_id
            WHERE w.account_id = ${id} AND w.kind = 'main'
          `
        })(accountId)
      )
      if (Option.isNone(found)) {
        return yield* new Account.AccountNotFound({ message: `Account ${accountId} not found` })
      }
      const balance = found.value
      const now = new Date(yield* Clock.currentTimeMillis)
      const made = yield* newEvent(testContent(type, balance.account_id, balance.balance, now))
      const event = { ...made, livemode: balance.mode === "live" }
      const [row] = yield* insert(accountId, event)
      const delivery = row?.queued === true ? (yield* deliveryOf(accountId, event.id)) ?? null : null
      return { event, delivery }
    })

    /**
     * The account's webhook URL and signing secret. Every account has a secret (made with the
     * account), so a receiver, or `bundles webhooks listen`, can be set up before the URL is.
     */
    const settings = Effect.fn("Webhooks.settings")(function*(accountId: number) {
      const [row] = yield* orDie(sql<{ webhook_url: string | null; webhook_secret: string | null }>`
        SELECT webhook_url, webhook_secret FROM webhook_targets WHERE id = ${accountId}
      `)
      if (row === undefined) {
        return yield* new Account.AccountNotFound({ message: `Account ${accountId} not found` })
      }
      if (row.webhook_secret === null) return yield* Effect.die(new Error(`account ${accountId} has no webhook secret`))
      const settings: DeliveryContract.WebhookSettings = { url: row.webhook_url, secret: row.webhook_secret }
      return settings
    })

    /** One of the account's queued events, as the delivery log shows it; 404 for any other. */
    const delivery = Effect.fn("Webhooks.delivery")(function*(accountId: number, id: string) {
      const found = yield* deliveryOf(accountId, id)
      if (found === undefined) {
        return yield* new DeliveryContract.DeliveryNotFound({ message: `Delivery ${id} not found` })
      }
      return found
    })

    return { enqueue, events, deliveries, delivery, resend, trigger, settings, health }
  })
}) {}
