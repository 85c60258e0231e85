/**
 * Test and live keys end to end, with the `upstream` provider: two real server processes
 * chained (the upstream on its simulator), on PGlite and on Postgres. A test key's orders
 * never reach the upstream and never touch the live wallet; a live key's do.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Processes from "./Processes.js"
import {
  account,
  admin,
  audit,
  call,
  cli,
  databaseEnv,
  databases,
  eventually,
  FAST,
  startUpstream,
  upstreamOrders
} from "./UpstreamHarness.js"

/** The total of an account's orders as its key sees them, and their numbers (first page). */
const orders = (base: string, key: string) =>
  Effect.map(call(base, "GET", "/api/v1/orders?per_page=50", { key }), (r) => ({
    total: r.body.pagination.total as number,
    numbers: (r.body.orders as Array<{ order_number: string }>).map((o) => o.order_number)
  }))

const main = (base: string, key: string) =>
  Effect.map(call(base, "GET", "/api/v1/balance", { key }), (r) => r.body.balance.main as number)

for (const database of databases) {
  describe(`test and live modes on ${database.name}`, () => {
    it.scopedLive(
      "test orders never reach the upstream nor the live wallet, and never overdraw the test wallet",
      () =>
        Effect.gen(function*() {
          const upstream = yield* startUpstream(database.url, 1000)
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_SIMULATOR_PENDING_SECONDS: "1",
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_URL: `${upstream.server.url}/api/v1`,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key
          })
          yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", { markup: "8%" })
          const shop = yield* account(down.url, "Shop", 100)
          // Room for the concurrent burst below (the order limit counts both modes together).
          yield* admin(down.url, "PATCH", `/admin/v1/accounts/${shop.id}`, { limits: { all: 1000, orders: 1000 } })

          // The operator's command makes a test key; the admin API takes `mode` too.
          const made = yield* cli(down.url, "keys", "create", "--account", String(shop.id), "--mode", "test", "--json")
          assert.strictEqual(made.code, 0, made.stderr)
          const testKey = JSON.parse(made.stdout) as { api_key: string; prefix: string; mode: string }
          assert.match(testKey.api_key, /^dbk_test_[0-9A-Za-z]{40}$/)
          assert.strictEqual(testKey.mode, "test")
          assert.match(shop.key, /^dbk_live_/)
          const refused = yield* call(down.url, "POST", `/admin/v1/accounts/${shop.id}/keys?mode=sandbox`, {
            admin: true
          })
          assert.strictEqual(refused.status, 422, JSON.stringify(refused.body))
          assert.isFalse(refused.body.success)
          const detail = yield* admin(down.url, "GET", `/admin/v1/accounts/${shop.id}`)
          assert.deepStrictEqual(detail.keys.map((k: any) => k.mode), ["test", "live"], "keys listed with their mode")
          assert.deepStrictEqual(detail.balance.main, 100, "the account shows its live balances")

          // The same API answers both keys; the test wallet holds its play money.
          assert.strictEqual(yield* main(down.url, shop.key), 100)
          assert.strictEqual(yield* main(down.url, testKey.api_key), 1000)
          const bundles = (yield* call(down.url, "GET", "/api/v1/networks/1/bundles", { key: testKey.api_key })).body
            .bundles
          const liveBundles = (yield* call(down.url, "GET", "/api/v1/networks/1/bundles", { key: shop.key })).body
            .bundles
          assert.deepStrictEqual(bundles, liveBundles, "both modes see the same catalogue and prices")
          const bundle = bundles.find((b: any) => b.is_active)

          const upstreamBefore = yield* orders(upstream.server.url, upstream.buyer.key)
          const upstreamBalance = yield* main(upstream.server.url, upstream.buyer.key)

          // Test orders: delivered, failed with a refund, and pending then settled, all by the simulator.
          const place = (key: string, phone: string, reference?: string) =>
            call(down.url, "POST", "/api/v1/orders", {
              key,
              body: { bundle_id: bundle.id, phone_number: phone, ...(reference === undefined ? {} : { reference }) }
            })
          const ok = yield* place(testKey.api_key, "0241234567", "same-ref")
          assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
          assert.strictEqual(ok.body.order.status, "successful")
          assert.strictEqual(ok.body.wallet_balance, 1000 - bundle.price)
          const failed = yield* place(testKey.api_key, "0240000000")
          assert.strictEqual(failed.body.order.status, "failed")
          assert.strictEqual(failed.body.wallet_balance, 1000 - bundle.price, "refunded to the test wallet")
          const pending = yield* place(testKey.api_key, "0249999999")
          assert.strictEqual(pending.body.order.status, "pending")
          yield* eventually(
            "the pending test order settles",
            20,
            Effect.map(
              call(down.url, "GET", `/api/v1/orders/${pending.body.order.order_number}`, { key: testKey.api_key }),
              (r) => r.body.order.status
            ),
            (s) => s === "successful"
          )
          // A replay in test mode is a replay, as in live mode.
          const replay = yield* place(testKey.api_key, "0241234567", "same-ref")
          assert.strictEqual(replay.body.order.order_number, ok.body.order.order_number)

          // Leave the test wallet room for exactly five more, then ten at once: five succeed.
          const before = yield* main(down.url, testKey.api_key)
          const leave = Math.round((5 * bundle.price + 0.5) * 100) / 100
          yield* admin(down.url, "POST", `/admin/v1/accounts/${shop.id}/wallet/adjust`, {
            amount: Math.round((leave - before) * 100) / 100,
            note: "leave room for five test orders",
            mode: "test"
          })
          assert.strictEqual(yield* main(down.url, testKey.api_key), leave)
          const burst = yield* Effect.all(
            Array.from({ length: 10 }, (_, i) => place(testKey.api_key, `024555010${i}`)),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(burst.filter((r) => r.status === 200).length, 5, JSON.stringify(burst.map((r) => r.body)))
          for (const r of burst.filter((r) => r.status !== 200)) {
            assert.strictEqual(r.status, 400)
            assert.strictEqual(r.body.code, "insufficient_balance")
          }
          assert.strictEqual(yield* main(down.url, testKey.api_key), 0.5)

          // Nothing reached the upstream, and the live wallet is untouched.
          const testOrders = yield* orders(down.url, testKey.api_key)
          assert.strictEqual(testOrders.total, 3 + 5)
          for (const number of testOrders.numbers) {
            assert.deepStrictEqual(yield* upstreamOrders(upstream.server.url, upstream.buyer.key, number), [])
          }
          assert.deepStrictEqual(yield* orders(upstream.server.url, upstream.buyer.key), upstreamBefore)
          assert.strictEqual(yield* main(upstream.server.url, upstream.buyer.key), upstreamBalance)
          assert.strictEqual(yield* main(down.url, shop.key), 100)
          assert.deepStrictEqual(yield* orders(down.url, shop.key), { total: 0, numbers: [] })
          const crossed = yield* call(down.url, "GET", `/api/v1/orders/${ok.body.order.order_number}`, {
            key: shop.key
          })
          assert.strictEqual(crossed.status, 404, "a live key does not see test orders")

          // A live order with the same reference: bought upstream, paid from the live wallet.
          const live = yield* place(shop.key, "0241234567", "same-ref")
          assert.strictEqual(live.status, 200, JSON.stringify(live.body))
          assert.strictEqual(live.body.order.status, "successful")
          assert.notStrictEqual(live.body.order.order_number, ok.body.order.order_number)
          assert.strictEqual(live.body.wallet_balance, Math.round((100 - bundle.price) * 100) / 100)
          const held = yield* upstreamOrders(upstream.server.url, upstream.buyer.key, live.body.order.order_number)
          assert.deepStrictEqual(held.map((o) => o.status), ["successful"])
          assert.strictEqual(yield* main(down.url, testKey.api_key), 0.5, "the test wallet is untouched")
          const testAfter = yield* call(down.url, "GET", `/api/v1/orders/${live.body.order.order_number}`, {
            key: testKey.api_key
          })
          assert.strictEqual(testAfter.status, 404, "a test key does not see live orders")

          // The operator's lists keep the modes apart too.
          const liveListed = yield* admin(down.url, "GET", `/admin/v1/orders?account_id=${shop.id}`)
          assert.deepStrictEqual(liveListed.orders.map((o: any) => [o.order_number, o.mode, o.account_id]), [
            [live.body.order.order_number, "live", shop.id]
          ])
          const testListed = yield* admin(down.url, "GET", `/admin/v1/orders?account_id=${shop.id}&mode=test`)
          assert.strictEqual(testListed.pagination.total, 8)
          const accounts = yield* admin(down.url, "GET", "/admin/v1/accounts")
          assert.deepStrictEqual(accounts.accounts.map((a: any) => a.name), ["Shop"], "no test account listed")
          assert.isTrue((yield* audit(down.url)).ok)
          assert.isTrue((yield* audit(upstream.server.url)).ok)
        }),
      { timeout: 180_000 }
    )
  })
}
