/**
 * Failed authentications are limited per client address and per API key prefix, for API keys
 * and the admin token alike; valid credentials are never refused because of failures, so one
 * misconfigured app behind a carrier's shared address cannot lock out everyone behind it.
 */
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ADMIN_TOKEN, newAccount, raw, serverLayer } from "./Harness.js"

/** Requests as if from `address`, through the trusted local proxy. */
const from = (address: string) => ({ "x-forwarded-for": address })

for (const target of targets) {
  describe(`failed authentications on ${target.name}`, () => {
    layer(
      serverLayer(target, { BUNDLES_AUTH_FAILURE_LIMIT: "4", BUNDLES_TRUSTED_PROXIES: "127.0.0.1,::1" }),
      { timeout: 60_000, excludeTestServices: true }
    )((it) => {
      it.effect("a flood of bad keys and tokens from one address: valid keys and the admin token from it still work", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(1000n)
          const shared = from("198.51.100.7")
          const statuses: Array<number> = []
          for (let i = 0; i < 3; i++) {
            statuses.push((yield* raw("GET", "/admin/v1/accounts", { bearer: "wrong", headers: shared })).status)
          }
          statuses.push(
            (yield* raw("GET", "/api/v1/balance", { key: `dbk_${"x".repeat(40)}`, headers: shared })).status
          )
          assert.deepStrictEqual(statuses, [401, 401, 401, 401])
          // Past the limit, failures from the address are refused before they are answered…
          for (let i = 0; i < 20; i++) {
            const flood = yield* raw("GET", "/api/v1/balance", {
              key: `dbk_${String(i).padEnd(40, "y")}`,
              headers: shared
            })
            assert.strictEqual(flood.status, 429, flood.text)
            assert.isAbove(Number(flood.headers["retry-after"]), 0)
            assert.strictEqual(flood.json.retry_after, Number(flood.headers["retry-after"]))
          }
          const wrongAdmin = yield* raw("GET", "/admin/v1/accounts", { bearer: "wrong", headers: shared })
          assert.strictEqual(wrongAdmin.status, 429)
          // …while valid credentials from the same address are served, admin and reseller alike.
          assert.strictEqual(
            (yield* raw("GET", "/admin/v1/accounts", { bearer: ADMIN_TOKEN, headers: shared })).status,
            200
          )
          const balance = yield* raw("GET", "/api/v1/balance", { key: account.key, headers: shared })
          assert.strictEqual(balance.status, 200, balance.text)
          // Requests without credentials are not affected, and other addresses not at all.
          assert.strictEqual((yield* raw("GET", "/api/v1/balance", { headers: shared })).status, 401)
          const elsewhere = yield* raw("GET", "/admin/v1/accounts", { bearer: "wrong", headers: from("198.51.100.8") })
          assert.strictEqual(elsewhere.status, 401)
        }))

      it.effect("one key prefix guessed from many addresses is limited too", () =>
        Effect.gen(function*() {
          const statuses: Array<number> = []
          for (let i = 0; i < 6; i++) {
            const key = `dbk_Zq9Zq9Zq${String(i).padStart(32, "0")}`
            statuses.push((yield* raw("GET", "/api/v1/balance", { key, headers: from(`203.0.113.${i + 1}`) })).status)
          }
          assert.deepStrictEqual(statuses, [401, 401, 401, 401, 429, 429])
          const other = yield* raw("GET", "/api/v1/balance", {
            key: `dbk_${"w".repeat(40)}`,
            headers: from("203.0.113.50")
          })
          assert.strictEqual(other.status, 401)
        }))
    })
  })
}
