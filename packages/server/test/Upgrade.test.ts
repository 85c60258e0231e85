/**
 * An upgrade, on the built binary: the data directory of an older build (commit cd0766c, the
 * last before migration 0016; how it was made: fixtures/README.md) holds a demo account and
 * five orders (successful, failed and refunded, pending). Restored and served by this
 * build, it gets every newer migration once (0016 fills each account's order count from the
 * orders there), keeps its money and orders, passes the audit, takes new orders, and a
 * second start applies nothing.
 */
import { Migrations } from "@databundle/core"
import { assert, describe, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as zlib from "node:zlib"
import * as Processes from "./Processes.js"

const FIXTURE = fileURLToPath(new URL("fixtures/datadir-cd0766c.tar.br", import.meta.url))
const ADMIN_TOKEN = "adm_upgrade_fixture_token_0123456789abcdef"

const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
    execFile(process.execPath, [Processes.BIN, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }, (
      error,
      stdout,
      stderr
    ) => resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })))
  })

const call = (url: string, method: string, route: string, key?: string, body?: unknown) =>
  Effect.promise(async () => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: {
        accept: "application/json",
        ...(key === undefined ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { "x-api-key": key }),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: res.status, body: await res.json() as any }
  })

/** The migrations table, read with the server stopped. */
const applied = (pgdata: string) =>
  Effect.promise(async () => {
    const db = await PGlite.create(pgdata)
    try {
      const result = await db.query<{ migration_id: number; created_at: string }>(
        `SELECT migration_id, created_at::text AS created_at FROM ${Migrations.MIGRATIONS_TABLE} ORDER BY migration_id`
      )
      return result.rows
    } finally {
      await db.close()
    }
  })

describe("upgrade from an older build's data directory", () => {
  it.effect(
    "migrations run once, money and orders are kept, the audit passes, new orders work",
    () =>
      Effect.gen(function*() {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-upgrade-"))
        const dataDir = path.join(tmp, "data")
        const backup = path.join(tmp, "old.tgz")
        fs.writeFileSync(backup, zlib.gzipSync(zlib.brotliDecompressSync(fs.readFileSync(FIXTURE))))
        const env = {
          BUNDLES_DATA_DIR: dataDir,
          BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN,
          BUNDLES_SIMULATOR_PENDING_SECONDS: "86400"
        }
        const restored = yield* cli(["restore", backup], env)
        assert.strictEqual(restored.code, 0, restored.stderr)
        assert.include(restored.stdout, "(5 orders)")

        const before = yield* applied(path.join(dataDir, "pgdata"))
        const known = Object.keys(Migrations.migrations).map((key) => Number(key.slice(0, 4)))
        assert.deepStrictEqual(before.map((row) => row.migration_id), known.filter((id) => id < 16))

        const upgraded = yield* Effect.scoped(Effect.gen(function*() {
          const server = yield* Processes.start(env)
          const ready = yield* call(server.url, "GET", "/readyz")
          assert.strictEqual(ready.status, 200, JSON.stringify(ready.body))
          const audit = (yield* call(server.url, "GET", "/admin/v1/audit")).body
          const accounts = (yield* call(server.url, "GET", "/admin/v1/accounts")).body.accounts
          return { audit, accounts, output: server.output(), url: server.url }
        }))
        assert.isTrue(upgraded.audit.ok, JSON.stringify(upgraded.audit))
        assert.strictEqual(upgraded.audit.orders, 5)
        assert.deepStrictEqual(upgraded.accounts.map((a: any) => [a.name, a.balance.main]), [["Demo Reseller", 478]])

        const after = yield* applied(path.join(dataDir, "pgdata"))
        assert.deepStrictEqual(after.map((row) => row.migration_id), known)
        // The old ones were not run again.
        assert.deepStrictEqual(after.slice(0, before.length), before)

        // A second start applies nothing; the order count 0016 filled is right; new orders work.
        yield* Effect.scoped(Effect.gen(function*() {
          const server = yield* Processes.start(env)
          const account = upgraded.accounts[0]
          const made = (yield* call(server.url, "POST", `/admin/v1/accounts/${account.id}/keys`)).body
          const listed = (yield* call(server.url, "GET", "/api/v1/orders?per_page=50", made.api_key)).body
          assert.strictEqual(listed.pagination.total, 5)
          assert.sameMembers(listed.orders.map((o: any) => o.status), [
            "successful",
            "failed",
            "pending",
            "successful",
            "successful"
          ])
          const networks = (yield* call(server.url, "GET", "/api/v1/networks", made.api_key)).body.networks
          const bundles = (yield* call(server.url, "GET", `/api/v1/networks/${networks[0].id}/bundles`, made.api_key))
            .body.bundles
          const placed = yield* call(server.url, "POST", "/api/v1/orders", made.api_key, {
            bundle_id: bundles.find((b: any) => b.is_active).id,
            phone_number: "0241234567",
            reference: "after-upgrade"
          })
          assert.strictEqual(placed.status, 200, JSON.stringify(placed.body))
          const total = (yield* call(server.url, "GET", "/api/v1/orders", made.api_key)).body.pagination.total
          assert.strictEqual(total, 6)
          const audit = (yield* call(server.url, "GET", "/admin/v1/audit")).body
          assert.isTrue(audit.ok, JSON.stringify(audit))
        }))
        assert.deepStrictEqual(yield* applied(path.join(dataDir, "pgdata")), after)
        fs.rmSync(tmp, { recursive: true, force: true })
      }),
    240_000
  )
})
