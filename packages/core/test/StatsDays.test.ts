/**
 * The console's daily figures come from rollups appended to by triggers and folded by the
 * worker (migration 0022): after every kind of write they count (orders delivered, failed and
 * refunded, left pending then resolved either way by the worker or the operator, a test
 * account's play money, funding, a commission credited and taken back), on several days, and
 * after a fold, they equal the figures computed from the orders and the ledger themselves. The
 * order lists, the reseller's and the operator's, take their totals, unfiltered or by status, from
 * the accounts' kept counts (migration 0023): after each of those writes they equal the orders
 * counted too, for every account, mode and status.
 */
import { type Account } from "@databundle/contract"
import { SqlClient, type Statement } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, TestServices } from "effect"
import { Accounts } from "../src/Accounts.js"
import { ApiKeys } from "../src/ApiKeys.js"
import { Commissions } from "../src/Commissions.js"
import { Orders } from "../src/Orders.js"
import { orderStatusCounts } from "../src/OrderStatusCounts.js"
import { Stats } from "../src/Stats.js"
import { statsDays } from "../src/StatsDays.js"
import { Wallet } from "../src/Wallet.js"
import { Domain, fundedAccount, placeOrder as place, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

const config = Layer.setConfigProvider(
  ConfigProvider.fromMap(new Map([["BUNDLES_SIMULATOR_PENDING_SECONDS", "1"]]))
)

const DAYS = 10

/** The daily totals and sales per network computed from the orders and the ledger, as before the rollups. */
const fromRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const first = sql`(date_trunc('day', now() AT TIME ZONE 'UTC') - make_interval(days => ${DAYS - 1}))`
  const daily = yield* sql<
    { date: string; orders: string; sales: string; refunds: string; funding: string; commissions: string }
  >`
    WITH days AS (
      SELECT to_char(d, 'YYYY-MM-DD') AS date
      FROM generate_series(${first}, now() AT TIME ZONE 'UTC', interval '1 day') d
    ),
    o AS (
      SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, count(*) AS orders,
        coalesce(sum(amount) FILTER (WHERE status = 'successful'), 0) AS sales
      FROM orders WHERE created_at >= ${first} AT TIME ZONE 'UTC' AND mode = 'live' GROUP BY 1
    ),
    l AS (
      SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
        coalesce(sum(amount) FILTER (WHERE reason = 'refund'), 0) AS refunds,
        coalesce(sum(amount) FILTER (WHERE reason = 'funding'), 0) AS funding,
        coalesce(sum(amount) FILTER (WHERE reason IN ('commission', 'commission_reversal')), 0) AS commissions
      FROM ledger_entries
      WHERE created_at >= ${first} AT TIME ZONE 'UTC'
        AND reason IN ('funding', 'refund', 'commission', 'commission_reversal')
        AND account_id NOT IN (SELECT id FROM accounts WHERE mode = 'test')
      GROUP BY 1
    )
    SELECT days.date, coalesce(o.orders, 0)::text AS orders, coalesce(o.sales, 0)::text AS sales,
      coalesce(l.refunds, 0)::text AS refunds, coalesce(l.funding, 0)::text AS funding,
      coalesce(l.commissions, 0)::text AS commissions
    FROM days LEFT JOIN o USING (date) LEFT JOIN l USING (date) ORDER BY days.date
  `
  const networks = yield* sql<{ network_id: number | null; name: string; orders: string; sales: string }>`
    SELECT b.network_id, coalesce(n.name, min(o.network_name)) AS name, count(*)::text AS orders,
      sum(o.amount)::text AS sales
    FROM orders o LEFT JOIN bundles b ON b.id = o.bundle_id LEFT JOIN networks n ON n.id = b.network_id
    WHERE o.created_at >= ${first} AT TIME ZONE 'UTC' AND o.status = 'successful' AND o.mode = 'live'
    GROUP BY b.network_id, n.name ORDER BY sum(o.amount) DESC, b.network_id
  `
  return {
    daily: daily.map((
      d
    ) => [d.date, Number(d.orders), BigInt(d.sales), BigInt(d.refunds), BigInt(d.funding), BigInt(d.commissions)]),
    networks: networks.map((n) => [n.network_id, n.name, Number(n.orders), BigInt(n.sales)])
  }
})

/** The same figures as GET /stats answers them, from the rollups. */
const fromRollups = Effect.gen(function*() {
  const figures = yield* (yield* Stats).get({ days: DAYS })
  return {
    daily: figures.daily.map((d) => [d.date, d.orders, d.sales, d.refunds, d.funding, d.commissions]),
    networks: figures.sales_by_network.map((n) => [n.network_id, n.name, n.orders, n.sales])
  }
})

const STATUSES = [undefined, "pending", "successful", "failed"] as const

/**
 * Every list total the kept counts answer (OrderStatusCounts.ts), each account's by status and
 * the operator's by mode, account and status, beside the orders counted.
 */
const keptTotals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orders = yield* Orders
  const counted = (where: Statement.Fragment, status: typeof STATUSES[number]) =>
    Effect.map(
      sql<{ n: string }>`SELECT count(*) AS n FROM orders o WHERE ${where}
        AND ${status === undefined ? sql`true` : sql`o.status = ${status}`}`,
      ([row]) => Number(row!.n)
    )
  const pairs: Array<[string, number, number]> = []
  const accounts = yield* sql<{ id: number; mode: string; live_account_id: number | null }>`
    SELECT id, mode, live_account_id FROM accounts ORDER BY id`
  for (const account of accounts) {
    for (const status of STATUSES) {
      const listed = yield* orders.list(account.id, { page: 1, per_page: 1, status })
      pairs.push([
        `account ${account.id} ${status}`,
        listed.pagination.total,
        yield* counted(sql`o.account_id = ${account.id}`, status)
      ])
    }
  }
  for (const mode of ["live", "test"] as const) {
    for (const status of STATUSES) {
      const all = yield* orders.adminList({ page: 1, per_page: 1, mode, status })
      pairs.push([`${mode} ${status}`, all.pagination.total, yield* counted(sql`o.mode = ${mode}`, status)])
      for (const account of accounts.filter((a) => a.mode === "live")) {
        const one = yield* orders.adminList({ page: 1, per_page: 1, mode, status, account_id: account.id })
        const where = sql`o.mode = ${mode} AND o.account_id IN (SELECT id FROM accounts WHERE id = ${account.id}
          OR live_account_id = ${account.id})`
        pairs.push([`${mode} of ${account.id} ${status}`, one.pagination.total, yield* counted(where, status)])
      }
    }
  }
  return pairs
})

const assertExact = (what: string) =>
  Effect.gen(function*() {
    const expected = yield* fromRows
    const actual = yield* fromRollups
    assert.deepStrictEqual(actual, expected, what)
    for (const [name, kept, counted] of yield* keptTotals) assert.strictEqual(kept, counted, `${what}: ${name}`)
    return expected
  })

for (const target of targets) {
  describe(`The console's daily rollups on ${target.name}`, () => {
    layer(Layer.mergeAll(Domain, Stats.Default).pipe(Layer.provideMerge(target.layer), Layer.provide(config)), {
      timeout: 60_000
    })((it) => {
      // On the real clock: the worker compares it with the database's timestamps.
      it.effect("equal the orders and the ledger after every kind of write, on several days", () =>
        TestServices.provideLive(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const orders = yield* Orders
          const { mtn1gb, mtn2gb, telecel1gb } = yield* seedCatalog
          const account = yield* fundedAccount(100_000n)
          const other = yield* fundedAccount(50_000n)
          // `other` was brought in by `account`: its successful orders earn `account` 5 %.
          yield* (yield* Accounts).update(other as Account.AccountId, { referred_by: account as Account.AccountId })
          yield* (yield* Commissions).setRates({ referral_percent: 500 })
          const test = Option.getOrThrow(yield* (yield* ApiKeys).testAccount(account as Account.AccountId))
          yield* (yield* Wallet).fund(test, { amount: 10_000n, wallet: "main" })

          // History: orders of every outcome, then moved to earlier days with their ledger, and
          // the rollups started again from the rows as the migration does.
          yield* place(account, mtn1gb, "0241234567")
          yield* place(account, telecel1gb, "0201234567")
          yield* place(other, mtn2gb, "0240000000") // failed and refunded
          const oldPending = yield* place(account, mtn2gb, "0249999999")
          const oldPendingToo = yield* place(other, mtn1gb, "0249999999")
          yield* place(test, mtn1gb, "0241234567")
          yield* sql`UPDATE orders SET created_at = created_at - interval '3 days'`
          yield* sql`UPDATE ledger_entries SET created_at = created_at - interval '3 days'`
          yield* sql`UPDATE orders SET created_at = created_at - interval '2 days' WHERE account_id = ${other}`
          yield* sql`UPDATE ledger_entries SET created_at = created_at - interval '2 days' WHERE account_id = ${other}`
          yield* sql`DELETE FROM stats_order_days`
          yield* sql`DELETE FROM stats_ledger_days`
          for (const statement of statsDays.filter((s) => s.startsWith("INSERT"))) yield* sql.unsafe(statement)
          // The kept counts by status likewise, from the rows as migration 0023 starts them.
          yield* sql`DELETE FROM order_status_counts`
          yield* sql`UPDATE accounts SET delivered_count = 0`
          for (const statement of orderStatusCounts.filter((s) => s.startsWith("INSERT"))) yield* sql.unsafe(statement)
          const history = yield* assertExact("started from the rows")
          assert.isTrue(history.daily.filter((d) => d[1] !== 0).length >= 2, "orders on two days at least")

          // Today: delivered, failed, pending; a test account's orders; funding.
          yield* place(account, mtn1gb, "0241234567", "t-1")
          yield* place(account, mtn1gb, "0241234567", "t-1") // a replay counts nothing
          yield* place(other, telecel1gb, "0200000000")
          const pending = yield* place(account, mtn2gb, "0249999999")
          const pendingToo = yield* place(other, mtn1gb, "0249999999")
          yield* place(test, mtn2gb, "0240000000")
          yield* (yield* Wallet).fund(other, { amount: 7_000n, wallet: "main" })
          yield* assertExact("after today's orders")

          // The worker's pass folds what was appended into one row per key, changing no figure.
          yield* (yield* Stats).compact
          yield* assertExact("after a compaction")
          const [folded] = yield* sql<{ fresh: string; doubled: string }>`
            SELECT (SELECT count(*) FROM stats_order_days WHERE NOT compacted)
                + (SELECT count(*) FROM stats_ledger_days WHERE NOT compacted)
                + (SELECT count(*) FROM order_status_counts WHERE NOT compacted) AS fresh,
              (SELECT count(*) FROM (SELECT 1 FROM stats_order_days
                GROUP BY day, bundle_id, network_name, shard HAVING count(*) > 1) d)
                + (SELECT count(*) FROM (SELECT 1 FROM order_status_counts GROUP BY account_id HAVING count(*) > 1) e)
                AS doubled
          `
          assert.deepStrictEqual([Number(folded!.fresh), Number(folded!.doubled)], [0, 0])

          // Resolutions, today's and those of orders placed days ago, each way: the day counted is
          // the order's own.
          yield* orders.resolve(pending.order.order_number, "failed")
          yield* orders.resolve(oldPending.order.order_number, "successful")
          yield* orders.resolve(oldPendingToo.order.order_number, "failed")
          yield* assertExact("after the operator's resolutions")
          yield* Effect.sleep("1500 millis")
          yield* orders.processDue
          assert.strictEqual((yield* orders.get(other, pendingToo.order.order_number)).status, "successful")
          const settled = yield* assertExact("after the worker's settlement")
          assert.isTrue(settled.daily.some((d) => d[5] !== 0n), "a commission counted")
          // The operator fails the delivered order: its refund and its commission's reversal count.
          yield* orders.resolve(pendingToo.order.order_number, "failed")
          const final = yield* assertExact("after a delivered order was failed")
          assert.isTrue(final.daily.some((d) => d[3] !== 0n), "refunds counted")
          assert.isTrue(final.networks.length >= 2, "sales on two networks")

          // The operator's list totals kept by the accounts equal the orders counted, filtered or not.
          const counted = (where: string) =>
            sql.unsafe<{ n: string }>(`SELECT count(*) AS n FROM orders WHERE ${where}`).pipe(
              Effect.map(([row]) => Number(row!.n))
            )
          const total = (query: Parameters<typeof orders.adminList>[0]) =>
            Effect.map(orders.adminList({ page: 1, per_page: 5, ...query }), (page) => page.pagination.total)
          assert.strictEqual(yield* total({}), yield* counted("mode = 'live'"))
          assert.strictEqual(yield* total({ mode: "test" }), yield* counted("mode = 'test'"))
          assert.strictEqual(yield* total({ account_id: account }), yield* counted(`account_id = ${account}`))
          assert.strictEqual(
            yield* total({ account_id: account, mode: "test" }),
            yield* counted(`account_id = ${test}`)
          )
          assert.strictEqual(yield* total({ status: "failed" }), yield* counted("mode = 'live' AND status = 'failed'"))
        })))
    })
  })
}
