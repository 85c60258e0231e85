/**
 * The count of orders each account keeps for the total of its unfiltered list: raised with
 * each order placed and only then, per account (a test account apart from its live one), and
 * started by its migration from the orders already there.
 */
import { type Account, ApiError, Bundle, Wallet as WalletContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import { ApiKeys } from "../src/ApiKeys.js"
import { migrations } from "../src/Migrations.js"
import { Orders } from "../src/Orders.js"
import { Domain, fundedAccount, placeOrder as place, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

/** The total of the account's unfiltered list. */
const listed = (accountId: number) =>
  Effect.flatMap(Orders, (orders) => orders.list(accountId, { page: 1, per_page: 1 })).pipe(
    Effect.map((page) => page.pagination.total)
  )

/** Asserts that the account has `expected` orders, keeps that count, and its list shows it. */
const assertTotal = (accountId: number, expected: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ counted: string; kept: string }>`
      SELECT (SELECT count(*) FROM orders o WHERE o.account_id = a.id) AS counted, a.order_count AS kept
      FROM accounts a WHERE a.id = ${accountId}
    `
    assert.strictEqual(Number(row!.counted), expected, "orders in the database")
    assert.strictEqual(Number(row!.kept), expected, "count kept with the account")
    assert.strictEqual(yield* listed(accountId), expected, "total of the unfiltered list")
  })

/** The accounts whose kept count is not the number of their orders. */
const disagreeing = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ id: number }>`
    SELECT a.id FROM accounts a
    WHERE a.order_count <> (SELECT count(*) FROM orders o WHERE o.account_id = a.id)
  `)

const testAccountOf = (liveId: number) =>
  Effect.flatMap(ApiKeys, (keys) => keys.testAccount(liveId as Account.AccountId)).pipe(
    Effect.map(Option.getOrThrow)
  )

for (const target of targets) {
  describe(`The kept order count on ${target.name}`, () => {
    layer(Domain.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("counts each order placed, delivered or failed, and no replay or refused order", () =>
        Effect.gen(function*() {
          const { mtn1gb, mtn2gb, mtnOld } = yield* seedCatalog
          const account = yield* fundedAccount(2000n)
          yield* assertTotal(account, 0)
          yield* place(account, mtn1gb, "0241234567", "c-1")
          yield* place(account, mtn1gb, "0241234567")
          // Failed by the simulator and refunded: still an order of the account.
          yield* place(account, mtn1gb, "0240000000")
          yield* assertTotal(account, 3)
          // A replay returns the first order and counts nothing, in either form of the number.
          assert.isTrue((yield* place(account, mtn1gb, "233241234567", "c-1")).replayed)
          const conflict = yield* Effect.flip(place(account, mtn2gb, "0241234567", "c-1"))
          assert.instanceOf(conflict, ApiError.ValidationError)
          yield* assertTotal(account, 3)
          // Refused: a wallet short of the price (900 left, 1050 asked), a retired bundle, an unknown one.
          const short = yield* Effect.flip(place(account, mtn2gb, "0241234567", "c-2"))
          assert.instanceOf(short, WalletContract.InsufficientBalance)
          assert.instanceOf(yield* Effect.flip(place(account, mtnOld, "0241234567")), Bundle.BundleUnavailable)
          assert.instanceOf(yield* Effect.flip(place(account, 999_999, "0241234567")), ApiError.ValidationError)
          yield* assertTotal(account, 3)
          // A reference refused once may be used again, and then counts.
          yield* place(account, mtn1gb, "0241234567", "c-2")
          yield* assertTotal(account, 4)
          assert.deepStrictEqual(yield* disagreeing, [])
        }))

      it.effect("concurrent orders count once each: duplicates of a reference once, the unpaid ones not", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(5n * 550n + 100n)
          const duplicates = yield* Effect.all(
            Array.from({ length: 8 }, () => place(account, mtn1gb, "0241234567", "dup")),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(duplicates.filter((r) => !r.replayed).length, 1)
          yield* assertTotal(account, 1)
          const results = yield* Effect.all(
            Array.from({ length: 10 }, () => Effect.either(place(account, mtn1gb, "0241234567"))),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(results.filter(Either.isRight).length, 4)
          yield* assertTotal(account, 5)
        }))

      it.effect("a test account keeps its own count, apart from its live account's", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const live = yield* fundedAccount(2000n)
          const test = yield* testAccountOf(live)
          yield* place(live, mtn1gb, "0241234567", "same")
          yield* place(test, mtn1gb, "0241234567", "same")
          yield* place(test, mtn1gb, "0241234567")
          yield* place(test, mtn1gb, "0241234567", "same")
          yield* assertTotal(live, 1)
          yield* assertTotal(test, 2)
        }))

      it.effect("the unfiltered total is the kept count; a filtered total counts the orders", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const sql = yield* SqlClient.SqlClient
          const orders = yield* Orders
          const account = yield* fundedAccount(2000n)
          yield* place(account, mtn1gb, "0241234567", "k-1")
          yield* place(account, mtn1gb, "0241234567", "k-2")
          // Set apart from the orders, so each total shows where it came from.
          yield* sql`UPDATE accounts SET order_count = 7 WHERE id = ${account}`
          const total = (query: Partial<Parameters<typeof orders.list>[1]>) =>
            Effect.map(orders.list(account, { page: 1, per_page: 20, ...query }), (page) => page.pagination.total)
          const unfiltered = yield* total({}).pipe(
            Effect.ensuring(Effect.orDie(sql`UPDATE accounts SET order_count = 2 WHERE id = ${account}`))
          )
          assert.strictEqual(unfiltered, 7)
          assert.strictEqual(yield* total({ from: "2000-01-01" }), 2)
          assert.strictEqual(yield* total({ reference_prefix: "k-" }), 2)
          assert.strictEqual(yield* total({ status: "successful" }), 2)
        }))
    })

    // A database of its own, as the migration is applied to it again.
    layer(Domain.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("the migration starts each account's count from the orders it has", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const sql = yield* SqlClient.SqlClient
          const busy = yield* fundedAccount(5000n)
          const quiet = yield* fundedAccount(0n)
          const test = yield* testAccountOf(busy)
          for (let i = 0; i < 3; i++) yield* place(busy, mtn1gb, "0241234567")
          yield* place(busy, mtn1gb, "0240000000")
          yield* place(test, mtn1gb, "0241234567")
          // The database as it was before the migration, with these orders in it; then the migration.
          yield* sql`ALTER TABLE accounts DROP COLUMN order_count`
          yield* migrations["0016_order_counts"]
          assert.deepStrictEqual(yield* disagreeing, [])
          yield* assertTotal(busy, 4)
          yield* assertTotal(quiet, 0)
          yield* assertTotal(test, 1)
          // And it keeps counting from there.
          yield* place(busy, mtn1gb, "0241234567")
          yield* assertTotal(busy, 5)
        }))
    })
  })
}
