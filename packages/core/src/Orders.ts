/**
 * Orders: placement, lookup, lists, and the state machine
 * `pending` → `successful` | `failed`, where `failed` refunds exactly once.
 *
 * Placement is one statement, so one round trip and a transaction of its own: read the
 * bundle and the account's price, insert the order (a unique (account, reference) turns a
 * concurrent duplicate into a wait and then a replay), debit the main wallet with a
 * conditional update (so concurrent orders never overdraw it), write the ledger entry, and
 * write the account's events numbered from its counter. Fulfilment then runs through the
 * provider port: an outcome the provider knows without asking anyone (the simulator's
 * deliveries) is recorded in the placement's own insert, any other is asked for after the
 * placement commits and recorded in a transaction of its own. Every settlement is a conditional
 * update `WHERE status = 'pending'` in the same transaction as its refund, so whichever
 * process settles first wins and the refund cannot happen twice.
 *
 * Over 400 lines on purpose: placement, settlement and the fulfilment worker are one state
 * machine sharing its statements and its service; split, the parts would import each other.
 */
import {
  type Account,
  ApiError,
  Bundle,
  Money,
  Order,
  Page as PageContract,
  Phone,
  Wallet as WalletContract,
  Webhook
} from "@databundle/contract"
import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Data, Duration, Effect, Either, Option, Schedule, Schema } from "effect"
import { int8, isUniqueViolation, orDie, sqlState } from "./Database.js"
import { type FulfillmentOutcome, FulfillmentProvider, type FulfillmentRequest, simulator } from "./Fulfillment.js"
import * as Page from "./Page.js"
import { prepared, reusable } from "./Postgres.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"
import { Wallet } from "./Wallet.js"
import * as WebhooksModule from "./Webhooks.js"
import { Webhooks } from "./Webhooks.js"

interface OrderRow {
  readonly id: string
  readonly order_number: string
  readonly account_id: number
  readonly bundle_label: string
  readonly network_name: string
  readonly phone_number: string
  readonly amount: string
  readonly status: Order.OrderStatus
  readonly reference: string | null
  readonly created_at: Date
}

/** An order with what fulfilment needs to deliver it. */
interface DeliverableRow extends OrderRow {
  readonly bundle_key: string
  readonly network_slug: string
  /** `test` orders are always the simulator's, whatever provider live ones have. */
  readonly mode: "live" | "test"
}

const ORDER_COLUMNS = "o.id, o.order_number, o.account_id, o.bundle_label, o.network_name, o.phone_number, " +
  "o.amount, o.status, o.reference, o.created_at"

const toOrder = (row: OrderRow): Order.Order => ({
  order_number: row.order_number as Order.OrderNumber,
  bundle: row.bundle_label,
  network: row.network_name,
  phone_number: row.phone_number,
  amount_paid: int8(row.amount),
  status: row.status,
  reference: row.reference,
  created_at: row.created_at
})

/** An order row with what the operator sees besides: the live account (also of a test order) and the mode. */
interface AdminOrderRow extends OrderRow {
  readonly owner_id: number
  readonly mode: "live" | "test"
}

/** The columns an `AdminOrderRow` adds to `ORDER_COLUMNS`. */
const ADMIN_COLUMNS =
  "(SELECT COALESCE(a.live_account_id, a.id) FROM accounts a WHERE a.id = o.account_id) AS owner_id, o.mode"

const toAdminOrder = (row: AdminOrderRow): Order.AdminOrder => ({
  ...toOrder(row),
  account_id: row.owner_id as Account.AccountId,
  mode: row.mode
})

const toRequest = (row: DeliverableRow): FulfillmentRequest => ({
  orderNumber: row.order_number,
  networkSlug: row.network_slug,
  bundleKey: row.bundle_key,
  phoneNumber: row.phone_number,
  amount: int8(row.amount),
  createdAt: row.created_at
})

/** The result of POST /orders. */
export interface Placement {
  readonly order: Order.Order
  /** The main balance after the whole operation (after the refund, for an order that failed at once). */
  readonly walletBalance: bigint
  /** True when the reference matched an earlier order, which is returned unchanged. */
  readonly replayed: boolean
}

type Placed = Data.TaggedEnum<{
  Created: { readonly order: DeliverableRow; readonly balanceAfter: bigint }
  Replayed: { readonly order: OrderRow }
}>
const Placed = Data.taggedEnum<Placed>()

/** Where an order stands once an outcome was applied. */
interface Settled {
  readonly status: Order.OrderStatus
  /** The main balance after the refund, when this call refunded. */
  readonly refundedBalance: Option.Option<bigint>
}

/** How long after placement the worker checks an order whose fulfilment was never recorded (a crash). */
const RECOVERY_DELAY_SECONDS = 30
/** How long one provider call may take before the order is left pending for the worker. */
const PROVIDER_TIMEOUT = Duration.seconds(20)
/** After this long pending, the worker stops asking and leaves the order to the operator. */
const GIVE_UP_AFTER = Duration.hours(24)
/**
 * How far ahead a claim moves an order's next check, so no other process takes it meanwhile:
 * one provider call's time limit and a little more. It is also how long an order claimed by a
 * process that died waits before another process checks it. A check repeated after the lease
 * (a slow batch) is harmless: the provider places by our order number, so a second call is a
 * replay, and settling needs the order still pending.
 */
const CLAIM_LEASE_SECONDS = Duration.toSeconds(PROVIDER_TIMEOUT) + 5

/**
 * The placement's ledger entry without a balance, because the wallet was short: a not-null
 * violation on `balance_after` (the only column of the statement that can be null; a
 * driver that names the column must name that one).
 */
const isShortWallet = (error: SqlError): boolean => {
  if (sqlState(error) !== "23502") return false
  const cause: unknown = error.cause
  const column = typeof cause === "object" && cause !== null && "column" in cause ? cause.column : undefined
  return column === undefined || column === "balance_after"
}

/**
 * Stand-ins for the values of a placement's events that only its statement knows, written
 * into the bodies and then replaced there (`Webhooks.splicedBody`). Strings and times stand
 * with their quotes, numbers with their key, so none can be found inside another value.
 */
const STAND_IN = {
  price: 123456789012345n,
  balance: 123456789012346n,
  label: "\u0000bundle label",
  network: "\u0000network name",
  phoneNumber: "\u0000phone number",
  reference: "\u0000reference",
  time: new Date(Date.UTC(1901, 0, 1, 0, 0, 0, 1)),
  eventTime: new Date(Date.UTC(1901, 0, 1, 0, 0, 0, 2)),
  accountId: 1_987_654_321 as Account.AccountId,
  orderNumber: "ORD-STANDIN00000" as Order.OrderNumber,
  debitId: "evt_StandInDebit" as Webhook.EventId,
  successId: "evt_StandInSuccess" as Webhook.EventId
} as const

/** The values of a placement that its statement takes from the call (`Postgres.reusable`'s slots). */
type PlacementSlot =
  | "orderNumber"
  | "accountId"
  | "bundleId"
  | "phoneNumber"
  | "phoneNational"
  | "reference"
  | "testDelivers"
  | "liveDelivers"
  | "createdAt"
  | "debitId"
  | "successId"

/** What the placement returns: the order when it was placed, with its bundle, mode, price and the balance left. */
type PlacedRow = OrderRow & {
  readonly bundle_key: string
  readonly network_slug: string
  readonly mode: "live" | "test"
  readonly price: string
  readonly placed: boolean
  readonly balance_after: string | null
}

const encodeCedis = Schema.encodeSync(Money.Cedis)

/** A money value of an event body, from `column` (pesewas) in the statement, as cedis like `Cedis` writes them. */
const cedisValue = (
  sql: SqlClient.SqlClient,
  key: string,
  standIn: bigint,
  column: string
): WebhooksModule.SplicedValue => ({
  standIn: `"${key}":${JSON.stringify(encodeCedis(standIn))}`,
  json: sql`${`"${key}":`}::text || trim_scale(${sql.literal(column)}::numeric / 100)::text`
})

/** A text value of an event body, from `column` in the statement. */
const textValue = (sql: SqlClient.SqlClient, standIn: string, column: string): WebhooksModule.SplicedValue => ({
  standIn: JSON.stringify(standIn),
  json: sql`to_json(${sql.literal(column)})::text`
})

/** A time of an event body, from `column` in the statement, as `Schema.Date` writes it (ISO 8601, milliseconds, UTC). */
const timeValue = (sql: SqlClient.SqlClient, standIn: Date, column: string): WebhooksModule.SplicedValue => ({
  standIn: JSON.stringify(standIn.toISOString()),
  json: sql`to_json(to_char(${sql.literal(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`
})

/** Only a well-formed order number can name an order: anything else is not found without a query. */
const isOrderNumber = Schema.is(Order.OrderNumber)

/** Placing, reading and settling orders. */
export class Orders extends Effect.Service<Orders>()("core/Orders", {
  dependencies: [Wallet.Default, Webhooks.Default, Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wallet = yield* Wallet
    const webhooks = yield* Webhooks
    const liveProvider = yield* FulfillmentProvider
    const settings = yield* Settings
    // Test orders never reach the configured provider (an upstream buys real bundles).
    const testProvider = simulator(settings)
    const providerFor = (mode: "live" | "test") => mode === "test" ? testProvider : liveProvider

    const findByReference = (accountId: number, reference: string) =>
      sql<OrderRow & { bundle_id: number }>`
        SELECT ${sql.literal(ORDER_COLUMNS)}, o.bundle_id FROM orders o
        WHERE o.account_id = ${accountId} AND o.reference = ${reference}
      `.pipe(Effect.map((rows) => rows[0]))

    /** The same reference with the same bundle and number is a replay; with anything else it is a 422. */
    const replayOrConflict = (
      existing: OrderRow & { bundle_id: number },
      input: Order.PlaceOrderPayload
    ) =>
      existing.bundle_id === input.bundle_id &&
        Phone.nationalDigits(existing.phone_number) === Phone.nationalDigits(input.phone_number)
        ? Effect.succeed(Placed.Replayed({ order: existing }))
        : Effect.fail(
          ApiError.ValidationError.field(
            "reference",
            `was already used for order ${existing.order_number} with another bundle or phone number`
          )
        )

    /** Why an order could not be placed when its bundle read nothing: a replay, or the bundle's error. */
    const explainUnplaced = (accountId: number, input: Order.PlaceOrderPayload) =>
      Effect.gen(function*() {
        const [bundle] = yield* sql<{ name: string }>`
          SELECT b.name FROM accounts a
          JOIN bundles b ON b.id = ${input.bundle_id}
          WHERE a.id = ${accountId}
        `
        // A replay must still answer after its bundle was retired.
        const existing = input.reference === undefined
          ? undefined
          : yield* findByReference(accountId, input.reference)
        if (existing !== undefined) return yield* replayOrConflict(existing, input)
        return yield* bundle === undefined
          ? Effect.fail(ApiError.ValidationError.field("bundle_id", "does not exist"))
          : Effect.fail(new Bundle.BundleUnavailable({ message: `${bundle.name} is not available now` }))
      })

    /**
     * The placement, one statement for each of its two shapes (with the delivery's event or
     * without), built once (`reusable`); a call's values go in its slots.
     *
     * One statement, so one round trip and no transaction around it (a statement is a
     * transaction of its own): it reads the bundle and the account's price (never from a
     * cache), inserts the order, debits the main wallet and writes the ledger entry (the
     * movement `Wallet.move` makes: the balance changes only if it stays non-negative, and
     * the entry records the balance it left), then numbers the account's events from its
     * counter and writes them (what `Webhooks.enqueue` does), counting the order on the account's
     * row with them (the total of its unfiltered list, kept). An unavailable bundle reads
     * nothing and writes nothing; a reference already taken inserts and moves nothing; a
     * wallet short of the price debits nothing, so the entry's balance is null, which its
     * NOT NULL refuses: the statement fails and leaves nothing behind.
     *
     * The events (`Wallet.announce`'s debit, and the delivery when it is known) are written by
     * `Webhook.eventBody` once, with stand-ins for every value, which the statement replaces
     * with the call's and its own (`Webhooks.splicedBody`).
     */
    const placement = (delivered: boolean) =>
      reusable<PlacementSlot, PlacedRow>(sql, (slot) => {
        const debitEvent = Webhook.eventBody({
          id: STAND_IN.debitId,
          type: "wallet.debited",
          created_at: STAND_IN.eventTime,
          livemode: true,
          data: {
            account_id: STAND_IN.accountId,
            wallet: "main",
            amount: STAND_IN.price,
            balance: STAND_IN.balance,
            reason: "order",
            order_number: STAND_IN.orderNumber,
            note: null
          }
        })
        // What both events say of the call: their ids and time, from its values; the order's number, from the insert.
        const eventValues = (id: "debitId" | "successId"): ReadonlyArray<WebhooksModule.SplicedValue> => [
          { standIn: JSON.stringify(STAND_IN[id]), json: sql`to_json(${slot(id)}::text)::text` },
          {
            standIn: JSON.stringify(STAND_IN.eventTime.toISOString()),
            json: sql`to_json(${slot("createdAt")}::text)::text`
          },
          textValue(sql, STAND_IN.orderNumber, "p.order_number")
        ]
        // A test account's events say `"livemode": false`; which one is written is the statement's choice.
        const bothModes = (body: string, values: ReadonlyArray<WebhooksModule.SplicedValue>) =>
          sql`CASE WHEN bundle.mode = 'test' THEN ${
            WebhooksModule.splicedBody(sql, body.replace(`"livemode":true`, `"livemode":false`), values)
          } ELSE ${WebhooksModule.splicedBody(sql, body, values)} END`
        const events: Array<
          { readonly id: PlacementSlot; readonly type: Webhook.WebhookEventType; readonly body: Statement.Fragment }
        > = [{
          id: "debitId",
          type: "wallet.debited",
          body: bothModes(debitEvent, [
            ...eventValues("debitId"),
            {
              standIn: `"account_id":${STAND_IN.accountId}`,
              json: sql`${`"account_id":`}::text || p.account_id::text`
            },
            cedisValue(sql, "amount", STAND_IN.price, "p.amount"),
            cedisValue(sql, "balance", STAND_IN.balance, "n.balance_after")
          ])
        }]
        if (delivered) {
          const successEvent = Webhook.eventBody({
            id: STAND_IN.successId,
            type: "order.successful",
            created_at: STAND_IN.eventTime,
            livemode: true,
            data: {
              order_number: STAND_IN.orderNumber,
              bundle: STAND_IN.label,
              network: STAND_IN.network,
              phone_number: STAND_IN.phoneNumber,
              amount_paid: STAND_IN.price,
              status: "successful",
              reference: STAND_IN.reference,
              created_at: STAND_IN.time
            }
          })
          events.push({
            id: "successId",
            type: "order.successful",
            body: bothModes(successEvent, [
              ...eventValues("successId"),
              textValue(sql, STAND_IN.label, "p.bundle_label"),
              textValue(sql, STAND_IN.network, "p.network_name"),
              textValue(sql, STAND_IN.phoneNumber, "p.phone_number"),
              {
                standIn: JSON.stringify(STAND_IN.reference),
                json: sql`COALESCE(to_json(p.reference)::text, 'null')`
              },
              cedisValue(sql, "amount_paid", STAND_IN.price, "p.amount"),
              timeValue(sql, STAND_IN.time, "p.created_at")
            ])
          })
        }
        return sql<PlacedRow>`${prepared(sql)}
          WITH bundle AS (
            SELECT b.key, b.name, n.name AS network_name, n.slug AS network_slug,
              COALESCE(p.price, b.base_price) AS price, a.mode,
              CASE WHEN a.mode = 'test' THEN ${slot("testDelivers")}::boolean ELSE ${
          slot("liveDelivers")
        }::boolean END AS delivered
            FROM accounts a
            -- A test account pays its live account's prices.
            JOIN accounts g ON g.id = COALESCE(a.live_account_id, a.id)
            JOIN bundles b ON b.id = ${slot("bundleId")}
            JOIN networks n ON n.id = b.network_id
            LEFT JOIN bundle_prices p ON p.bundle_id = b.id AND p.price_group_id = g.price_group_id
            WHERE a.id = ${slot("accountId")} AND b.active AND n.active
          ),
          placed AS (
            INSERT INTO orders (order_number, account_id, bundle_id, bundle_label, network_name, phone_number,
              phone_national, amount, reference, status, settled_at, next_check_at, mode)
            SELECT ${slot("orderNumber")}, ${slot("accountId")}, ${slot("bundleId")}, bundle.name, bundle.network_name,
              ${slot("phoneNumber")}, ${slot("phoneNational")}, bundle.price,
              ${slot("reference")}, CASE WHEN bundle.delivered THEN 'successful' ELSE 'pending' END,
              CASE WHEN bundle.delivered THEN now() END,
              CASE WHEN NOT bundle.delivered THEN now() + make_interval(secs => ${RECOVERY_DELAY_SECONDS}) END,
              bundle.mode
            FROM bundle
            ON CONFLICT (account_id, reference) DO NOTHING
            RETURNING id, order_number, account_id, bundle_label, network_name, phone_number, amount, status,
              reference, created_at
          ),
          debited AS (
            UPDATE wallets w SET balance = w.balance - p.amount
            FROM placed p
            WHERE w.account_id = p.account_id AND w.kind = 'main' AND w.balance - p.amount >= 0
            RETURNING w.balance
          ),
          entry AS (
            INSERT INTO ledger_entries (account_id, wallet, amount, balance_after, reason, order_id)
            SELECT p.account_id, 'main', -p.amount, d.balance, 'order', p.id
            FROM placed p LEFT JOIN debited d ON true
            RETURNING balance_after
          ),
          counter AS (
            UPDATE accounts a SET event_seq = a.event_seq + ${events.length}, order_count = a.order_count + 1
            FROM entry
            WHERE a.id = ${slot("accountId")}
            RETURNING a.id, a.event_seq, (SELECT t.webhook_url FROM webhook_targets t WHERE t.id = a.id) AS webhook_url
          ),
          events AS (
            INSERT INTO webhook_events (id, account_id, seq, type, body, next_attempt_at, queued_at)
            ${
          sql.join(" UNION ALL ", false)(events.map((event, i) =>
            sql`SELECT ${slot(event.id)}::text, c.id, c.event_seq - ${events.length - 1 - i}, ${event.type}::text,
              ${event.body},
              CASE WHEN c.webhook_url IS NULL THEN NULL ELSE now() END,
              CASE WHEN c.webhook_url IS NULL THEN NULL ELSE now() END
            FROM counter c, placed p, entry n, bundle`
          ))
        }
          )
          SELECT p.id, p.order_number, p.account_id, p.bundle_label, p.network_name, p.phone_number, p.amount,
            p.status, p.reference, p.created_at, bundle.key AS bundle_key, bundle.network_slug, bundle.mode,
            bundle.price,
            p.id IS NOT NULL AS placed, e.balance_after
          FROM bundle LEFT JOIN placed p ON true LEFT JOIN entry e ON true
        `
      })
    const placements = { pending: placement(false), delivered: placement(true) }

    const placeAtOnce = (accountId: number, input: Order.PlaceOrderPayload) =>
      Effect.gen(function*() {
        const orderNumber = Tokens.orderNumber() as Order.OrderNumber
        // A provider that knows from the number alone that it delivers (the simulator) has the
        // delivery recorded with the placement, not in a second statement after it. Which
        // provider is the account's mode's: only when the two would answer differently (live
        // orders bought upstream) is the mode read first.
        const delivers = (mode: "live" | "test") => {
          const provider = providerFor(mode)
          return provider.decide !== undefined && Option.exists(
            provider.decide({ orderNumber, phoneNumber: input.phone_number }),
            (outcome) => outcome._tag === "Delivered"
          )
        }
        const testDelivers = delivers("test")
        const liveDelivers = delivers("live")
        const delivered = testDelivers === liveDelivers ? liveDelivers : (yield* sql<{ mode: string }>`
          SELECT mode FROM accounts WHERE id = ${accountId}
        `)[0]?.mode === "test"
          ? testDelivers
          : liveDelivers
        const result = yield* (delivered ? placements.delivered : placements.pending)({
          orderNumber,
          accountId,
          bundleId: input.bundle_id,
          phoneNumber: input.phone_number,
          phoneNational: Phone.nationalDigits(input.phone_number),
          reference: input.reference ?? null,
          testDelivers,
          liveDelivers,
          createdAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
          debitId: Tokens.eventId(),
          successId: delivered ? Tokens.eventId() : null
        }).pipe(
          Effect.map(Either.right),
          Effect.catchIf(
            isShortWallet,
            (error) => Effect.succeed(Either.left(error))
          )
        )
        if (Either.isLeft(result)) {
          // The wallet was short of the price: nothing was written.
          const [short] = yield* sql<{ balance: string; price: string }>`
            SELECT w.balance, COALESCE(p.price, b.base_price) AS price
            FROM accounts a
            JOIN accounts g ON g.id = COALESCE(a.live_account_id, a.id)
            JOIN wallets w ON w.account_id = a.id AND w.kind = 'main'
            JOIN bundles b ON b.id = ${input.bundle_id}
            LEFT JOIN bundle_prices p ON p.bundle_id = b.id AND p.price_group_id = g.price_group_id
            WHERE a.id = ${accountId}
          `
          return yield* new WalletContract.InsufficientBalance({
            message: "Insufficient wallet balance",
            balance: short === undefined ? 0n : int8(short.balance),
            required: short === undefined ? 0n : int8(short.price)
          })
        }
        const [row] = result.right
        if (row === undefined) return yield* explainUnplaced(accountId, input)
        if (!row.placed) {
          // Another request holds this reference; the insert waited for it to commit, so it is visible now.
          return yield* replayOrConflict((yield* findByReference(accountId, input.reference!))!, input)
        }
        const { balance_after, bundle_key, mode, network_slug, placed: _, price: _price, ...order } = row
        return Placed.Created({
          order: { ...order, bundle_key, network_slug, mode },
          balanceAfter: int8(balance_after!)
        })
      }).pipe(
        // A fresh order number colliding with an existing one is astronomically rare; try again.
        Effect.retry({ times: 3, while: (error) => isUniqueViolation(error) })
      )

    /**
     * Moves a pending order to `successful` or `failed`; a failure refunds the main wallet in
     * the same transaction. Does nothing to an order that is no longer pending.
     */
    const settle = (orderId: string, status: "successful" | "failed", reason: string | null, note?: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* sql<OrderRow & { readonly mode: "live" | "test" }>`
          UPDATE orders o SET status = ${status}, settled_at = now(), next_check_at = NULL, failure_reason = ${reason}
          WHERE o.id = ${orderId} AND o.status = 'pending'
          RETURNING ${sql.literal(ORDER_COLUMNS)}, o.mode
        `
        if (row === undefined) return Option.none<Settled>()
        let refundedBalance = Option.none<bigint>()
        if (status === "failed") {
          const refund = {
            accountId: row.account_id,
            wallet: "main" as const,
            amount: int8(row.amount),
            reason: "refund" as const,
            orderId: row.id,
            ...(note === undefined ? {} : { note })
          }
          const moved = Option.getOrThrowWith(yield* wallet.move(refund), () => new Error("refund found no wallet"))
          refundedBalance = Option.some(moved.balanceAfter)
          yield* wallet.announce(refund, moved, row.order_number as Order.OrderNumber)
          // The metrics' count of refunded live orders, kept with the refund so a scrape reads one row.
          if (row.mode === "live") {
            yield* sql`UPDATE figures SET value = value + 1 WHERE name = 'refunded_live_orders'`
          }
        }
        const order = toOrder({ ...row, status })
        yield* webhooks.enqueue(
          row.account_id,
          status === "failed" ? { type: "order.failed", data: order } : { type: "order.successful", data: order }
        )
        return Option.some<Settled>({ status, refundedBalance })
      }))

    /** Asks the provider about an order and records the answer; a provider failure leaves it pending. */
    const fulfil = (row: DeliverableRow) =>
      Effect.gen(function*() {
        const outcome: FulfillmentOutcome = yield* providerFor(row.mode).deliver(toRequest(row)).pipe(
          Effect.timeoutFail({ duration: PROVIDER_TIMEOUT, onTimeout: () => new Error("provider timed out") }),
          Effect.catchAllCause((cause) =>
            Effect.logWarning("fulfilment provider failed; the order stays pending", Cause.pretty(cause)).pipe(
              Effect.as<FulfillmentOutcome>({ _tag: "Pending", checkAfter: Duration.seconds(RECOVERY_DELAY_SECONDS) })
            )
          )
        )
        switch (outcome._tag) {
          case "Delivered":
            return yield* settle(row.id, "successful", null)
          case "Failed":
            return yield* settle(row.id, "failed", outcome.reason)
          case "Pending": {
            const age = (yield* Clock.currentTimeMillis) - row.created_at.getTime()
            const stuck = age > Duration.toMillis(GIVE_UP_AFTER)
            if (stuck) {
              yield* Effect.logWarning(`order ${row.order_number} pending for over 24 hours; resolve it by hand`)
            }
            yield* sql`
              UPDATE orders
              SET next_check_at = ${
              stuck ? null : sql`now() + make_interval(secs => ${Duration.toSeconds(outcome.checkAfter)})`
            }
              WHERE id = ${row.id} AND status = 'pending'
            `
            return Option.none<Settled>()
          }
        }
      })

    /** Places an order for an account: pays for it, then hands it to fulfilment. */
    const place = Effect.fn("Orders.place")(function*(accountId: number, input: Order.PlaceOrderPayload) {
      const placed = yield* orDie(placeAtOnce(accountId, input))
      if (placed._tag === "Replayed") {
        const balance = yield* wallet.balances(accountId)
        return {
          order: toOrder(placed.order),
          walletBalance: Option.match(balance, { onNone: () => 0n, onSome: (b) => b.main }),
          replayed: true
        } satisfies Placement
      }
      // Delivered with its placement: nothing is left to record.
      if (placed.order.status !== "pending") {
        return { order: toOrder(placed.order), walletBalance: placed.balanceAfter, replayed: false } satisfies Placement
      }
      // The order is paid for and committed: record its outcome even if the caller goes away.
      const settled = yield* Effect.uninterruptible(orDie(fulfil(placed.order)))
      const status = Option.match(settled, { onNone: () => placed.order.status, onSome: (s) => s.status })
      return {
        order: toOrder({ ...placed.order, status }),
        walletBalance: Option.getOrElse(
          Option.flatMap(settled, (s) => s.refundedBalance),
          () => placed.balanceAfter
        ),
        replayed: false
      } satisfies Placement
    })

    /** One order of an account; another account's order is not found, like an unknown one. */
    const get = Effect.fn("Orders.get")(function*(accountId: number, orderNumber: string) {
      const [row] = !isOrderNumber(orderNumber) ? [] : yield* orDie(sql<OrderRow>`${prepared(sql)}
        SELECT ${sql.literal(ORDER_COLUMNS)} FROM orders o
        WHERE o.order_number = ${orderNumber} AND o.account_id = ${accountId}
      `)
      if (row === undefined) return yield* new Order.OrderNotFound({ message: `Order ${orderNumber} not found` })
      return toOrder(row)
    })

    /** The orders `where` selects, counted. */
    const countWhere = (where: Statement.Fragment) =>
      sql<{ total: string }>`SELECT count(*) AS total FROM orders o WHERE ${where}`

    /** One page of the orders `where` selects, with `total`, the statement that reads how many there are. */
    const listWhere = (
      where: Statement.Fragment,
      total: Effect.Effect<ReadonlyArray<{ readonly total: string }>, SqlError>,
      page: Page.Page,
      oldestFirst = false
    ) =>
      Effect.gen(function*() {
        const [count] = yield* total
        const rows = yield* sql<AdminOrderRow>`
          SELECT ${sql.literal(ORDER_COLUMNS)}, ${sql.literal(ADMIN_COLUMNS)} FROM orders o WHERE ${where}
          ORDER BY ${oldestFirst ? sql`o.created_at, o.id` : sql`o.created_at DESC, o.id DESC`}
          LIMIT ${page.perPage} OFFSET ${page.offset}
        `
        return { rows, pagination: Page.pagination(page, Number(count?.total ?? 0)) }
      }).pipe(orDie)

    /** One page of an account's orders, newest first, with the reconciliation filters. */
    const list = Effect.fn("Orders.list")(function*(accountId: number, query: Order.ListOrdersParams) {
      const conditions = [sql`o.account_id = ${accountId}`]
      if (query.status !== undefined) conditions.push(sql`o.status = ${query.status}`)
      if (query.reference !== undefined) conditions.push(sql`o.reference = ${query.reference}`)
      if (query.reference_prefix !== undefined) {
        conditions.push(sql`starts_with(o.reference, ${query.reference_prefix})`)
      }
      if (query.phone_number !== undefined) {
        conditions.push(sql`o.phone_national = ${Phone.nationalDigits(query.phone_number)}`)
      }
      if (query.from !== undefined) conditions.push(sql`o.created_at >= ${Page.boundInstant(query.from, "from")}`)
      if (query.to !== undefined) {
        conditions.push(
          Order.isWholeDay(query.to)
            ? sql`o.created_at < ${Page.boundInstant(query.to, "to")}`
            : sql`o.created_at <= ${Page.boundInstant(query.to, "to")}`
        )
      }
      const where = sql.and(conditions)
      // Unfiltered, the total is the count the account keeps (one row by its key), not a count of its
      // orders, which grows with them.
      const unfiltered = conditions.length === 1
      const total = unfiltered
        ? sql<{ total: string }>`${prepared(sql)}
          SELECT order_count AS total FROM accounts WHERE id = ${accountId}
        `
        : countWhere(where)
      const result = yield* listWhere(where, total, Page.resolve(query, Order.DEFAULT_PER_PAGE))
      return { orders: result.rows.map(toOrder), pagination: result.pagination }
    })

    /** Orders of every account for the operator, newest first. */
    const adminList = Effect.fn("Orders.adminList")(function*(
      query: Page.PageQuery & {
        readonly status?: Order.OrderStatus | undefined
        readonly account_id?: number | undefined
        readonly phone_number?: string | undefined
        readonly reference?: string | undefined
        readonly older_than?: number | undefined
        readonly sort?: "newest" | "oldest" | undefined
        readonly mode?: "live" | "test" | undefined
      }
    ) {
      // Test orders are listed only when asked for, never mixed into the live ones.
      const conditions = [sql`o.mode = ${query.mode ?? "live"}`]
      if (query.older_than !== undefined) {
        conditions.push(sql`o.created_at < now() - make_interval(mins => ${query.older_than})`)
      }
      if (query.status !== undefined) conditions.push(sql`o.status = ${query.status}`)
      if (query.account_id !== undefined) {
        conditions.push(
          sql`o.account_id IN (SELECT id FROM accounts WHERE id = ${query.account_id} OR live_account_id = ${query.account_id})`
        )
      }
      if (query.reference !== undefined) conditions.push(sql`o.reference = ${query.reference}`)
      if (query.phone_number !== undefined) {
        conditions.push(sql`o.phone_national = ${Phone.nationalDigits(query.phone_number)}`)
      }
      const where = sql.and(conditions)
      const result = yield* listWhere(
        where,
        countWhere(where),
        Page.resolve(query, PageContract.ADMIN_DEFAULT_PER_PAGE),
        query.sort === "oldest"
      )
      return { orders: result.rows.map(toAdminOrder), pagination: result.pagination }
    })

    const adminFind = (orderNumber: string) =>
      (isOrderNumber(orderNumber)
        ? orDie(sql<AdminOrderRow>`
          SELECT ${sql.literal(ORDER_COLUMNS)}, ${sql.literal(ADMIN_COLUMNS)} FROM orders o
          WHERE o.order_number = ${orderNumber}
        `)
        : Effect.succeed([]))
        .pipe(
          Effect.flatMap(([row]) =>
            row === undefined
              ? Effect.fail(new Order.OrderNotFound({ message: `Order ${orderNumber} not found` }))
              : Effect.succeed(row)
          )
        )

    /** Any order, for the operator. */
    const adminGet = Effect.fn("Orders.adminGet")(function*(orderNumber: string) {
      return toAdminOrder(yield* adminFind(orderNumber))
    })

    /**
     * Settles a stuck pending order by hand; a settled order is a conflict. Failing it refunds
     * the main wallet, the operator's `note` kept on the refund's ledger entry.
     */
    const resolve = Effect.fn("Orders.resolve")(function*(
      orderNumber: string,
      status: "successful" | "failed",
      note?: string
    ) {
      const row = yield* adminFind(orderNumber)
      const settled = yield* orDie(
        settle(row.id, status, status === "failed" ? "Failed by the operator" : null, note)
      )
      if (Option.isNone(settled)) {
        const current = yield* adminFind(orderNumber)
        return yield* new ApiError.Conflict({ message: `Order ${orderNumber} is already ${current.status}` })
      }
      return toAdminOrder({ ...row, status })
    })

    // The claim moves next_check_at a lease ahead, so a slow provider call in this process
    // is not repeated by another; SKIP LOCKED lets processes take disjoint batches.
    const claimDue = sql<DeliverableRow>`
      UPDATE orders o SET next_check_at = now() + make_interval(secs => ${CLAIM_LEASE_SECONDS})
      FROM bundles b, networks n
      WHERE b.id = o.bundle_id AND n.id = b.network_id AND o.id IN (
        SELECT id FROM orders
        WHERE status = 'pending' AND next_check_at <= now()
        ORDER BY next_check_at
        LIMIT 20
        FOR UPDATE SKIP LOCKED
      )
      RETURNING ${sql.literal(ORDER_COLUMNS)}, b.key AS bundle_key, n.slug AS network_slug, o.mode
    `

    /** Checks every pending order whose next check is due; returns how many it looked at. */
    const processDue = Effect.gen(function*() {
      let total = 0
      while (true) {
        const due = yield* claimDue
        yield* Effect.forEach(due, fulfil, { concurrency: 5, discard: true })
        total += due.length
        if (due.length < 20) return total
      }
    }).pipe(orDie, Effect.withSpan("Orders.processDue"))

    /** Runs forever: the database-driven fulfilment worker. */
    const runFulfilment = processDue.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("fulfilment worker failed", cause)),
      Effect.repeat(Schedule.spaced(settings.pollInterval))
    )

    return { place, get, list, adminList, adminGet, resolve, processDue, runFulfilment }
  })
}) {}
