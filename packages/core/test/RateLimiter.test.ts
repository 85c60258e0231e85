import { SqlClient } from "@effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { decide, layerMemory, layerSql, RateLimiter } from "../src/RateLimiter.js"
import { targets } from "./TestDatabase.js"

const quotas = [{ scope: "all" as const, limit: 60 }, { scope: "orders" as const, limit: 10 }]

describe("RateLimiter", () => {
  it("decide reports the tightest scope and refuses at the limit", () => {
    const now = 1_000_000_000
    const second = now / 1000
    const allowed = decide(quotas, [[[second, 5]], [[second - 30, 3]]], now)
    assert.deepStrictEqual(
      [allowed.allowed, allowed.scope, allowed.limit, allowed.remaining, allowed.resetSeconds],
      [true, "orders", 10, 6, 31]
    )
    const refused = decide(quotas, [[[second, 5]], [[second - 30, 4], [second - 10, 6]]], now)
    assert.deepStrictEqual([refused.allowed, refused.scope, refused.retryAfterSeconds], [false, "orders", 31])
  })

  it.effect("no 60-second window holds more than the limit; refused requests count nowhere", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const admitted: Array<number> = []
      // Offer a request every 500 ms for three minutes.
      for (let t = 0; t < 180_000; t += 500) {
        const decision = yield* limiter.consume("account:1", quotas)
        if (decision.allowed) admitted.push(t)
        else assert.isAbove(decision.retryAfterSeconds, 0)
        yield* TestClock.adjust("500 millis")
      }
      for (const start of admitted) {
        const inWindow = admitted.filter((t) => t >= start && t < start + 60_000).length
        assert.isAtMost(inWindow, 10)
      }
      // The limit is used, not starved: about 10 a minute over three minutes.
      assert.isAtLeast(admitted.length, 27)
      // Another subject has its own quota.
      assert.isTrue((yield* limiter.consume("account:2", quotas)).allowed)
    }).pipe(Effect.provide(layerMemory)))

  it.effect("a request refused by one scope consumes none of the others", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const tight = [{ scope: "all" as const, limit: 5 }, { scope: "orders" as const, limit: 2 }]
      const results = []
      for (let i = 0; i < 4; i++) results.push(yield* limiter.consume("s", tight))
      assert.deepStrictEqual(results.map((r) => r.allowed), [true, true, false, false])
      const all = yield* limiter.consume("s", [{ scope: "all", limit: 5 }])
      assert.strictEqual(all.remaining, 2)
    }).pipe(Effect.provide(layerMemory)))

  it.effect("retry-after is when a slot frees", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const one = [{ scope: "orders" as const, limit: 1 }]
      assert.isTrue((yield* limiter.consume("s", one)).allowed)
      yield* TestClock.adjust("20 seconds")
      const refused = yield* limiter.consume("s", one)
      assert.isFalse(refused.allowed)
      yield* TestClock.adjust(`${refused.retryAfterSeconds - 1} seconds`)
      assert.isFalse((yield* limiter.consume("s", one)).allowed)
      yield* TestClock.adjust("1 second")
      assert.isTrue((yield* limiter.consume("s", one)).allowed)
    }).pipe(Effect.provide(layerMemory)))

  it.effect("release gives back one admitted request per scope, never more than were counted", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const two = [{ scope: "auth" as const, limit: 2 }, { scope: "all" as const, limit: 9 }]
      assert.isTrue((yield* limiter.consume("m:r", two)).allowed)
      assert.isTrue((yield* limiter.consume("m:r", two)).allowed)
      assert.isFalse((yield* limiter.consume("m:r", two)).allowed)
      yield* limiter.release("m:r", two)
      const again = yield* limiter.consume("m:r", two)
      assert.deepStrictEqual([again.allowed, again.scope, again.remaining], [true, "auth", 0])
      // Three releases of two counted requests leave the count at zero, not below.
      for (let i = 0; i < 3; i++) yield* limiter.release("m:r", two)
      assert.strictEqual((yield* limiter.check("m:r", two)).remaining, 1)
      yield* limiter.release("m:none", two)
    }).pipe(Effect.provide(layerMemory)))
})

for (const target of targets) {
  describe(`RateLimiter in the database on ${target.name}`, () => {
    layer(layerSql.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("admits up to the limit, refuses the rest, and counts only what it admits", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const tight = [{ scope: "all" as const, limit: 5 }, { scope: "orders" as const, limit: 2 }]
          const results = []
          for (let i = 0; i < 4; i++) results.push(yield* limiter.consume("sql:a", tight))
          assert.deepStrictEqual(results.map((r) => [r.allowed, r.scope, r.remaining]), [
            [true, "orders", 1],
            [true, "orders", 0],
            [false, "orders", 0],
            [false, "orders", 0]
          ])
          assert.isAtLeast(results[2]!.retryAfterSeconds, 59)
          const all = yield* limiter.check("sql:a", [{ scope: "all", limit: 5 }])
          assert.deepStrictEqual([all.allowed, all.remaining], [true, 2])
          // check counted nothing.
          assert.strictEqual((yield* limiter.check("sql:a", [{ scope: "all", limit: 5 }])).remaining, 2)
        }))

      it.effect("concurrent requests of one subject never exceed the limit", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const quota = [{ scope: "orders" as const, limit: 10 }]
          const results = yield* Effect.all(
            Array.from({ length: 40 }, () => limiter.consume("sql:b", quota)),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(results.filter((r) => r.allowed).length, 10)
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ total: string }>`
            SELECT sum(count) AS total FROM rate_limit_counts WHERE subject = 'sql:b'
          `
          assert.strictEqual(Number(row!.total), 10)
        }))

      it.effect("subjects are independent", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const one = [{ scope: "balance" as const, limit: 1 }]
          assert.isTrue((yield* limiter.consume("sql:c", one)).allowed)
          assert.isFalse((yield* limiter.consume("sql:c", one)).allowed)
          assert.isTrue((yield* limiter.consume("sql:d", one)).allowed)
        }))

      it.effect("release gives back one admitted request per scope, never more than were counted", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const two = [{ scope: "auth" as const, limit: 2 }, { scope: "all" as const, limit: 9 }]
          assert.isTrue((yield* limiter.consume("sql:r", two)).allowed)
          assert.isTrue((yield* limiter.consume("sql:r", two)).allowed)
          assert.isFalse((yield* limiter.consume("sql:r", two)).allowed)
          yield* limiter.release("sql:r", two)
          const again = yield* limiter.consume("sql:r", two)
          assert.deepStrictEqual([again.allowed, again.scope, again.remaining], [true, "auth", 0])
          // Three releases of two counted requests leave the count at zero, not below.
          for (let i = 0; i < 3; i++) yield* limiter.release("sql:r", two)
          assert.strictEqual((yield* limiter.check("sql:r", two)).remaining, 1)
          yield* limiter.release("sql:none", two)
        }))
    })
  })
}
