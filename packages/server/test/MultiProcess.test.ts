/**
 * Two real server processes on one Postgres database (only when TEST_DATABASE_URL is set).
 */
import { freshDatabase } from "@databundle/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"

const databaseUrl = process.env.TEST_DATABASE_URL
const ADMIN_TOKEN = "adm_multi_process_token_that_must_not_be_logged"
const DB_PASSWORD = "db-password-that-must-not-be-logged"

const call = (
  base: string,
  method: string,
  route: string,
  options: { key?: string; admin?: boolean; body?: unknown } = {}
) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: {
        ...(options.key ? { "x-api-key": options.key } : {}),
        ...(options.admin ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {}),
        ...(options.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
    return { status: response.status, body: await response.json() as any }
  })

describe.skipIf(!databaseUrl)("two server processes on one database", () => {
  it.scopedLive(
    "enforce one rate limit together, refuse a revoked key within the cache bound, and log no secrets",
    () =>
      Effect.gen(function*() {
        const fresh = new URL(yield* freshDatabase(databaseUrl!))
        // The local server trusts connections, so any password works; it must still never be logged.
        fresh.password = DB_PASSWORD
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-multi-"))
        const env = {
          DATABASE_URL: fresh.toString(),
          BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN,
          BUNDLES_DATA_DIR: dataDir,
          BUNDLES_RATE_LIMIT_STORE: "database",
          BUNDLES_AUTH_FAILURE_LIMIT: "5"
        }
        const a = yield* Processes.start(env)
        const b = yield* Processes.start(env)

        const catalog = JSON.parse(fs.readFileSync(new URL("../../../examples/catalog.json", import.meta.url), "utf8"))
        assert.strictEqual(
          (yield* call(a.url, "POST", "/admin/v1/catalog", { admin: true, body: catalog })).status,
          200
        )
        const account = (yield* call(a.url, "POST", "/admin/v1/accounts", { admin: true, body: { name: "Two" } })).body
        yield* call(a.url, "POST", `/admin/v1/accounts/${account.id}/wallet/fund`, {
          admin: true,
          body: { amount: 1000 }
        })
        yield* call(a.url, "PATCH", `/admin/v1/accounts/${account.id}`, {
          admin: true,
          body: { limits: { orders: 10 } }
        })
        const key = (yield* call(a.url, "POST", `/admin/v1/accounts/${account.id}/keys`, { admin: true })).body.api_key
        const other = (yield* call(a.url, "POST", `/admin/v1/accounts/${account.id}/keys`, { admin: true })).body

        // One limit for both processes: 20 orders alternating between them, 10 admitted.
        const statuses: Array<number> = []
        for (let i = 0; i < 20; i++) {
          const order = { bundle_id: 1, phone_number: `02400000${String(i).padStart(2, "1")}`, reference: `two-${i}` }
          statuses.push(
            (yield* call(i % 2 === 0 ? a.url : b.url, "POST", "/api/v1/orders", { key, body: order })).status
          )
        }
        assert.strictEqual(statuses.filter((s) => s === 200).length, 10, JSON.stringify(statuses))
        assert.strictEqual(statuses.filter((s) => s === 429).length, 10, JSON.stringify(statuses))

        // A key revoked through one process is refused by the other within the cache bound (2 s).
        assert.strictEqual((yield* call(b.url, "GET", "/api/v1/networks", { key: other.api_key })).status, 200)
        yield* call(a.url, "DELETE", `/admin/v1/accounts/${account.id}/keys/${other.id}`, { admin: true })
        assert.strictEqual((yield* call(a.url, "GET", "/api/v1/networks", { key: other.api_key })).status, 401)
        const revokedAt = Date.now()
        let refusedAfter = -1
        while (Date.now() - revokedAt < 5_000) {
          if ((yield* call(b.url, "GET", "/api/v1/networks", { key: other.api_key })).status === 401) {
            refusedAfter = Date.now() - revokedAt
            break
          }
          yield* Effect.sleep("100 millis")
        }
        assert.isAtLeast(refusedAfter, 0)
        assert.isAtMost(refusedAfter, 2_500)

        // Failed authentications from one address are counted across both processes: after 5 (two
        // of them the revoked key's refusals above), wrong credentials are refused with a 429,
        // while a valid key from the same address is still served.
        const failures: Array<number> = []
        for (let i = 0; i < 8; i++) {
          failures.push(
            (yield* call(i % 2 === 0 ? a.url : b.url, "GET", "/api/v1/balance", { key: `dbk_${"x".repeat(40)}` }))
              .status
          )
        }
        assert.deepStrictEqual(failures, [401, 401, 401, 429, 429, 429, 429, 429])
        const valid = yield* call(b.url, "GET", "/api/v1/balance", { key })
        assert.strictEqual(valid.status, 200)

        // Nothing secret reached either process's output.
        for (const output of [a.output(), b.output()]) {
          for (const secret of [ADMIN_TOKEN, DB_PASSWORD, key, other.api_key]) {
            assert.notInclude(output, secret)
          }
          assert.notInclude(output, "\"status\":500")
        }
        fs.rmSync(dataDir, { recursive: true, force: true })
      }),
    { timeout: 120_000 }
  )
})
