/**
 * The agent and referral programmes end to end over real HTTP: the operator links accounts and
 * sets the rate, orders earn (once, on success only), a failed resolution takes it back, and the
 * holder moves earnings to main with POST /wallet/transfers (its 400, 422 and replay).
 */
import type { Account } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import {
  ADMIN_TOKEN,
  adminClient,
  bundlesByName,
  newAccount,
  raw,
  type RawResponse,
  seedCatalog,
  serverLayer
} from "./Harness.js"

const api = (method: "GET" | "POST", path: string, key: string, body?: unknown, headers?: Record<string, string>) =>
  raw(method, `/api/v1${path}`, { key, body, headers })

const adminCall = (method: "GET" | "PUT" | "PATCH" | "POST", path: string, body?: unknown) =>
  raw(method, `/admin/v1${path}`, { bearer: ADMIN_TOKEN, body })

const expectStatus = (res: RawResponse, status: number) =>
  assert.strictEqual(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`)

const balances = (accountId: number) =>
  Effect.map(
    Effect.flatMap(
      adminClient,
      (admin) => admin.accounts.show({ path: { account_id: accountId as Account.AccountId } })
    ),
    (detail) => detail.balance
  )

const audit = Effect.flatMap(adminClient, (admin) => admin.wallets.audit())

/** An agent (price group `agent`), a referrer, and a funded sub-account on base prices under both, at `percent`. */
const programme = (percent: number) =>
  Effect.gen(function*() {
    yield* seedCatalog
    const agent = yield* newAccount(0n, { priceGroup: "agent" })
    const referrer = yield* newAccount(0n)
    const sub = yield* newAccount(10_000n)
    expectStatus(
      yield* adminCall("PATCH", `/accounts/${sub.id}`, { agent_id: agent.id, referred_by: referrer.id }),
      200
    )
    expectStatus(yield* adminCall("PUT", "/commissions", { referral_percent: percent }), 200)
    return { agent, referrer, sub }
  })

for (const target of targets) {
  describe(`commissions over HTTP on ${target.name}`, () => {
    layer(
      serverLayer(target).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))),
      { timeout: 120_000, excludeTestServices: true }
    )((it) => {
      it.effect("the operator links accounts and sets the rate; bad values are 422s", () =>
        Effect.gen(function*() {
          const { agent, referrer, sub } = yield* programme(2)
          const shown = yield* adminCall("GET", `/accounts/${sub.id}`)
          assert.strictEqual(shown.json.agent_id, agent.id)
          assert.strictEqual(shown.json.referred_by, referrer.id)
          assert.match(shown.json.referral_code, /^[0-9A-F]{10}$/)
          const rates = yield* adminCall("GET", "/commissions")
          assert.deepStrictEqual(rates.json, { success: true, commissions: { referral_percent: 2 } })
          for (const bad of [101, -1, 2.345, "2"]) {
            const res = yield* adminCall("PUT", "/commissions", { referral_percent: bad })
            expectStatus(res, 422)
            assert.containsAllKeys(res.json.errors, ["referral_percent"])
          }
          expectStatus(yield* adminCall("PUT", "/commissions", { referral_percent: 2.5 }), 200)
          assert.strictEqual((yield* adminCall("GET", "/commissions")).json.commissions.referral_percent, 2.5)
          const self = yield* adminCall("PATCH", `/accounts/${sub.id}`, { agent_id: sub.id })
          expectStatus(self, 422)
          assert.containsAllKeys(self.json.errors, ["agent_id"])
          const missing = yield* adminCall("PATCH", `/accounts/${sub.id}`, { referred_by: 99_999_999 })
          expectStatus(missing, 422)
          const cleared = yield* adminCall("PATCH", `/accounts/${sub.id}`, { agent_id: null })
          assert.strictEqual(cleared.json.agent_id, null)
        }))

      it.effect("orders earn the agent's difference and the referrer's 2 %, once, on success; a failed resolve takes both back", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          // MTN 1GB: 5.50 on base prices, 5.20 for the agent group.
          const oneGb = bundles.get("MTN 1GB")!
          const { agent, referrer, sub } = yield* programme(2)
          const ok = yield* api("POST", "/orders", sub.key, { bundle_id: oneGb.id, phone_number: "0241234567" })
          expectStatus(ok, 200)
          assert.strictEqual(ok.json.order.status, "successful")
          assert.strictEqual(ok.json.wallet_balance, 94.5)
          // 2 % of 5.50 is 0.11.
          assert.deepStrictEqual(yield* balances(agent.id), { main: 0n, referral: 0n, agent: 30n })
          assert.deepStrictEqual(yield* balances(referrer.id), { main: 0n, referral: 11n, agent: 0n })
          const failed = yield* api("POST", "/orders", sub.key, { bundle_id: oneGb.id, phone_number: "0240000000" })
          assert.strictEqual(failed.json.order.status, "failed")
          assert.strictEqual((yield* balances(agent.id)).agent, 30n)
          // A pending order earns when the worker settles it, not before.
          const pending = yield* api("POST", "/orders", sub.key, { bundle_id: oneGb.id, phone_number: "0249999999" })
          assert.strictEqual(pending.json.order.status, "pending")
          assert.strictEqual((yield* balances(agent.id)).agent, 30n)
          let waited = 0
          while ((yield* balances(agent.id)).agent === 30n && waited < 100) {
            yield* Effect.sleep("100 millis")
            waited++
          }
          assert.strictEqual((yield* balances(agent.id)).agent, 60n)
          assert.strictEqual((yield* balances(referrer.id)).referral, 22n)
          // The earner hears of it: a wallet.funded event naming the order, with the reason.
          const events = yield* api("GET", "/events?type=wallet.funded", agent.key)
          const commission = events.json.events.find((e: any) => e.data.reason === "commission")
          assert.isDefined(commission, events.text)
          assert.strictEqual(commission.data.wallet, "agent")
          assert.strictEqual(commission.data.amount, 0.3)
          assert.include([ok.json.order.order_number, pending.json.order.order_number], commission.data.order_number)
          // The operator fails the delivered order: refunded, both commissions taken back.
          const resolved = yield* adminCall("POST", `/orders/${ok.json.order.order_number}/resolve`, {
            status: "failed"
          })
          expectStatus(resolved, 200)
          assert.strictEqual((yield* balances(sub.id)).main, 10_000n - 550n)
          assert.strictEqual((yield* balances(agent.id)).agent, 30n)
          assert.strictEqual((yield* balances(referrer.id)).referral, 11n)
          const ledger = yield* adminCall("GET", `/accounts/${agent.id}/ledger`)
          assert.deepStrictEqual(
            ledger.json.entries.map((e: any) => [e.reason, e.amount, e.order_number]).reverse(),
            [
              ["commission", 0.3, ok.json.order.order_number],
              ["commission", 0.3, pending.json.order.order_number],
              ["commission_reversal", -0.3, ok.json.order.order_number]
            ]
          )
          const report = yield* audit
          assert.isTrue(report.ok, JSON.stringify(report))
          // Counted for the operator: two orders earned twice each, one of them taken back.
          const metrics = (yield* raw("GET", "/metrics", { bearer: ADMIN_TOKEN })).text
          assert.include(metrics, `bundles_commissions{kind="credited"} 4`)
          assert.include(metrics, `bundles_commissions{kind="reversed"} 2`)
          // Beside the sales on the console: what was paid today, less what was taken back.
          const stats = yield* adminCall("GET", "/stats?days=1")
          assert.strictEqual(stats.json.daily[0].commissions, 0.41)
        }))

      it.effect("POST /wallet/transfers: 200 with the balances, 400 past the wallet, 422 on bad input, nothing moved", () =>
        Effect.gen(function*() {
          const holder = yield* newAccount(0n)
          const admin = yield* adminClient
          yield* admin.wallets.fund({
            headers: {},
            path: { account_id: holder.id },
            payload: { amount: 120n, wallet: "agent" }
          })
          const moved = yield* api("POST", "/wallet/transfers", holder.key, { from: "agent", amount: 0.7 })
          expectStatus(moved, 200)
          assert.deepStrictEqual(moved.json, {
            success: true,
            message: "Moved GHS 0.70 from the agent wallet to the main wallet",
            balance: { main: 0.7, referral: 0, agent: 0.5 }
          })
          const short = yield* api("POST", "/wallet/transfers", holder.key, { from: "agent", amount: 0.51 })
          expectStatus(short, 400)
          assert.strictEqual(short.json.success, false)
          assert.strictEqual(short.json.code, "insufficient_balance")
          assert.strictEqual(short.json.balance, 0.5)
          assert.strictEqual(short.json.required, 0.51)
          assert.isString(short.json.message)
          const empty = yield* api("POST", "/wallet/transfers", holder.key, { from: "referral", amount: 0.01 })
          expectStatus(empty, 400)
          assert.strictEqual(empty.json.balance, 0)
          for (
            const [body, field] of [
              [{ from: "main", amount: 1 }, "from"],
              [{ from: "agent", amount: 0 }, "amount"],
              [{ from: "agent", amount: -1 }, "amount"],
              [{ from: "agent", amount: 0.001 }, "amount"],
              [{ from: "agent" }, "amount"],
              [{ amount: 1 }, "from"]
            ] as const
          ) {
            const res = yield* api("POST", "/wallet/transfers", holder.key, body)
            expectStatus(res, 422)
            assert.containsAllKeys(res.json.errors, [field])
          }
          expectStatus(yield* raw("POST", "/api/v1/wallet/transfers", { body: { from: "agent", amount: 1 } }), 401)
          assert.deepStrictEqual(yield* balances(holder.id), { main: 70n, referral: 0n, agent: 50n })
          const ledger = yield* api("GET", "/wallet/transactions", holder.key)
          assert.deepStrictEqual(
            ledger.json.entries.slice(0, 2).map((e: any) => [e.wallet, e.reason, e.amount]),
            [["main", "transfer", 0.7], ["agent", "transfer", -0.7]]
          )
        }))

      it.effect("ten concurrent transfers of 0.10 from an agent wallet of 0.50 give exactly five", () =>
        Effect.gen(function*() {
          const holder = yield* newAccount(0n)
          const admin = yield* adminClient
          yield* admin.accounts.update({ path: { account_id: holder.id }, payload: { limits: { all: 1000 } } })
          yield* admin.wallets.fund({
            headers: {},
            path: { account_id: holder.id },
            payload: { amount: 50n, wallet: "agent" }
          })
          const answers = yield* Effect.all(
            Array.from(
              { length: 10 },
              () => api("POST", "/wallet/transfers", holder.key, { from: "agent", amount: 0.1 })
            ),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(answers.filter((r) => r.status === 200).length, 5)
          const refused = answers.filter((r) => r.status === 400)
          assert.strictEqual(refused.length, 5)
          for (const r of refused) assert.strictEqual(r.json.required, 0.1)
          assert.deepStrictEqual(yield* balances(holder.id), { main: 50n, referral: 0n, agent: 0n })
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("an Idempotency-Key replays the first answer, concurrently too, and moves once", () =>
        Effect.gen(function*() {
          const holder = yield* newAccount(0n)
          const admin = yield* adminClient
          yield* admin.wallets.fund({
            headers: {},
            path: { account_id: holder.id },
            payload: { amount: 100n, wallet: "referral" }
          })
          const send = (amount: number, key: string) =>
            api("POST", "/wallet/transfers", holder.key, { from: "referral", amount }, { "idempotency-key": key })
          const answers = yield* Effect.all(Array.from({ length: 6 }, () => send(0.3, "move-1")), {
            concurrency: "unbounded"
          })
          for (const r of answers) {
            expectStatus(r, 200)
            assert.deepStrictEqual(r.json.balance, { main: 0.3, referral: 0.7, agent: 0 })
          }
          assert.strictEqual(answers.filter((r) => r.headers["idempotent-replayed"] === "true").length, 5)
          const later = yield* send(0.3, "move-1")
          assert.strictEqual(later.headers["idempotent-replayed"], "true")
          assert.deepStrictEqual(later.json.balance, { main: 0.3, referral: 0.7, agent: 0 })
          const other = yield* send(0.4, "move-1")
          expectStatus(other, 422)
          const badKey = yield* send(0.3, "bad key!")
          expectStatus(badKey, 422)
          assert.deepStrictEqual(yield* balances(holder.id), { main: 30n, referral: 70n, agent: 0n })
          // A refused transfer keeps no key: once the wallet holds enough, the same key moves.
          const tooMuch = yield* send(0.9, "move-2")
          expectStatus(tooMuch, 400)
          yield* admin.wallets.fund({
            headers: {},
            path: { account_id: holder.id },
            payload: { amount: 20n, wallet: "referral" }
          })
          expectStatus(yield* send(0.9, "move-2"), 200)
          assert.deepStrictEqual(yield* balances(holder.id), { main: 120n, referral: 0n, agent: 0n })
          assert.isTrue((yield* audit).ok)
        }))
    })
  })
}
