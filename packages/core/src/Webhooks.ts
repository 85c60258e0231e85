/**
 * Webhooks: events written to an outbox in the same transaction as the change they
 * describe, then delivered at least once, signed, with exponential back-off. Every event is
 * kept in the account's feed (GET /events); only those of an account with a webhook URL
 * are queued for delivery.
 *
 * Delivery is fair between receivers: at most `PER_ENDPOINT` attempts are in flight to one
 * URL (counted in the database, so across every process), at most `MAX_IN_FLIGHT` per process,
 * and each attempt has `ATTEMPT_DEADLINE` to answer. A receiver that never answers holds two
 * slots, never the queue. The HttpClient in context is the transport: the server provides one
 * that never follows redirects and refuses private addresses.
 */
import {
  Account,
  ApiError,
  Event,
  type Order,
  Webhook,
  WebhookDelivery as DeliveryContract
} from "@databundle/contract"
import { HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Duration, Effect, Ref, Schedule, Schema } from "effect"
import { int8, orDie } from "./Database.js"
import * as Page from "./Page.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"
import * as UrlCredentials from "./UrlCredentials.js"

/** Deliveries are retried for at least this long before an event is abandoned. */
export const RETRY_WINDOW = Duration.hours(25)

/** The most endpoints the operator's health list shows (failing ones first). */
export const HEALTH_LIMIT = 500

/** The wait before attempt `n + 1`: 10 s doubling per attempt, at most an hour. */
export const backoff = (attempts: number): Duration.Duration =>
  Duration.seconds(Math.min(10 * 2 ** Math.max(0, attempts - 1), 3600))

/** Attempts in flight to one webhook URL at a time, across every server process. */
export const PER_ENDPOINT = 2

/** Attempts in flight at a time in one process. */
export const MAX_IN_FLIGHT = 32

/** How long a receiver has to answer one attempt (connection included) before it counts as failed. */
export const ATTEMPT_DEADLINE = Duration.seconds(5)

/**
 * How long a claimed event stays another process's to leave alone; well past the deadline,
 * so only a process that died mid-attempt lets its lease run out.
 */
export const LEASE = Duration.seconds(60)

const decodeEvent = Schema.decodeUnknownSync(Schema.parseJson(Webhook.WebhookEvent))

interface DeliveryRow {
  readonly id: string
  readonly type: Webhook.WebhookEventType
  readonly url: string | null
  readonly attempts: number
  readonly leased: boolean
  readonly last_status: number | null
  readonly last_error: string | null
  readonly last_attempt_at: Date | null
  readonly next_attempt_at: Date | null
  readonly delivered_at: Date | null
  readonly abandoned_at: Date | null
  readonly created_at: Date
}

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
    id: Webhook.EventId.make(row.id),
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
    order_number: Tokens.orderNumber() as Order.OrderNumber,
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
      orDie(sql<DeliveryRow>`
        SELECT ${sql.literal(DELIVERY_COLUMNS)} FROM webhook_events e
        WHERE ${where}
        ORDER BY e.queued_at DESC, e.seq DESC
        ${tail}
      `)

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
      const page = Page.resolve(query, Event.DEFAULT_PER_PAGE)
      const conditions = [sql`e.account_id = ${accountId}`]
      if (query.type !== undefined) conditions.push(sql`e.type = ${query.type}`)
      if (query.since !== undefined) conditions.push(sql`e.seq > ${query.since}`)
      const where = sql.and(conditions)
      // From the cursor forwards when following, from the newest backwards when browsing.
      const order = query.since === undefined ? sql`ORDER BY e.seq DESC` : sql`ORDER BY e.seq`
      const [head] = yield* orDie(sql<{ total: string; newest: string | null }>`
        SELECT count(*)::text AS total, max(e.seq)::text AS newest FROM webhook_events e WHERE ${where}
      `)
      const rows = yield* orDie(sql<{ seq: string; body: string }>`
        SELECT e.seq::text AS seq, e.body FROM webhook_events e WHERE ${where}
        ${order} LIMIT ${page.perPage} OFFSET ${page.offset}
      `)
      const listed = query.since === undefined ? rows : [...rows].reverse()
      const cursor = listed[0]?.seq ?? query.since ?? head!.newest ?? Event.START_CURSOR
      return {
        events: listed.map((row) => decodeEvent(row.body)),
        pagination: Page.pagination(page, Number(head!.total)),
        cursor: cursor as Event.EventCursor
      }
    })

    /** One page of the account's deliveries, newest first. */
    const deliveries = Effect.fn("Webhooks.deliveries")(function*(
      accountId: number,
      query: DeliveryContract.ListDeliveriesParams
    ) {
      const page = Page.resolve(query, DeliveryContract.DEFAULT_PER_PAGE)
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
    const health = orDie(sql<{
      account_id: number
      account_name: string
      url: string | null
      backlog: string | number | null
      oldest_queued_at: Date | null
      failing_since: Date | null
      abandoned: string | number | null
      last_status: number | null
      last_attempt_at: Date | null
    }>`
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
    `).pipe(
      Effect.map((rows) =>
        rows.map((row) => ({
          account_id: row.account_id,
          account_name: row.account_name,
          url: row.url,
          backlog: Number(row.backlog ?? 0),
          oldest_queued_at: row.oldest_queued_at,
          failing_since: row.failing_since,
          abandoned: Number(row.abandoned ?? 0),
          last_status: row.last_status,
          last_attempt_at: row.last_attempt_at
        }))
      ),
      Effect.withSpan("Webhooks.health")
    )

    /**
     * Records a test event of a type for the account, marked `test: true`, with data that
     * describes nothing real; delivered like any other when the account has a webhook URL.
     */
    const trigger = Effect.fn("Webhooks.trigger")(function*(accountId: number, type: Webhook.WebhookEventType) {
      const [balance] = yield* orDie(sql<{ balance: string; mode: "live" | "test" }>`
        SELECT w.balance, a.mode FROM wallets w JOIN accounts a ON a.id = w.account_id
        WHERE w.account_id = ${accountId} AND w.kind = 'main'
      `)
      if (balance === undefined) {
        return yield* new Account.AccountNotFound({ message: `Account ${accountId} not found` })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const made = yield* newEvent(testContent(type, accountId as Account.AccountId, int8(balance.balance), now))
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

interface DueEvent {
  readonly id: string
  readonly type: Webhook.WebhookEventType
  readonly body: string
  readonly attempts: number
  readonly queued_at: Date
  readonly webhook_url: string | null
  readonly webhook_secret: string | null
}

/** Why an attempt failed, in a line fit for `last_error` and the log. */
const reason = (error: unknown): string =>
  (error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)).slice(0, 500)

/** Delivers queued events; several processes can run it against one database. */
export class WebhookDelivery extends Effect.Service<WebhookDelivery>()("core/WebhookDelivery", {
  dependencies: [Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* Settings
    // A redirect is an answer other than 2xx: a failed attempt, never followed here.
    const client = HttpClient.filterStatusOk(yield* HttpClient.HttpClient)

    /**
     * Leases up to `limit` due events, at most `PER_ENDPOINT` in flight per URL counting the
     * leases other processes hold, first slots first so every receiver gets its turn. Two
     * processes claiming at once both pick the same rows; the re-checked lease condition lets
     * only the first one have each.
     */
    const claim = (limit: number) =>
      sql<DueEvent>`
        WITH busy AS (
          SELECT a.webhook_url, count(*) AS n
          FROM webhook_events e JOIN webhook_targets a ON a.id = e.account_id
          -- (A leased event has its next attempt set: the due index holds it.)
          WHERE e.next_attempt_at IS NOT NULL AND e.delivered_at IS NULL AND e.abandoned_at IS NULL
            AND e.leased_until > now()
          GROUP BY a.webhook_url
        ), ranked AS (
          SELECT e.id, e.next_attempt_at,
            coalesce(b.n, 0) + row_number() OVER (PARTITION BY a.webhook_url ORDER BY e.next_attempt_at, e.id) AS slot
          FROM webhook_events e
          JOIN webhook_targets a ON a.id = e.account_id
          LEFT JOIN busy b ON b.webhook_url = a.webhook_url
          WHERE e.delivered_at IS NULL AND e.abandoned_at IS NULL AND e.next_attempt_at <= now()
            AND (e.leased_until IS NULL OR e.leased_until <= now())
        ), chosen AS (
          SELECT id FROM ranked WHERE slot <= ${PER_ENDPOINT} ORDER BY slot, next_attempt_at, id LIMIT ${limit}
        )
        UPDATE webhook_events e
        SET leased_until = now() + make_interval(secs => ${Duration.toSeconds(LEASE)}), attempts = e.attempts + 1,
          url = a.webhook_url, last_attempt_at = now()
        FROM webhook_targets a, chosen c
        WHERE e.id = c.id AND a.id = e.account_id AND e.delivered_at IS NULL AND e.abandoned_at IS NULL
          AND (e.leased_until IS NULL OR e.leased_until <= now())
        RETURNING e.id, e.type, e.body, e.attempts, e.queued_at, a.webhook_url, a.webhook_secret
      `.pipe(orDie)

    const deliver = (event: DueEvent) =>
      Effect.gen(function*() {
        if (event.webhook_url === null || event.webhook_secret === null) {
          return yield* sql`
            UPDATE webhook_events SET abandoned_at = now(), leased_until = NULL, last_error = 'no webhook URL'
            WHERE id = ${event.id}
          `
        }
        const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const [signature, standard] = yield* Effect.promise(() =>
          Promise.all([
            Webhook.signatureHeader(event.webhook_secret!, timestamp, event.body),
            Webhook.standardSignature(event.webhook_secret!, event.id, timestamp, event.body)
          ])
        )
        // Credentials in the URL go as Basic auth, so no error, log or trace ever holds them.
        const target = UrlCredentials.split(event.webhook_url)
        const sent = yield* client.execute(
          HttpClientRequest.post(target.url).pipe(
            HttpClientRequest.setHeaders({
              ...(target.authorization === undefined ? {} : { authorization: target.authorization }),
              [Webhook.SIGNATURE_HEADER]: signature,
              [Webhook.ID_HEADER]: event.id,
              [Webhook.EVENT_HEADER]: event.type,
              [Webhook.STANDARD_ID_HEADER]: event.id,
              [Webhook.STANDARD_TIMESTAMP_HEADER]: String(timestamp),
              [Webhook.STANDARD_SIGNATURE_HEADER]: standard,
              "user-agent": "databundle-webhooks/1"
            }),
            HttpClientRequest.bodyText(event.body, "application/json")
          )
        ).pipe(
          Effect.timeoutFail({
            duration: ATTEMPT_DEADLINE,
            onTimeout: () => new Error(`no answer within ${Duration.format(ATTEMPT_DEADLINE)}`)
          }),
          Effect.map((response) => response.status),
          Effect.scoped,
          Effect.either
        )
        if (sent._tag === "Right") {
          return yield* sql`
            UPDATE webhook_events SET delivered_at = now(), leased_until = NULL, last_error = NULL,
              last_status = ${sent.right}
            WHERE id = ${event.id}
          `
        }
        // The receiver's status when it answered (a non-2xx, a redirect); none when it never did.
        const status = HttpClientError.isHttpClientError(sent.left) && sent.left._tag === "ResponseError"
          ? sent.left.response.status
          : null
        const error = reason(sent.left)
        yield* Effect.logInfo("webhook attempt failed").pipe(
          Effect.annotateLogs({ event: event.id, attempt: event.attempts, error })
        )
        const expired = (yield* Clock.currentTimeMillis) - event.queued_at.getTime() > Duration.toMillis(RETRY_WINDOW)
        return yield* expired
          ? sql`
            UPDATE webhook_events SET abandoned_at = now(), leased_until = NULL, last_error = ${error},
              last_status = ${status}
            WHERE id = ${event.id}
          `
          : sql`
            UPDATE webhook_events
            SET next_attempt_at = now() + make_interval(secs => ${Duration.toSeconds(backoff(event.attempts))}),
                leased_until = NULL, last_error = ${error}, last_status = ${status}
            WHERE id = ${event.id}
          `
      }).pipe(orDie, Effect.withSpan("WebhookDelivery.deliver", { attributes: { event: event.id } }))

    /**
     * Delivers every due event, round after round while some are left (a URL takes
     * `PER_ENDPOINT` per round); returns how many attempts were made.
     */
    const deliverDue = Effect.gen(function*() {
      let attempted = 0
      while (true) {
        const events = yield* claim(MAX_IN_FLIGHT)
        if (events.length === 0) return attempted
        attempted += events.length
        yield* Effect.forEach(events, deliver, { concurrency: "unbounded", discard: true })
      }
    }).pipe(Effect.withSpan("WebhookDelivery.deliverDue"))

    /**
     * Runs forever: every poll interval, claims as many due events as the process has free
     * slots and starts each attempt without waiting for the others, so a receiver that
     * never answers delays nobody else. Failures are logged, not fatal.
     */
    const run = Effect.gen(function*() {
      const inFlight = yield* Ref.make(0)
      const tick = Effect.gen(function*() {
        const free = MAX_IN_FLIGHT - (yield* Ref.get(inFlight))
        if (free <= 0) return
        const events = yield* claim(free)
        yield* Ref.update(inFlight, (n) => n + events.length)
        for (const event of events) {
          // A child of this fiber: stopping the worker stops its attempts; their leases run out.
          yield* Effect.fork(
            deliver(event).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning("webhook delivery failed", cause)),
              Effect.ensuring(Ref.update(inFlight, (n) => n - 1))
            )
          )
        }
      })
      return yield* tick.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("webhook delivery failed", cause)),
        Effect.repeat(Schedule.spaced(settings.pollInterval))
      )
    })

    return { deliverDue, run }
  })
}) {}
