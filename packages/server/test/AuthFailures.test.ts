/**
 * Failed authentications are limited per client address, for API keys and the admin token
 * alike; a blocked address is refused before its credentials are looked at.
 */
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ADMIN_TOKEN, newAccount, raw, serverLayer } from "./Harness.js"

for (const target of targets) {
  describe(`failed authentications on ${target.name}`, () => {
    layer(serverLayer(target, { BUNDLES_AUTH_FAILURE_LIMIT: "4" }), { timeout: 60_000, excludeTestServices: true })(
      (it) => {
        it.effect("wrong admin tokens and unknown keys count together; past the limit even good ones get a 429", () =>
          Effect.gen(function*() {
            // Set up before the address is blocked.
            const account = yield* newAccount(1000n)
            const statuses: Array<number> = []
            for (let i = 0; i < 3; i++) {
              statuses.push((yield* raw("GET", "/admin/v1/accounts", { bearer: "wrong" })).status)
            }
            statuses.push((yield* raw("GET", "/api/v1/balance", { key: `dbk_${"x".repeat(40)}` })).status)
            assert.deepStrictEqual(statuses, [401, 401, 401, 401])
            // The limit is reached: good credentials are refused without being looked at.
            const admin = yield* raw("GET", "/admin/v1/accounts", { bearer: ADMIN_TOKEN })
            assert.strictEqual(admin.status, 429)
            assert.isAbove(Number(admin.headers["retry-after"]), 0)
            assert.strictEqual(admin.json.retry_after, Number(admin.headers["retry-after"]))
            assert.strictEqual((yield* raw("GET", "/api/v1/balance", { key: account.key })).status, 429)
            // Requests without credentials are not affected.
            assert.strictEqual((yield* raw("GET", "/api/v1/balance")).status, 401)
          }))
      }
    )
  })
}
