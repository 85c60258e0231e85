/**
 * Commissions when orders are bought from an upstream: two real server processes chained, a
 * fault proxy between them. Delivered, failed, pending and retried orders of a sub-account earn
 * its agent and referrer once each, whoever settles them (the request, the worker, the operator).
 */
import { startProxy } from "@databundle/client/testing"
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
  orderStatus,
  startUpstream,
  upstreamOrders
} from "./UpstreamHarness.js"

const balanceOf = (base: string, id: number) =>
  Effect.map(admin(base, "GET", `/admin/v1/accounts/${id}`), (detail) => detail.balance as Record<string, number>)

for (const database of databases) {
  describe(`commissions through an upstream on ${database.name}`, () => {
    it.scopedLive(
      "delivered, failed, pending and retried orders earn once each",
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
          yield* admin(down.url, "POST", "/admin/v1/catalog", { price_groups: ["agent"], networks: [] })
          yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", {
            markup: "8%",
            price_groups: { agent: "5%" }
          })
          // MTN 1GB: 5.94 on base prices, 5.78 for agents; 2 % of 5.94 is 0.1188, paid as 0.11.
          const agent = yield* account(down.url, "Agent", 0)
          yield* admin(down.url, "PATCH", `/admin/v1/accounts/${agent.id}`, { price_group: "agent" })
          const referrer = yield* account(down.url, "Referrer", 0)
          const sub = yield* account(down.url, "Sub-reseller", 200)
          // The operator's commands: the links, the rate; bad values are usage errors that call nothing.
          const linked = yield* cli(
            down.url,
            "accounts",
            "update",
            String(sub.id),
            "--agent",
            String(agent.id),
            "--referred-by",
            String(referrer.id),
            "--limit",
            "all=1000",
            "--limit",
            "orders=1000"
          )
          assert.strictEqual(linked.code, 0, linked.stderr)
          assert.match(linked.stdout, new RegExp(`agent +account ${agent.id}`))
          assert.match(linked.stdout, new RegExp(`referred by +account ${referrer.id}`))
          const rate = yield* cli(down.url, "commissions", "set", "--referral", "2", "--json")
          assert.strictEqual(rate.code, 0, rate.stderr)
          assert.deepStrictEqual(JSON.parse(rate.stdout), { success: true, commissions: { referral_percent: 2 } })
          for (const bad of [["--referral", "101"], ["--referral", "1.234"], ["--referral", "x"]]) {
            const refused = yield* cli(down.url, "commissions", "set", ...bad)
            assert.strictEqual(refused.code, 2, refused.stderr)
            assert.include(refused.stderr, "--referral")
          }
          const badAgent = yield* cli(down.url, "accounts", "update", String(sub.id), "--agent", "someone")
          assert.strictEqual(badAgent.code, 2, badAgent.stderr)
          const shown = yield* cli(down.url, "commissions", "show")
          assert.match(shown.stdout, /referral +2 % of each successful order/)
          const mtn = (yield* call(down.url, "GET", "/api/v1/networks", { key: sub.key })).body.networks
            .find((n: any) => n.slug === "mtn")
          const bundleId = (yield* call(down.url, "GET", `/api/v1/networks/${mtn.id}/bundles`, { key: sub.key })).body
            .bundles.find((b: any) => b.size === "1GB").id
          const buy = (phone: string, reference: string) =>
            call(down.url, "POST", "/api/v1/orders", {
              key: sub.key,
              body: { bundle_id: bundleId, phone_number: phone, reference }
            })

          // Four at once, delivered; one failed upstream; two pending upstream.
          const placed = yield* Effect.all(
            [
              ...Array.from({ length: 4 }, (_, i) => buy(`024123450${i}`, `ok-${i}`)),
              buy("0240000000", "fails"),
              buy("0241119999", "slow-1"),
              buy("0242229999", "slow-2")
            ],
            { concurrency: "unbounded" }
          )
          for (const p of placed) assert.strictEqual(p.status, 200, JSON.stringify(p.body))
          // On a busy machine an upstream answer may come after the provider's 1 s: that order waits
          // for the worker instead. Each ends as the upstream decides.
          const final = ["successful", "successful", "successful", "successful", "failed", "pending", "pending"]
          placed.forEach((p, i) => assert.include([final[i], "pending"], p.body.order.status))
          for (const [i, p] of placed.slice(0, 5).entries()) {
            yield* eventually("settled", 30, orderStatus(down.url, sub.key, p.body.order.order_number), (s) =>
              s === final[i])
          }

          // A lost answer: the upstream bought it, we never heard; the worker asks again and settles it once.
          proxy.script("POST", "/api/v1/orders", { kind: "drop-after-forward" })
          const lost = yield* buy("0241234599", "lost")
          assert.strictEqual(lost.body.order.status, "pending")

          // The operator settles the pending ones by hand while the worker does the same.
          const slow = placed.slice(5).map((p) =>
            p.body.order.order_number as string
          )
          yield* Effect.all(
            slow.map((number) =>
              call(down.url, "POST", `/admin/v1/orders/${number}/resolve`, {
                admin: true,
                body: { status: "successful" }
              })
            ),
            { concurrency: "unbounded" }
          )
          for (const number of [...slow, lost.body.order.order_number]) {
            yield* eventually("settled", 30, orderStatus(down.url, sub.key, number), (s) =>
              s === "successful")
          }
          const held = yield* upstreamOrders(upstream.server.url, upstream.buyer.key, lost.body.order.order_number)
          assert.strictEqual(held.length, 1, "bought once upstream")

          // Seven successful orders: 7 × 0.16 to the agent, 7 × 0.11 to the referrer.
          assert.deepStrictEqual(yield* balanceOf(down.url, agent.id), { main: 0, referral: 0, agent: 1.12 })
          assert.deepStrictEqual(yield* balanceOf(down.url, referrer.id), { main: 0, referral: 0.77, agent: 0 })
          const ledger = (yield* admin(down.url, "GET", `/admin/v1/accounts/${agent.id}/ledger?per_page=100`))
            .entries as Array<any>
          const byOrder = new Map<string, number>()
          for (const e of ledger) byOrder.set(e.order_number, (byOrder.get(e.order_number) ?? 0) + 1)
          assert.strictEqual(byOrder.size, 7)
          for (const count of byOrder.values()) assert.strictEqual(count, 1)
          assert.isFalse(byOrder.has(placed[4]!.body.order.order_number), "nothing for the failed order")

          // Moving it to main leaves the wallet at zero and the audit clean.
          const moved = yield* call(down.url, "POST", "/api/v1/wallet/transfers", {
            key: agent.key,
            body: { from: "agent", amount: 1.12 }
          })
          assert.strictEqual(moved.status, 200, JSON.stringify(moved.body))
          assert.deepStrictEqual(moved.body.balance, { main: 1.12, referral: 0, agent: 0 })
          assert.isTrue((yield* audit(down.url)).ok)
          assert.isTrue((yield* audit(upstream.server.url)).ok)
          const agentNow = yield* balanceOf(down.url, agent.id)
          assert.strictEqual(agentNow.agent, 0)
        }),
      { timeout: 180_000 }
    )
  })
}
