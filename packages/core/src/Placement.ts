/**
 * The placement of an order as one statement (`statement`): the bundle and the account's
 * price read, the order inserted, the main wallet debited with its ledger entry and the
 * account's events written, in one round trip and a transaction of its own. `Orders.place`
 * runs it and reads what it answers (`isShortWallet` for a wallet short of the price).
 */
import { type Account, Money, type Order, Webhook } from "@databundle/contract"
import type { SqlClient, Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type ParseResult, Schema } from "effect"
import { Int8, sqlState } from "./Database.js"
import { DeliverableRow } from "./OrderRow.js"
import { prepared, reusable } from "./Prepared.js"
import * as WebhooksModule from "./Webhooks.js"

/** How long after placement the worker checks an order whose fulfilment was never recorded (a crash). */
export const RECOVERY_DELAY_SECONDS = 30

/**
 * The placement's ledger entry without a balance, because the wallet was short: a not-null
 * violation on `balance_after` (the only column of the statement that can be null; a
 * driver that names the column must name that one).
 */
export const isShortWallet = (error: SqlError | ParseResult.ParseError): boolean => {
  if (error._tag !== "SqlError" || sqlState(error) !== "23502") return false
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

/** The values of a placement that its statement takes from the call (`Prepared.reusable`'s slots). */
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

/**
 * What the placement returns when the bundle could be bought (no row when not): the order
 * placed, with its bundle, mode and the balance left; or, when another order holds the
 * reference, only that it was not placed.
 */
export const PlacedRow = Schema.Union(
  Schema.Struct({ placed: Schema.Literal(true), ...DeliverableRow.fields, balance_after: Int8 }),
  Schema.Struct({ placed: Schema.Literal(false) })
)

/** The type of `PlacedRow`. */
export type PlacedRow = typeof PlacedRow.Type

const decodePlaced = Schema.decodeUnknown(Schema.Array(PlacedRow))

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
 * with the call's and its own (`Webhooks.splicedBody`). Its rows are decoded as `PlacedRow`s.
 */
export const statement = (sql: SqlClient.SqlClient, delivered: boolean) => {
  const run = reusable<PlacementSlot, object>(sql, (slot) => {
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
    // The delivery's event is written only when the statement delivers (not for an order that
    // earns a commission): how many events it writes, and how many come after the debit's.
    const after = events.length === 1 ? sql`0` : sql`(CASE WHEN bundle.delivered THEN 1 ELSE 0 END)`
    const written = events.length === 1 ? sql`1` : sql`(CASE WHEN bundle.delivered THEN 2 ELSE 1 END)`
    return sql`${prepared(sql)}
      WITH bundle AS (
        SELECT b.key, b.name, n.name AS network_name, n.slug AS network_slug,
          COALESCE(p.price, b.base_price) AS price, a.mode,
          CASE WHEN a.mode = 'test' THEN ${slot("testDelivers")}::boolean ELSE ${slot("liveDelivers")}::boolean END
          -- An order that earns an agent or a referrer a commission is settled in a transaction of its
          -- own after this one (Orders.settle), which credits them with its success.
          AND g.agent_id IS NULL AND g.referred_by IS NULL AS delivered
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
        UPDATE accounts a SET event_seq = a.event_seq + ${written}, order_count = a.order_count + 1,
          delivered_count = a.delivered_count + (CASE WHEN bundle.delivered THEN 1 ELSE 0 END)
        FROM entry, bundle
        WHERE a.id = ${slot("accountId")}
        RETURNING a.id, a.event_seq, (SELECT t.webhook_url FROM webhook_targets t WHERE t.id = a.id) AS webhook_url
      ),
      events AS (
        INSERT INTO webhook_events (id, account_id, seq, type, body, next_attempt_at, queued_at)
        ${
      sql.join(" UNION ALL ", false)(events.map((event, i) =>
        sql`SELECT ${slot(event.id)}::text, c.id, c.event_seq - ${i === 0 ? after : sql`0`}, ${event.type}::text,
          ${event.body},
          CASE WHEN c.webhook_url IS NULL THEN NULL ELSE now() END,
          CASE WHEN c.webhook_url IS NULL THEN NULL ELSE now() END
        FROM counter c, placed p, entry n, bundle
        ${i === 0 ? sql`` : sql`WHERE bundle.delivered`}`
      ))
    }
      )
      SELECT p.id, p.order_number, p.account_id, p.bundle_label, p.network_name, p.phone_number, p.amount,
        p.status, p.reference, p.created_at, bundle.key AS bundle_key, bundle.network_slug, bundle.mode,
        p.id IS NOT NULL AS placed, e.balance_after
      FROM bundle LEFT JOIN placed p ON true LEFT JOIN entry e ON true
    `
  })
  return (values: Readonly<Record<PlacementSlot, unknown>>) => Effect.flatMap(run(values), decodePlaced)
}
