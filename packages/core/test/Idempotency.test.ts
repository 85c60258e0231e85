import { ApiError } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { canonical, Idempotency } from "../src/Idempotency.js"
import { targets } from "./TestDatabase.js"

const Result = Schema.Struct({ n: Schema.BigInt, at: Schema.Date })

for (const target of targets) {
  describe(`Idempotency on ${target.name}`, () => {
    layer(Idempotency.Default.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("runs once per key and replays the stored result; another body is a 422", () =>
        Effect.gen(function*() {
          const idempotency = yield* Idempotency
          let runs = 0
          const effect = Effect.sync(() => ({ n: BigInt(++runs), at: new Date("2026-11-01T08:00:00.123Z") }))
          const request = { key: "k-1", endpoint: "wallets.fund", target: "1", body: { amount: 5n } }
          const first = yield* idempotency.run(request, Result, effect)
          const second = yield* idempotency.run(request, Result, effect)
          assert.deepStrictEqual([first.replayed, second.replayed], [false, true])
          assert.deepStrictEqual(second.value, first.value)
          assert.strictEqual(runs, 1)
          const other = yield* Effect.flip(idempotency.run({ ...request, body: { amount: 6n } }, Result, effect))
          assert.instanceOf(other, ApiError.ValidationError)
          assert.strictEqual(runs, 1)
        }))

      it.effect("a failure records nothing, so the key runs again", () =>
        Effect.gen(function*() {
          const idempotency = yield* Idempotency
          const sql = yield* SqlClient.SqlClient
          const request = { key: "k-fail", endpoint: "wallets.adjust", target: "1", body: {} }
          yield* Effect.flip(idempotency.run(request, Result, Effect.fail("refused")))
          assert.strictEqual((yield* sql`SELECT 1 FROM admin_idempotency_keys WHERE key = 'k-fail'`).length, 0)
          const ok = yield* idempotency.run(request, Result, Effect.succeed({ n: 1n, at: new Date() }))
          assert.isFalse(ok.replayed)
        }))

      it.effect("keys older than the retention are pruned and then run as new", () =>
        Effect.gen(function*() {
          const idempotency = yield* Idempotency
          const sql = yield* SqlClient.SqlClient
          const request = { key: "k-old", endpoint: "wallets.fund", target: "1", body: {} }
          yield* idempotency.run(request, Result, Effect.succeed({ n: 1n, at: new Date() }))
          yield* sql`UPDATE admin_idempotency_keys SET created_at = now() - interval '8 days' WHERE key = 'k-old'`
          yield* sql`UPDATE admin_idempotency_keys SET created_at = now() - interval '6 days' WHERE key = 'k-1'`
          const again = yield* idempotency.run(request, Result, Effect.succeed({ n: 2n, at: new Date() }))
          assert.isFalse(again.replayed)
          assert.strictEqual(again.value.n, 2n)
          const kept = yield* sql<{ key: string }>`SELECT key FROM admin_idempotency_keys WHERE key = 'k-1'`
          assert.strictEqual(kept.length, 1)
        }))

      it("canonical text ignores key order and tells bigints from numbers", () => {
        assert.strictEqual(canonical({ b: 1, a: { d: 2n, c: null } }), canonical({ a: { c: null, d: 2n }, b: 1 }))
        assert.notStrictEqual(canonical({ a: 1n }), canonical({ a: 1 }))
      })
    })
  })
}
