/**
 * Pacing against the server's real limiter (slow: a whole rate-limit window, so it runs once,
 * on the first database): with an orders limit of 2 a minute, a file of 3 rows buys two at
 * once, then waits for the window to move on, as the `X-RateLimit-*` headers tell, instead
 * of being refused.
 */
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { envFor, expectCode, ordersOf, runCli, startProxy, startServer, tempDir, type TestServer } from "./Harness.js"

describe(`bulk pacing on ${targets[0]!.name}`, () => {
  let server: TestServer
  let proxy: Awaited<ReturnType<typeof startProxy>>
  beforeAll(async () => {
    server = await startServer(targets[0]!)
    proxy = await startProxy(server.origin)
  })
  afterAll(async () => {
    await proxy?.close()
    await server?.dispose()
  })

  it.scopedLive("waits for the window instead of meeting a 429", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { key } = yield* Effect.promise(() =>
        server.account({ funds: 100_000n, limits: { orders: 2, all: 1000, balance: 1000 } })
      )
      const file = path.join(dir, "paced.csv")
      const id = server.bundle("MTN 1GB").id
      fs.writeFileSync(file, [1, 2, 3].map((i) => `${id},024444000${i}`).join("\n"))
      const started = Date.now()
      const run = expectCode(yield* runCli(["bulk", file], envFor(proxy.baseUrl, key, dir)), 0)
      const elapsed = Date.now() - started
      assert.include(run.stderr, "rate limit reached (2 a minute): waiting")
      assert.notInclude(run.stderr, "rate limited")
      assert.strictEqual(proxy.count("POST", "/api/v1/orders"), 3, "no order was refused")
      assert.isAtLeast(elapsed, 45_000)
      assert.isAtMost(elapsed, 75_000)
      assert.strictEqual((yield* Effect.promise(() => ordersOf(server.baseUrl, key))).length, 3)
    }), 120_000)
})
