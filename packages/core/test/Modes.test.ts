import { type Account, Order, Wallet as WalletContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import { Accounts } from "../src/Accounts.js"
import { ApiKeys, TEST_OPENING_BALANCE } from "../src/ApiKeys.js"
import { Catalog } from "../src/Catalog.js"
import { FulfillmentOutcome, FulfillmentProvider } from "../src/Fulfillment.js"
import { Orders } from "../src/Orders.js"
import * as Tokens from "../src/Tokens.js"
import { Wallet } from "../src/Wallet.js"
import { Webhooks } from "../src/Webhooks.js"
import { fundedAccount, placeOrder as place, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

/** Every order number the live provider was asked about: a test order must never be among them. */
const asked: Array<string> = []

/** A live provider that calls out (no `decide`) and delivers, recording each request. */
const RecordingProvider = Layer.succeed(FulfillmentProvider, {
  deliver: (request) =>
    Effect.sync(() => {
      asked.push(request.orderNumber)
      return FulfillmentOutcome.Delivered()
    })
})

const Domain = Layer.mergeAll(
  Accounts.Default,
  ApiKeys.Default,
  Catalog.Default,
  Wallet.Default,
  Webhooks.Default,
  Orders.Default
).pipe(Layer.provide(RecordingProvider))

const authenticate = (key: string) =>
  Effect.flatMap(ApiKeys, (keys) => keys.authenticate(Redacted.make(key))).pipe(Effect.map(Option.getOrThrow))

const balances = (accountId: number) =>
  Effect.map(Effect.flatMap(Wallet, (w) => w.balances(accountId)), Option.getOrThrow)

for (const target of targets) {
  describe(`Test and live modes on ${target.name}`, () => {
    layer(Domain.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("a test key acts on a test account of its own with a test wallet of play money", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeys
          const account = yield* fundedAccount(2000n)
          const live = yield* keys.create(account)
          const test = yield* keys.create(account, null, "test")
          assert.match(live.api_key, /^dbk_live_[0-9A-Za-z]{40}$/)
          assert.match(test.api_key, /^dbk_test_[0-9A-Za-z]{40}$/)
          assert.strictEqual(test.prefix, test.api_key.slice(0, 17))
          assert.strictEqual(test.mode, "test")
          const livePrincipal = yield* authenticate(live.api_key)
          const testPrincipal = yield* authenticate(test.api_key)
          assert.deepInclude(livePrincipal, { accountId: account, ownerId: account, mode: "live" })
          assert.deepInclude(testPrincipal, { ownerId: account, mode: "test" })
          assert.notStrictEqual(testPrincipal.accountId, account)
          assert.deepStrictEqual(yield* balances(testPrincipal.accountId), {
            main: TEST_OPENING_BALANCE,
            referral: 0n,
            agent: 0n
          })
          assert.strictEqual((yield* balances(account)).main, 2000n)
          // A second test key shares the test account.
          const again = yield* keys.create(account, "ci", "test")
          assert.strictEqual((yield* authenticate(again.api_key)).accountId, testPrincipal.accountId)
          assert.deepStrictEqual((yield* keys.list(account)).map((k) => k.mode), ["test", "test", "live"])
          // The test account is no account of its own for the operator.
          const accounts = yield* Accounts
          const listed = yield* accounts.list({ per_page: 100 })
          assert.isFalse(listed.accounts.some((a) => a.id === testPrincipal.accountId))
          const shown = yield* Effect.either(accounts.show(testPrincipal.accountId))
          assert.isTrue(Either.isLeft(shown))
          // A key cannot be made on a test account.
          assert.isTrue(Either.isLeft(yield* Effect.either(keys.create(testPrincipal.accountId))))
          assert.isTrue((yield* (yield* Wallet).audit).ok)
        }))

      it.effect("a key made before keys had modes (dbk_ and 40 characters) stays valid and live", () =>
        Effect.gen(function*() {
          const account = yield* fundedAccount(0n)
          const legacy = `dbk_${Tokens.randomString("abcdefghijklmnopqrstuvwxyz0123456789", 40)}`
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO api_keys (account_id, key_hash, prefix)
            VALUES (${account}, ${Tokens.sha256Hex(legacy)}, ${Tokens.displayPrefix(legacy)})`
          assert.strictEqual(Tokens.displayPrefix(legacy), legacy.slice(0, 12))
          assert.deepInclude(yield* authenticate(legacy), { accountId: account, ownerId: account, mode: "live" })
          assert.deepStrictEqual((yield* (yield* ApiKeys).list(account)).map((k) => k.mode), ["live"])
        }))

      it.effect("test orders use the simulator and the test wallet only; live orders the live provider", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const keys = yield* ApiKeys
          const orders = yield* Orders
          const account = yield* fundedAccount(2000n, "agent")
          const testId = (yield* authenticate((yield* keys.create(account, null, "test")).api_key)).accountId
          asked.length = 0

          const ok = yield* place(testId, mtn1gb, "0241234567", "same-ref")
          const failed = yield* place(testId, mtn1gb, "0240000000")
          const pending = yield* place(testId, mtn1gb, "0249999999")
          // A test account pays its live account's price group's price (agent: 5.00).
          assert.strictEqual(ok.order.amount_paid, 500n)
          assert.deepStrictEqual([ok.order.status, failed.order.status, pending.order.status], [
            "successful",
            "failed",
            "pending"
          ])
          assert.strictEqual(failed.walletBalance, TEST_OPENING_BALANCE - 500n)
          // The worker settles the pending one through the simulator too, never the live provider.
          yield* orders.processDue
          assert.deepStrictEqual(asked, [], "the live provider never heard of a test order")
          assert.strictEqual((yield* balances(testId)).main, TEST_OPENING_BALANCE - 1000n)
          assert.strictEqual((yield* balances(account)).main, 2000n, "the live wallet is untouched")

          // The same reference is free in the other mode: the modes are apart.
          const liveOrder = yield* place(account, mtn1gb, "0241234567", "same-ref")
          assert.deepStrictEqual(asked, [liveOrder.order.order_number])
          assert.strictEqual(liveOrder.order.status, "successful")
          assert.strictEqual((yield* balances(account)).main, 1500n)
          assert.strictEqual((yield* balances(testId)).main, TEST_OPENING_BALANCE - 1000n)

          const liveList = yield* orders.list(account, { page: 1, per_page: 50 })
          const testList = yield* orders.list(testId, { page: 1, per_page: 50 })
          assert.deepStrictEqual(liveList.orders.map((o) => o.order_number), [liveOrder.order.order_number])
          assert.sameMembers(testList.orders.map((o) => o.order_number), [
            ok.order.order_number,
            failed.order.order_number,
            pending.order.order_number
          ])
          const crossed = yield* Effect.either(orders.get(account, ok.order.order_number))
          assert.isTrue(Either.isLeft(crossed) && crossed.left instanceof Order.OrderNotFound)
          const crossedBack = yield* Effect.either(orders.get(testId, liveOrder.order.order_number))
          assert.isTrue(Either.isLeft(crossedBack) && crossedBack.left instanceof Order.OrderNotFound)

          // The operator's lists: live by default, test on request, both under the live account's id.
          const adminLive = yield* orders.adminList({ account_id: account, per_page: 50 })
          assert.deepStrictEqual(adminLive.orders.map((o) => [o.order_number, o.mode, o.account_id]), [
            [liveOrder.order.order_number, "live", account]
          ])
          const adminTest = yield* orders.adminList({ account_id: account, mode: "test", per_page: 50 })
          assert.strictEqual(adminTest.orders.length, 3)
          for (const o of adminTest.orders) assert.deepInclude(o, { mode: "test", account_id: account })
          assert.deepInclude(yield* orders.adminGet(ok.order.order_number), { mode: "test", account_id: account })
          assert.isTrue((yield* (yield* Wallet).audit).ok)
        }))

      it.effect("a test account's events are marked livemode false and go to the live account's URL and secret", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const keys = yield* ApiKeys
          const webhooks = yield* Webhooks
          const account = yield* fundedAccount(2000n)
          const testId = yield* keys.accountFor(account as Account.AccountId, "test").pipe(
            Effect.map(Option.getOrThrow)
          )
          yield* (yield* Accounts).update(account as Account.AccountId, { webhook_url: "https://shop.example/hooks" })
          const live = yield* webhooks.settings(account)
          assert.deepStrictEqual(yield* webhooks.settings(testId), live)
          yield* place(testId, mtn1gb, "0241234567")
          yield* place(account, mtn1gb, "0241234567")
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ account_id: number; body: string; queued: boolean }>`
            SELECT account_id, body, queued_at IS NOT NULL AS queued FROM webhook_events
            WHERE account_id IN (${account}, ${testId}) ORDER BY account_id, seq
          `
          const seen = rows.map((r) => [r.account_id, JSON.parse(r.body).type, JSON.parse(r.body).livemode, r.queued])
          assert.deepStrictEqual(seen, [
            [account, "wallet.funded", true, false],
            [account, "wallet.debited", true, true],
            [account, "order.successful", true, true],
            [testId, "wallet.debited", false, true],
            [testId, "order.successful", false, true]
          ])
          const feed = yield* webhooks.events(testId, {})
          assert.isTrue(feed.events.every((e) => e.livemode === false))
          const triggered = yield* webhooks.trigger(testId, "order.successful")
          assert.strictEqual(triggered.event.livemode, false)
          assert.isNotNull(triggered.delivery, "queued for the live account's URL")
        }))

      it.effect("concurrent test orders never overdraw the test wallet", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const keys = yield* ApiKeys
          const account = yield* fundedAccount(100_000n)
          const testId = yield* keys.accountFor(account as Account.AccountId, "test").pipe(
            Effect.map(Option.getOrThrow)
          )
          // Leave the test wallet holding five orders and a bit.
          yield* (yield* Wallet).adjust(testId, {
            amount: -(TEST_OPENING_BALANCE - (5n * 550n + 100n)),
            note: "leave room for five orders"
          })
          const results = yield* Effect.all(
            Array.from({ length: 10 }, () => Effect.either(place(testId, mtn1gb, "0241234567"))),
            { concurrency: "unbounded" }
          )
          const refused = results.filter(Either.isLeft)
          assert.strictEqual(results.filter(Either.isRight).length, 5)
          for (const r of refused) assert.instanceOf(r.left, WalletContract.InsufficientBalance)
          assert.strictEqual((yield* balances(testId)).main, 100n)
          assert.strictEqual((yield* balances(account)).main, 100_000n)
          assert.isTrue((yield* (yield* Wallet).audit).ok)
        }))
    })
  })
}
