/**
 * `bundles wallet transfer` end to end against the whole server: earnings moved to main, the
 * 400 when the wallet holds less, a usage error for a bad amount, and a key that moves once.
 */
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ADMIN_TOKEN, envFor, expectCode, json, runCli, startServer, tempDir, type TestServer } from "./Harness.js"

for (const target of targets) {
  describe(`wallet transfer on ${target.name}`, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startServer(target)
    })
    afterAll(() => server?.dispose())

    const fundAgent = (id: number, cedis: number) =>
      Effect.promise(() =>
        fetch(`${server.origin}/admin/v1/accounts/${id}/wallet/fund`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ amount: cedis, wallet: "agent" })
        })
      )

    it.scopedLive("moves agent earnings to main, refuses more than the wallet holds, and replays a key", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const holder = yield* Effect.promise(() => server.account({ funds: 0n }))
        yield* fundAgent(holder.id, 5)
        const env = envFor(server.baseUrl, holder.key, dir)
        const text = expectCode(yield* runCli(["wallet", "transfer", "--from", "agent", "2.50"], env), 0)
        assert.include(text.stdout, "Moved GHS 2.50 from the agent wallet to the main wallet.")
        assert.match(text.stdout, /Main wallet\s+GHS 2\.50/)
        assert.match(text.stdout, /Agent wallet\s+GHS 2\.50/)
        const body = json(
          expectCode(
            yield* runCli(["wallet", "transfer", "--from", "agent", "1", "--idempotency-key", "k-1", "--json"], env),
            0
          )
        )
        assert.deepStrictEqual(body.balance, { main: 3.5, referral: 0, agent: 1.5 })
        const again = expectCode(
          yield* runCli(["wallet", "transfer", "--from", "agent", "1", "--idempotency-key", "k-1"], env),
          0
        )
        assert.include(again.stdout, "already done with this key")
        assert.match(again.stdout, /Agent wallet\s+GHS 1\.50/)
        const short = yield* runCli(["wallet", "transfer", "--from", "agent", "9"], env)
        expectCode(short, 1)
        assert.match(short.stderr, /GHS 1\.50/)
        const shortJson = json(
          expectCode(yield* runCli(["wallet", "transfer", "--from", "agent", "9", "--json"], env), 1)
        )
        assert.strictEqual(shortJson.success, false)
        assert.strictEqual(shortJson.balance, 1.5)
        assert.strictEqual(shortJson.required, 9)
        for (const args of [["--from", "agent", "0"], ["--from", "agent", "1.234"], ["--from", "main", "1"], ["1"]]) {
          expectCode(yield* runCli(["wallet", "transfer", ...args], env), 2)
        }
        const balance = json(expectCode(yield* runCli(["balance", "--json"], env), 0))
        assert.deepStrictEqual(balance.balance, { main: 3.5, referral: 0, agent: 1.5 })
      }))
  })
}
