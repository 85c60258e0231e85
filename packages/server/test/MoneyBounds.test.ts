/**
 * Amounts have an upper bound, stated by the contract and checked on every path: a request
 * carries at most GHS 1,000,000,000; funding and adjustments take a wallet no further; money
 * owed back (a refund) may take one past it, and every answer then still reads it exactly,
 * idempotent replays included. On PGlite and Postgres.
 */
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ADMIN_TOKEN, bundlesByName, newAccount, raw, serverLayer } from "./Harness.js"

const admin = (method: "GET" | "POST", path: string, body?: unknown, key?: string) =>
  raw(method, `/admin/v1${path}`, {
    bearer: ADMIN_TOKEN,
    body,
    headers: key === undefined ? {} : { "Idempotency-Key": key }
  })

const BILLION = 1_000_000_000

for (const target of targets) {
  describe(`the upper bound of amounts on ${target.name}`, () => {
    // Pending orders stay pending until resolved by hand.
    layer(serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "3600" }), {
      timeout: 60_000,
      excludeTestServices: true
    })((it) => {
      it.effect("holds on every path; a balance past it still answers, replays too", () =>
        Effect.gen(function*() {
          const bundle = (yield* bundlesByName).get("MTN 1GB")!
          const account = yield* newAccount(0n)
          // A request past the bound: 422 on the field, nothing moves.
          const over = yield* admin("POST", `/accounts/${account.id}/wallet/fund`, { amount: BILLION + 0.01 })
          assert.strictEqual(over.status, 422, over.text)
          assert.deepStrictEqual(over.json.errors.amount, ["amount must be at most 1000000000 cedis"])
          const adjustOver = yield* admin("POST", `/accounts/${account.id}/wallet/adjust`, {
            amount: -BILLION - 1,
            note: "too much"
          })
          assert.strictEqual(adjustOver.status, 422, adjustOver.text)

          // Funded to the bound; one pesewa more is refused, by funding or by adjustment.
          const full = yield* admin("POST", `/accounts/${account.id}/wallet/fund`, { amount: BILLION }, "bound-1")
          assert.strictEqual(full.status, 200, full.text)
          assert.strictEqual(full.json.balance.main, BILLION)
          for (
            const refused of [
              yield* admin("POST", `/accounts/${account.id}/wallet/fund`, { amount: 0.01 }, "bound-2"),
              yield* admin("POST", `/accounts/${account.id}/wallet/adjust`, { amount: 0.01, note: "one more" })
            ]
          ) {
            assert.strictEqual(refused.status, 422, refused.text)
            assert.match(refused.json.errors.amount[0], /past GHS 1000000000\.00, the most a wallet may be funded to/)
          }

          // An order leaves room; funding fills it again; the order fails and is refunded: past the bound.
          const client = raw("POST", "/api/v1/orders", {
            key: account.key,
            body: { bundle_id: bundle.id, phone_number: "0241239999", reference: "bound-order" }
          })
          const order = yield* client
          assert.strictEqual(order.status, 200, order.text)
          assert.strictEqual(order.json.order.status, "pending")
          const price = order.json.order.amount_paid as number
          const refill = yield* admin("POST", `/accounts/${account.id}/wallet/fund`, { amount: price }, "bound-3")
          assert.strictEqual(refill.status, 200, refill.text)
          assert.strictEqual(refill.json.balance.main, BILLION)
          const resolved = yield* admin("POST", `/orders/${order.json.order.order_number}/resolve`, {
            status: "failed"
          })
          assert.strictEqual(resolved.status, 200, resolved.text)
          const past = BILLION + price

          // Every answer reads the balance exactly: the holder's, the operator's, replays of old fundings.
          const balance = yield* raw("GET", "/api/v1/balance", { key: account.key })
          assert.strictEqual(balance.status, 200, balance.text)
          assert.strictEqual(balance.json.balance.main, past)
          const shown = yield* admin("GET", `/accounts/${account.id}`)
          assert.strictEqual(shown.json.balance.main, past)
          for (const [key, amount] of [["bound-1", BILLION], ["bound-3", price]] as const) {
            const replay = yield* admin("POST", `/accounts/${account.id}/wallet/fund`, { amount }, key)
            assert.strictEqual(replay.status, 200, replay.text)
            assert.strictEqual(replay.headers["idempotent-replayed"], "true")
          }
          const ledger = yield* admin("GET", `/accounts/${account.id}/ledger`)
          assert.strictEqual(ledger.status, 200, ledger.text)
          assert.strictEqual(ledger.json.entries[0].balance_after, past)
          // Still no further funding, but orders and money out work as ever.
          assert.strictEqual(
            (yield* admin("POST", `/accounts/${account.id}/wallet/fund`, { amount: 1 })).status,
            422
          )
          const out = yield* admin("POST", `/accounts/${account.id}/wallet/adjust`, { amount: -price, note: "back" })
          assert.strictEqual(out.status, 200, out.text)
          assert.strictEqual(out.json.balance.main, BILLION)
          const audit = yield* admin("GET", "/audit")
          assert.isTrue(audit.json.ok, audit.text)
        }))
    })
  })
}
