/**
 * The `upstream` provider end to end: two real server processes chained (the upstream on its
 * simulator), a fault proxy between them, on PGlite and on Postgres.
 */
import { startProxy } from "@databundle/client/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Processes from "./Processes.js"
import {
  account,
  admin,
  audit,
  call,
  cli,
  databaseEnv,
  databases,
  deadPort,
  eventually,
  FAST,
  orderStatus,
  startUpstream,
  upstreamOrders
} from "./UpstreamHarness.js"

for (const database of databases) {
  describe(`upstream provider on ${database.name}`, () => {
    it.scopedLive(
      "syncs the catalogue with markups, delivers, fails with one refund, follows a pending order",
      () =>
        Effect.gen(function*() {
          const upstream = yield* startUpstream(database.url, 1000)
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_NAME: "wholesale",
            BUNDLES_UPSTREAM_URL: `${upstream.server.url}/api/v1`,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key,
            BUNDLES_UPSTREAM_LOW_BALANCE: "100"
          })
          // A price group must exist before a sync can price it.
          yield* admin(down.url, "POST", "/admin/v1/catalog", { price_groups: ["agent"], networks: [] })

          const dry = yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", {
            markup: "8%",
            price_groups: { agent: "5%" },
            dry_run: true
          })
          assert.isTrue(dry.dry_run)
          assert.isAbove(dry.changes.length, 10)
          const unsynced = yield* call(down.url, "GET", "/admin/v1/catalog", { admin: true })
          assert.strictEqual(unsynced.body.networks.length, 0, "a dry run changes nothing")

          // The operator's command: the same diff, as JSON or as text; bad usage calls nothing.
          const dryCli = yield* cli(
            down.url,
            "catalog",
            "sync",
            "--markup",
            "8%",
            "--price-group",
            "agent=5%",
            "--dry-run",
            "--json"
          )
          assert.strictEqual(dryCli.code, 0, dryCli.stderr)
          assert.deepStrictEqual(JSON.parse(dryCli.stdout).changes, dry.changes)
          const dryText = yield* cli(down.url, "catalog", "sync", "--markup", "8%", "--dry-run")
          assert.include(dryText.stdout, "Would change from wholesale")
          assert.match(dryText.stdout, /create +bundle +mtn-1gb/)
          const usage = yield* cli(down.url, "catalog", "sync", "--price-group", "agent=5")
          assert.notStrictEqual(usage.code, 0)
          assert.include(usage.stderr, "GROUP=MARKUP")

          const synced = yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", {
            markup: "8%",
            price_groups: { agent: "5%" }
          })
          assert.deepStrictEqual(synced.changes, dry.changes)
          const again = yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", {
            markup: "8%",
            price_groups: { agent: "5%" }
          })
          assert.deepStrictEqual(again.changes, [], "a second sync with the same markups changes nothing")

          // MTN 1GB costs 5.50 upstream: 5.94 with 8%, and 5.775 rounds up to 5.78 for the agent group.
          const exported = (yield* admin(down.url, "GET", "/admin/v1/catalog")) as any
          const mtn = exported.networks.find((n: any) => n.slug === "mtn")
          const oneGb = mtn.bundles.find((b: any) => b.size === "1GB")
          assert.strictEqual(oneGb.price, 5.94)
          assert.strictEqual(oneGb.prices.agent, 5.78)
          // Deactivated upstream bundles are deactivated here too.
          const upstreamCatalog = (yield* admin(upstream.server.url, "GET", "/admin/v1/catalog")) as any
          const inactiveUpstream = upstreamCatalog.networks.flatMap((n: any) => n.bundles).filter((b: any) => !b.active)
          const inactiveHere = exported.networks.flatMap((n: any) => n.bundles).filter((b: any) => !b.active)
          assert.strictEqual(inactiveHere.length, inactiveUpstream.length)

          const reseller = yield* account(down.url, "Shop", 100)
          const networks = (yield* call(down.url, "GET", "/api/v1/networks", { key: reseller.key })).body.networks
          const mtnId = networks.find((n: any) => n.slug === "mtn").id
          const bundles = (yield* call(down.url, "GET", `/api/v1/networks/${mtnId}/bundles`, { key: reseller.key }))
            .body.bundles
          const bundleId = bundles.find((b: any) => b.size === "1GB").id

          // Delivered: upstream holds one order under our order number, successful.
          const ok = yield* call(down.url, "POST", "/api/v1/orders", {
            key: reseller.key,
            body: { bundle_id: bundleId, phone_number: "0241234567", reference: "shop-1" }
          })
          assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
          assert.strictEqual(ok.body.order.status, "successful")
          assert.strictEqual(ok.body.order.amount_paid, 5.94)
          const held = yield* upstreamOrders(upstream.server.url, upstream.buyer.key, ok.body.order.order_number)
          assert.deepStrictEqual(held.map((o) => o.status), ["successful"])

          // Failed upstream: ours fails, refunded once.
          const failed = yield* call(down.url, "POST", "/api/v1/orders", {
            key: reseller.key,
            body: { bundle_id: bundleId, phone_number: "0240000000", reference: "shop-2" }
          })
          assert.strictEqual(failed.body.order.status, "failed")
          assert.strictEqual(failed.body.wallet_balance, 100 - 5.94)
          const ledger = (yield* admin(down.url, "GET", `/admin/v1/accounts/${reseller.id}/ledger`)).entries as Array<
            any
          >
          assert.strictEqual(ledger.filter((e) => e.reason === "refund").length, 1)

          // Pending upstream: ours stays pending, then settles when the upstream's does.
          const pending = yield* call(down.url, "POST", "/api/v1/orders", {
            key: reseller.key,
            body: { bundle_id: bundleId, phone_number: "0249999999", reference: "shop-3" }
          })
          assert.strictEqual(pending.body.order.status, "pending")
          yield* eventually(
            "the pending order settles",
            20,
            orderStatus(down.url, reseller.key, pending.body.order.order_number),
            (s) => s === "successful"
          )

          // The operator's view: the balance there (1000 - 3 orders' cost + the refund).
          const view = yield* admin(down.url, "GET", "/admin/v1/upstreams")
          assert.strictEqual(view.provider, "upstream")
          assert.strictEqual(view.upstreams[0].name, "wholesale")
          assert.strictEqual(view.upstreams[0].balance, 1000 - 5.5 * 2)
          assert.isFalse(view.upstreams[0].balance_low)
          const listed = yield* cli(down.url, "upstreams")
          assert.strictEqual(listed.code, 0, listed.stderr)
          assert.match(listed.stdout, /wholesale +GHS 989\.00 +GHS 100\.00 +closed/)
          assert.isTrue((yield* audit(down.url)).ok)
          assert.isTrue((yield* audit(upstream.server.url)).ok)
        }),
      { timeout: 180_000 }
    )

    it.scopedLive(
      "rides out a 500, a lost response, a 429 with Retry-After and a stall without buying twice",
      () =>
        Effect.gen(function*() {
          const upstream = yield* startUpstream(database.url, 1000)
          const proxy = yield* Effect.acquireRelease(
            Effect.promise(() => startProxy(upstream.server.url)),
            (p) => Effect.promise(() => p.close())
          )
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_URL: proxy.baseUrl,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key
          })
          yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", { markup: "10%" })
          const reseller = yield* account(down.url, "Shop", 200)
          const bundles =
            (yield* call(down.url, "GET", "/api/v1/networks/1/bundles", { key: reseller.key })).body.bundles
          const bundleId = bundles.find((b: any) => b.is_active).id

          const faults = [
            { name: "500", action: { kind: "respond", status: 500, body: "upstream broke" } as const },
            { name: "lost response", action: { kind: "drop-after-forward" } as const },
            {
              name: "429",
              action: { kind: "respond", status: 429, headers: { "retry-after": "2" }, body: "slow down" } as const
            },
            { name: "stall", action: { kind: "delay", ms: 2500 } as const }
          ]
          for (const [i, fault] of faults.entries()) {
            proxy.reset()
            proxy.script("POST", "/api/v1/orders", fault.action)
            const placed = yield* call(down.url, "POST", "/api/v1/orders", {
              key: reseller.key,
              body: { bundle_id: bundleId, phone_number: `024123400${i}`, reference: `fault-${i}` }
            })
            assert.strictEqual(placed.status, 200, `${fault.name}: ${JSON.stringify(placed.body)}`)
            assert.strictEqual(placed.body.order.status, "pending", fault.name)
            const number = placed.body.order.order_number
            yield* eventually(
              `${fault.name}: settles`,
              20,
              orderStatus(down.url, reseller.key, number),
              (s) => s === "successful"
            )
            // Wait out any request the proxy still holds, then count what the upstream holds.
            yield* Effect.sleep("2600 millis").pipe(Effect.when(() => fault.name === "stall"))
            const held = yield* upstreamOrders(upstream.server.url, upstream.buyer.key, number)
            assert.strictEqual(held.length, 1, `${fault.name}: one order upstream`)
            const posts = proxy.seen.filter((s) => s.method === "POST")
            assert.isAtLeast(posts.length, 2, `${fault.name}: retried`)
            if (fault.name === "429") {
              assert.isAtLeast(posts[1]!.at - posts[0]!.at, 1900, "Retry-After is honoured")
            }
          }
          assert.isTrue((yield* audit(down.url)).ok)
        }),
      { timeout: 180_000 }
    )

    it.scopedLive(
      "fails with one refund after the deadline when the upstream refuses connections, and opens its circuit",
      () =>
        Effect.gen(function*() {
          const upstream = yield* startUpstream(database.url, 1000)
          const env = yield* databaseEnv(database.url)
          const port = yield* deadPort
          // Synced while the upstream is reachable, then restarted pointing at a dead port.
          const first = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_URL: `${upstream.server.url}/api/v1`,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key
          })
          yield* admin(first.url, "POST", "/admin/v1/upstreams/catalog-sync", {})
          const reseller = yield* account(first.url, "Shop", 50)
          first.child.kill("SIGTERM")
          yield* Effect.async<void>((resume) => {
            first.child.once("exit", () => resume(Effect.void))
          })
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_URL: `http://127.0.0.1:${port}/api/v1`,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key,
            BUNDLES_UPSTREAM_DEADLINE_SECONDS: "3",
            BUNDLES_UPSTREAM_BREAKER_FAILURES: "2"
          })
          const placed = yield* call(down.url, "POST", "/api/v1/orders", {
            key: reseller.key,
            body: { bundle_id: 1, phone_number: "0241111111" }
          })
          assert.strictEqual(placed.body.order.status, "pending")
          yield* eventually(
            "the circuit opens",
            10,
            Effect.map(admin(down.url, "GET", "/admin/v1/upstreams"), (v) => v.upstreams[0].circuit),
            (c) => c === "open"
          )
          yield* eventually(
            "the order fails after the deadline",
            15,
            orderStatus(down.url, reseller.key, placed.body.order.order_number),
            (s) => s === "failed"
          )
          const balance = (yield* call(down.url, "GET", "/api/v1/balance", { key: reseller.key })).body.balance.main
          assert.strictEqual(balance, 50)
          assert.isTrue((yield* audit(down.url)).ok)
          const view = yield* admin(down.url, "GET", "/admin/v1/upstreams")
          assert.isNull(view.upstreams[0].balance)
        }),
      { timeout: 180_000 }
    )

    it.scopedLive(
      "falls over by priority when the first upstream is out of balance or refuses connections",
      () =>
        Effect.gen(function*() {
          const upstream = yield* startUpstream(database.url, 6)
          const beta = yield* account(upstream.server.url, "Second account", 1000)
          const proxy = yield* Effect.acquireRelease(
            Effect.promise(() => startProxy(upstream.server.url)),
            (p) => Effect.promise(() => p.close())
          )
          const env = yield* databaseEnv(database.url)
          const file = path.join(env.BUNDLES_DATA_DIR!, "upstreams.json")
          fs.writeFileSync(
            file,
            JSON.stringify({
              upstreams: [
                { name: "alpha", url: proxy.baseUrl, api_key_env: "ALPHA_KEY", networks: { "*": 1 }, low_balance: 10 },
                { name: "beta", url: `${upstream.server.url}/api/v1`, api_key_env: "BETA_KEY", networks: { "*": 2 } }
              ]
            })
          )
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAMS_FILE: file,
            ALPHA_KEY: upstream.buyer.key,
            BETA_KEY: beta.key,
            BUNDLES_UPSTREAM_BALANCE_SECONDS: "0.5"
          })
          const synced = yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", { markup: "10%" })
          assert.deepStrictEqual(synced.upstreams, ["alpha", "beta"])
          const view = yield* admin(down.url, "GET", "/admin/v1/upstreams")
          assert.strictEqual(view.upstreams[0].bundles, view.upstreams[1].bundles, "both map the same bundles")
          const reseller = yield* account(down.url, "Shop", 100)
          const bundles =
            (yield* call(down.url, "GET", "/api/v1/networks/1/bundles", { key: reseller.key })).body.bundles
          const bundleId = bundles.find((b: any) => b.size === "1GB").id

          const buy = (i: number) =>
            Effect.map(
              call(down.url, "POST", "/api/v1/orders", {
                key: reseller.key,
                body: { bundle_id: bundleId, phone_number: `024555000${i}` }
              }),
              (r) => r.body.order
            )
          const holders = (orderNumber: string) =>
            Effect.all([
              upstreamOrders(upstream.server.url, upstream.buyer.key, orderNumber),
              upstreamOrders(upstream.server.url, beta.key, orderNumber)
            ]).pipe(Effect.map(([a, b]) => [a.length, b.length]))

          // The first goes to alpha, the preferred one; it leaves alpha 0.50.
          const first = yield* buy(1)
          assert.strictEqual(first.status, "successful")
          assert.deepStrictEqual(yield* holders(first.order_number), [1, 0])
          // Alpha is out of balance, which proves it did not take the order: beta delivers it.
          const second = yield* buy(2)
          assert.strictEqual(second.status, "successful")
          assert.deepStrictEqual(yield* holders(second.order_number), [0, 1])
          // The low balance was announced.
          yield* eventually(
            "a low-balance warning",
            10,
            Effect.sync(down.output),
            (o) => o.includes("upstream.balance_low")
          )
          // Alpha refuses connections: beta again.
          yield* Effect.promise(() => proxy.close())
          const third = yield* buy(3)
          assert.strictEqual(third.status, "successful")
          assert.deepStrictEqual(yield* holders(third.order_number), [0, 1])
          const after = yield* admin(down.url, "GET", "/admin/v1/upstreams")
          assert.isNull(after.upstreams[0].balance)
          assert.strictEqual(after.upstreams[1].balance, 1000 - 5.5 * 2)
          assert.isTrue((yield* audit(down.url)).ok)
        }),
      { timeout: 180_000 }
    )

    it.scopedLive(
      "kill -9 of the downstream during a burst: one upstream order per order, wallets equal ledgers",
      () =>
        Effect.gen(function*() {
          const limits = { BUNDLES_RATE_LIMITS: "all=100000,orders=100000,balance=100000" }
          const upstream = yield* startUpstream(database.url, 10_000, limits)
          const env = yield* databaseEnv(database.url)
          const downEnv = {
            ...env,
            ...FAST,
            ...limits,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_URL: `${upstream.server.url}/api/v1`,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key
          }
          const first = yield* Processes.start(downEnv)
          yield* admin(first.url, "POST", "/admin/v1/upstreams/catalog-sync", { markup: "5%" })
          const resellers = yield* Effect.forEach([1, 2, 3], (i) => account(first.url, `Shop ${i}`, 500))
          const bundles = (yield* call(first.url, "GET", "/api/v1/networks/1/bundles", { key: resellers[0]!.key })).body
            .bundles
          const bundleId = bundles.find((b: any) => b.is_active).id

          // A burst of orders, cut short by kill -9; answers lost to the kill are simply lost.
          let answeredSoFar = 0
          const burst = Effect.forEach(
            Array.from({ length: 60 }, (_, i) => i),
            (i) =>
              Effect.either(Effect.tryPromise(async () => {
                const response = await fetch(`${first.url}/api/v1/orders`, {
                  method: "POST",
                  headers: {
                    accept: "application/json",
                    "content-type": "application/json",
                    "x-api-key": resellers[i % 3]!.key
                  },
                  body: JSON.stringify({
                    bundle_id: bundleId,
                    phone_number: `0245${String(i).padStart(6, "1")}`,
                    reference: `burst-${i}`
                  })
                })
                answeredSoFar++
                return response
              })),
            { concurrency: 12 }
          )
          // Killed once a few orders were answered, while the rest are in flight.
          const kill = Effect.sleep("10 millis").pipe(
            Effect.repeat({ until: () => answeredSoFar >= 8 }),
            Effect.andThen(() => first.child.kill("SIGKILL"))
          )
          const [answers] = yield* Effect.all([burst, kill], { concurrency: 2 })
          const answered = answers.filter((a) => a._tag === "Right").length
          // The kill landed inside the burst: some answers came, some were lost.
          assert.isBelow(answered, answers.length, "the kill cut the burst short")
          yield* Effect.async<void>((resume) => {
            if (first.child.exitCode !== null || first.child.signalCode !== null) return resume(Effect.void)
            first.child.once("exit", () => resume(Effect.void))
          })

          // Restarted on the same database: the worker finishes what the crash left.
          const down = yield* Processes.start(downEnv)
          const allOrders = Effect.map(
            admin(down.url, "GET", "/admin/v1/orders?per_page=100"),
            (page) => page.orders as Array<{ order_number: string; status: string }>
          )
          const settled = yield* eventually(
            "every downstream order settles",
            90,
            allOrders,
            (orders) => orders.length > 0 && orders.every((o) => o.status !== "pending")
          )
          const upstreamAll = (yield* call(upstream.server.url, "GET", "/api/v1/orders?per_page=50", {
            key: upstream.buyer.key
          })).body
          const references: Array<string> = []
          for (let page = 1; page <= upstreamAll.pagination.last_page; page++) {
            const body = (yield* call(upstream.server.url, "GET", `/api/v1/orders?per_page=50&page=${page}`, {
              key: upstream.buyer.key
            })).body
            references.push(...body.orders.map((o: any) => o.reference))
          }
          assert.strictEqual(new Set(references).size, references.length, "no downstream order bought twice")
          const delivered = settled.filter((o) => o.status === "successful").map((o) => o.order_number).sort()
          assert.deepStrictEqual([...references].sort(), delivered, "one upstream order per delivered order")
          assert.isTrue((yield* audit(down.url)).ok, "every wallet equals its ledger")
          assert.isTrue((yield* audit(upstream.server.url)).ok)
        }),
      { timeout: 180_000 }
    )
  })
}
