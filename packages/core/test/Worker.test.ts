/**
 * The workers' supervision: while passes fail, one line when the failures start and one when
 * they stop, never one per attempt, and waits that double up to the bound.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Logger, TestClock } from "effect"
import * as Worker from "../src/Worker.js"

describe("Worker.supervise", () => {
  it("backs off: the poll interval doubled per failure, at most 30 s", () => {
    assert.deepStrictEqual(
      [1, 2, 3, 4, 5, 6, 7, 40].map((n) => Duration.toSeconds(Worker.backoff("1 second", n))),
      [1, 2, 4, 8, 16, 30, 30, 30]
    )
  })

  it.effect("a minute of failures is two log lines and a handful of attempts, not sixty", () =>
    Effect.gen(function*() {
      const lines: Array<{ level: string; message: string; annotations: Record<string, unknown> }> = []
      const logger = Logger.make(({ annotations, logLevel, message }) =>
        lines.push({
          level: logLevel.label,
          message: String(Array.isArray(message) ? message[0] : message),
          annotations: Object.fromEntries(annotations)
        })
      )
      let down = false
      let attempts = 0
      const pass = Effect.suspend(() => {
        attempts++
        return down ? Effect.die(new Error("connection refused")) : Effect.void
      })
      const fiber = yield* Worker.supervise("test worker", pass, { interval: "1 second" }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Effect.fork
      )
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(attempts, 11)
      assert.deepStrictEqual(lines, [])

      down = true
      attempts = 0
      yield* TestClock.adjust("60 seconds")
      // Waits of 1, 2, 4, 8, 16, 30 s after each failure: 6 attempts in the minute, plus the first.
      assert.isAtMost(attempts, 7)
      assert.isAtLeast(attempts, 5)
      assert.deepStrictEqual(lines.map((l) => [l.level, l.message]), [
        ["WARN", "test worker failing; retrying with back-off until it recovers"]
      ])
      assert.strictEqual(lines[0]!.annotations.error, "connection refused")

      down = false
      yield* TestClock.adjust("30 seconds")
      assert.deepStrictEqual(lines.map((l) => [l.level, l.message]), [
        ["WARN", "test worker failing; retrying with back-off until it recovers"],
        ["INFO", "test worker recovered"]
      ])
      assert.isAtLeast(Number(lines[1]!.annotations.failures), 5)
      // Back to the poll interval.
      attempts = 0
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(attempts, 5)
      yield* Fiber.interrupt(fiber)
    }))
})
