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
 * The placement's statement is written in `Placement.ts`, an order's row in `OrderRow.ts`.
 */
import {
  ApiError,
  Bundle,
  Mode,
  Order,
  Page as PageContract,
  Phone,
  PhonePrefixes,
  Wallet as WalletContract
} from "@databundle/contract"
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Data, Duration, Effect, Either, Option, Schema } from "effect"
import { Commissions, type Event } from "./Commissions.js"
import { Int8, isUniqueViolation, orDie, rowsOf } from "./Database.js"
import { type FulfillmentOutcome, FulfillmentProvider, simulator } from "./Fulfillment.js"
import {
  ADMIN_COLUMNS,
  AdminOrderRow,
  DeliverableRow,
  ORDER_COLUMNS,
  OrderRow,
  toAdminOrder,
  toOrder,
  toRequest
} from "./OrderRow.js"
import { keptTotal } from "./OrderStatusCounts.js"
import * as Page from "./Page.js"
import { isShortWallet, RECOVERY_DELAY_SECONDS, statement as placementStatement } from "./Placement.js"
import { prepared } from "./Prepared.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"
import { Wallet } from "./Wallet.js"
import { Webhooks } from "./Webhooks.js"
import * as Worker from "./Worker.js"

/** The result of POST /orders. */
export interface Placement {
  readonly order: Order.Order
  /** The main balance after the whole operation (after the refund, for an order that failed at once). */
  readonly walletBalance: bigint
  /** True when the reference matched an earlier order, which is returned unchanged. */
  readonly replayed: boolean
  /** What the number's prefix says against the bundle's network (`PhonePrefixes.prefixWarning`); empty when nothing. */
  readonly warnings: ReadonlyArray<Phone.OrderWarning>
}

/** The warnings of an order for its number and its bundle's network: in memory, no query. */
const warningsOf = (phone: string, network: { readonly name: string; readonly slug: string }) => {
  const warning = PhonePrefixes.prefixWarning(Phone.nationalDigits(phone), network)
  return warning === undefined ? [] : [warning]
}

type Placed = Data.TaggedEnum<{
  Created: { readonly order: DeliverableRow; readonly balanceAfter: bigint }
  Replayed: { readonly order: ReferencedRow }
}>
const Placed = Data.taggedEnum<Placed>()

/** Where an order stands once an outcome was applied. */
interface Settled {
  readonly status: Order.OrderStatus
  /** The main balance after the refund, when this call refunded. */
  readonly refundedBalance: Option.Option<bigint>
}

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

/** Only a well-formed order number can name an order: anything else is not found without a query. */
const isOrderNumber = Schema.is(Order.OrderNumber)

/** An order's row with its bundle, as a reference finds it. */
const ReferencedRow = Schema.Struct({ ...OrderRow.fields, bundle_id: Schema.Number, network_slug: Schema.String })
type ReferencedRow = typeof ReferencedRow.Type

/** Placing, reading and settling orders. */
export class Orders extends Effect.Service<Orders>()("core/Orders", {
  dependencies: [Wallet.Default, Webhooks.Default, Settings.Default, Commissions.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wallet = yield* Wallet
    const commissions = yield* Commissions
    const webhooks = yield* Webhooks
    const liveProvider = yield* FulfillmentProvider
    const settings = yield* Settings
    // Test orders never reach the configured provider (an upstream buys real bundles).
    const testProvider = simulator(settings)
    const providerFor = (mode: "live" | "test") => mode === "test" ? testProvider : liveProvider

    const findReferenced = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.Number, reference: Schema.String }),
      Result: ReferencedRow,
      execute: ({ accountId, reference }) =>
        sql`
          SELECT ${sql.literal(ORDER_COLUMNS)}, o.bundle_id, n.slug AS network_slug FROM orders o
          JOIN bundles b ON b.id = o.bundle_id JOIN networks n ON n.id = b.network_id
          WHERE o.account_id = ${accountId} AND o.reference = ${reference}
        `
    })
    const findByReference = (accountId: number, reference: string) =>
      Effect.map(findReferenced({ accountId, reference }), Option.getOrUndefined)

    /** The same reference with the same bundle and number is a replay; with anything else it is a 422. */
    const replayOrConflict = (existing: ReferencedRow, input: Order.PlaceOrderPayload) =>
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

    const placements = { pending: placementStatement(sql, false), delivered: placementStatement(sql, true) }

    /** The main balance and the bundle's price for the account, for an order its wallet could not pay. */
    const findShortfall = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.Number, bundleId: Schema.Number }),
      Result: Schema.Struct({ balance: Int8, price: Int8 }),
      execute: ({ accountId, bundleId }) =>
        sql`
          SELECT w.balance, COALESCE(p.price, b.base_price) AS price
          FROM accounts a
          JOIN accounts g ON g.id = COALESCE(a.live_account_id, a.id)
          JOIN wallets w ON w.account_id = a.id AND w.kind = 'main'
          JOIN bundles b ON b.id = ${bundleId}
          LEFT JOIN bundle_prices p ON p.bundle_id = b.id AND p.price_group_id = g.price_group_id
          WHERE a.id = ${accountId}
        `
    })

    const placeAtOnce = (accountId: number, input: Order.PlaceOrderPayload) =>
      Effect.gen(function*() {
        const orderNumber = Tokens.orderNumber()
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
          const short = yield* findShortfall({ accountId, bundleId: input.bundle_id })
          return yield* new WalletContract.InsufficientBalance({
            message: "Insufficient wallet balance",
            balance: Option.match(short, { onNone: () => 0n, onSome: (s) => s.balance }),
            required: Option.match(short, { onNone: () => 0n, onSome: (s) => s.price })
          })
        }
        const [row] = result.right
        if (row === undefined) return yield* explainUnplaced(accountId, input)
        if (!row.placed) {
          // Another request holds this reference; the insert waited for it to commit, so it is visible now.
          return yield* replayOrConflict((yield* findByReference(accountId, input.reference!))!, input)
        }
        const { balance_after, placed: _, ...order } = row
        return Placed.Created({ order, balanceAfter: balance_after })
      }).pipe(
        // A fresh order number colliding with an existing one is astronomically rare; try again.
        Effect.retry({ times: 3, while: (error) => isUniqueViolation(error) })
      )

    /**
     * Moves a pending order to `successful` or `failed`; a failure refunds the main wallet in
     * the same transaction. Does nothing to an order that is no longer pending.
     */
    const settleRow = SqlSchema.findOne({
      Request: Schema.Struct({
        orderId: Schema.String,
        status: Order.OrderStatus,
        reason: Schema.NullOr(Schema.String),
        undoSuccess: Schema.Boolean
      }),
      Result: Schema.Struct({ ...OrderRow.fields, mode: Mode.Mode }),
      execute: ({ orderId, reason, status, undoSuccess }) =>
        sql`
          UPDATE orders o SET status = ${status}, settled_at = now(), next_check_at = NULL, failure_reason = ${reason}
          WHERE o.id = ${orderId} AND ${
          undoSuccess ? sql`o.status IN ('pending', 'successful')` : sql`o.status = 'pending'`
        }
          RETURNING ${sql.literal(ORDER_COLUMNS)}, o.mode
        `
    })

    /**
     * Settles an order and moves what its new state moves, in one transaction: a failure refunds
     * the buyer and takes back any commission, a success credits the agent's and referrer's
     * commissions. `undoSuccess` (the operator's failing of a delivered order) lets a successful
     * order become failed; nothing else leaves a settled state.
     */
    const settle = (
      orderId: string,
      status: "successful" | "failed",
      reason: string | null,
      note?: string,
      undoSuccess = false
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const row = Option.getOrUndefined(
          yield* settleRow({ orderId, status, reason, undoSuccess: undoSuccess && status === "failed" })
        )
        if (row === undefined) return Option.none<Settled>()
        // Locks are taken in one order by every settlement, so two never wait on each other: wallets
        // (the buyer's main, then the earners' by account), then the figures, then the accounts' event
        // counters (the events, by account, each account's in the order they happened).
        const events: Array<Event> = []
        let refundedBalance = Option.none<bigint>()
        if (status === "failed") {
          const refund = {
            accountId: row.account_id,
            wallet: "main" as const,
            amount: row.amount,
            reason: "refund" as const,
            orderId: row.id,
            ...(note === undefined ? {} : { note })
          }
          const moved = Option.getOrThrowWith(yield* wallet.move(refund), () => new Error("refund found no wallet"))
          refundedBalance = Option.some(moved.balanceAfter)
          events.push(wallet.movementEvent(refund, moved, row.order_number))
        }
        const order = toOrder({ ...row, status })
        events.push({
          accountId: row.account_id,
          content: status === "failed"
            ? { type: "order.failed", data: order }
            : { type: "order.successful", data: order }
        })
        const programme = status === "successful" ? yield* commissions.credit(row) : yield* commissions.reverse(row)
        events.push(...programme.events)
        // The metrics' counts, kept with what they count so a scrape reads one row each.
        if (row.mode === "live" && status === "failed") {
          yield* sql`UPDATE figures SET value = value + 1 WHERE name = 'refunded_live_orders'`
        }
        yield* commissions.count(row, programme)
        const byAccount = events.map((event, i) => ({ event, i })).sort((x, y) =>
          x.event.accountId - y.event.accountId || x.i - y.i
        )
        for (const { event } of byAccount) yield* webhooks.enqueue(event.accountId, event.content)
        return Option.some<Settled>({ status, refundedBalance })
      }))

    /** Settles a pending order: it has earned no commission yet, so there is none to refuse taking back. */
    const settlePending = (orderId: string, status: "successful" | "failed", reason: string | null) =>
      settle(orderId, status, reason).pipe(Effect.catchTag("Conflict", (conflict) => Effect.die(conflict)))

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
            return yield* settlePending(row.id, "successful", null)
          case "Failed":
            return yield* settlePending(row.id, "failed", outcome.reason)
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
          replayed: true,
          warnings: warningsOf(placed.order.phone_number, {
            name: placed.order.network_name,
            slug: placed.order.network_slug
          })
        } satisfies Placement
      }
      const warnings = warningsOf(placed.order.phone_number, {
        name: placed.order.network_name,
        slug: placed.order.network_slug
      })
      // Delivered with its placement: nothing is left to record.
      if (placed.order.status !== "pending") {
        return {
          order: toOrder(placed.order),
          walletBalance: placed.balanceAfter,
          replayed: false,
          warnings
        } satisfies Placement
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
        replayed: false,
        warnings
      } satisfies Placement
    })

    const findOwn = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.Number, orderNumber: Schema.String }),
      Result: OrderRow,
      execute: ({ accountId, orderNumber }) =>
        sql`${prepared(sql)}
          SELECT ${sql.literal(ORDER_COLUMNS)} FROM orders o
          WHERE o.order_number = ${orderNumber} AND o.account_id = ${accountId}
        `
    })

    /** One order of an account; another account's order is not found, like an unknown one. */
    const get = Effect.fn("Orders.get")(function*(accountId: number, orderNumber: string) {
      const row = !isOrderNumber(orderNumber)
        ? undefined
        : Option.getOrUndefined(yield* orDie(findOwn({ accountId, orderNumber })))
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
        const rows = yield* rowsOf(
          AdminOrderRow,
          sql`
              SELECT ${sql.literal(ORDER_COLUMNS)}, ${sql.literal(ADMIN_COLUMNS)} FROM orders o WHERE ${where}
              ORDER BY ${oldestFirst ? sql`o.created_at, o.id` : sql`o.created_at DESC, o.id DESC`}
              LIMIT ${page.perPage} OFFSET ${page.offset}
            `
        )
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
      conditions.push(...Page.dateRange(sql, "o.created_at", query))
      const where = sql.and(conditions)
      // Unfiltered or filtered by status only, the total is one the account keeps (OrderStatusCounts.ts),
      // not a count of its orders, which grows with them.
      const total = conditions.length === 1
        ? sql<{ total: string }>`${prepared(sql)}
          SELECT order_count AS total FROM accounts WHERE id = ${accountId}
        `
        : conditions.length === 2 && query.status !== undefined
        ? keptTotal(sql, sql`id = ${accountId}`, query.status)
        : countWhere(where)
      const result = yield* listWhere(where, total, Page.resolve(query, PageContract.ACCOUNT_LISTS))
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
      // Every account keeps its counts of orders (its mode's) by status: with no filter but the mode,
      // the account or the status, the total is a sum of those, not a count of the orders.
      const kept = query.older_than === undefined && query.reference === undefined && query.phone_number === undefined
      const accounts = [sql`mode = ${query.mode ?? "live"}`]
      if (query.account_id !== undefined) {
        accounts.push(sql`(id = ${query.account_id} OR live_account_id = ${query.account_id})`)
      }
      const total = kept ? keptTotal(sql, sql.and(accounts), query.status) : countWhere(where)
      const result = yield* listWhere(
        where,
        total,
        Page.resolve(query, PageContract.ADMIN_LISTS),
        query.sort === "oldest"
      )
      return { orders: result.rows.map(toAdminOrder), pagination: result.pagination }
    })

    const findAny = SqlSchema.findOne({
      Request: Schema.String,
      Result: AdminOrderRow,
      execute: (orderNumber) =>
        sql`
          SELECT ${sql.literal(ORDER_COLUMNS)}, ${sql.literal(ADMIN_COLUMNS)} FROM orders o
          WHERE o.order_number = ${orderNumber}
        `
    })

    const adminFind = (orderNumber: string) =>
      (isOrderNumber(orderNumber) ? orDie(findAny(orderNumber)) : Effect.succeedNone).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new Order.OrderNotFound({ message: `Order ${orderNumber} not found` })),
          onSome: Effect.succeed
        }))
      )

    /** Any order, for the operator. */
    const adminGet = Effect.fn("Orders.adminGet")(function*(orderNumber: string) {
      return toAdminOrder(yield* adminFind(orderNumber))
    })

    /**
     * Settles a stuck pending order by hand, or fails a successful one (a delivery that never
     * arrived); anything else is a conflict. Failing refunds the main wallet, the operator's
     * `note` kept on the refund's ledger entry, and takes back the order's commissions (a 409 when
     * an earner has moved its commission on).
     */
    const resolve = Effect.fn("Orders.resolve")(function*(
      orderNumber: string,
      status: "successful" | "failed",
      note?: string
    ) {
      const row = yield* adminFind(orderNumber)
      const settled = yield* orDie(
        settle(row.id, status, status === "failed" ? "Failed by the operator" : null, note, true)
      )
      if (Option.isNone(settled)) {
        const current = yield* adminFind(orderNumber)
        return yield* new ApiError.Conflict({ message: `Order ${orderNumber} is already ${current.status}` })
      }
      return toAdminOrder({ ...row, status })
    })

    // The claim moves next_check_at a lease ahead, so a slow provider call in this process
    // is not repeated by another; SKIP LOCKED lets processes take disjoint batches.
    const claimDue = rowsOf(
      DeliverableRow,
      sql`
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
    )

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
    const runFulfilment = Worker.supervise("fulfilment worker", processDue, { interval: settings.pollInterval })

    return { place, get, list, adminList, adminGet, resolve, processDue, runFulfilment }
  })
}) {}
