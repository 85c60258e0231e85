/**
 * `bundles-server backup` and `restore`, as an operator runs them on the built binary: orders
 * placed on a demo server (successful, failed and refunded, still pending), a backup refused
 * while the server holds the data directory, taken after a stop, restored into a new data
 * directory (never over a database), and a server started there that finds the same money
 * and orders and passes the audit. The embedded database only: on Postgres both refuse and
 * name pg_dump.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"

const ADMIN_TOKEN = "adm_backup_test_token_0123456789abcdef"

/** Runs the binary to its end: exit status and output. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
    execFile(process.execPath, [Processes.BIN, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }, (
      error,
      stdout,
      stderr
    ) => resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })))
  })

const call = (url: string, method: string, route: string, options: { key?: string; body?: unknown } = {}) =>
  Effect.promise(async () => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: {
        accept: "application/json",
        ...(options.key === undefined ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { "x-api-key": options.key }),
        ...(options.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
    return { status: res.status, body: await res.json() as any }
  })

/** What a restore must give back: the money, every order and its state, and a clean audit. */
const snapshot = (url: string, key: string) =>
  Effect.gen(function*() {
    const balance = (yield* call(url, "GET", "/api/v1/balance", { key })).body.balance
    const orders = (yield* call(url, "GET", "/api/v1/orders?per_page=50", { key })).body.orders
      .map((o: any) => `${o.order_number} ${o.status} ${o.amount_paid}`)
    const audit = (yield* call(url, "GET", "/admin/v1/audit")).body
    return { balance, orders, audit }
  })

describe("backup and restore of the embedded database", () => {
  it.effect(
    "orders placed, backed up after a stop, restored into a new data dir: the same money, and the audit passes",
    () =>
      Effect.gen(function*() {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-backup-"))
        const first = path.join(tmp, "first")
        const second = path.join(tmp, "second")
        const file = path.join(tmp, "bundles.tgz")
        const env = (dataDir: string) => ({
          BUNDLES_DATA_DIR: dataDir,
          BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN,
          BUNDLES_SIMULATOR_PENDING_SECONDS: "3600"
        })

        const before = yield* Effect.scoped(Effect.gen(function*() {
          const server = yield* Processes.start(env(first), ["--demo"])
          const key = fs.readFileSync(path.join(first, "demo-api-key"), "utf8").trim()
          const networks = (yield* call(server.url, "GET", "/api/v1/networks", { key })).body.networks
          const bundles = (yield* call(server.url, "GET", `/api/v1/networks/${networks[0].id}/bundles`, { key })).body
            .bundles
          const bundleId = bundles.find((b: any) => b.is_active).id
          for (const [i, phone] of ["0241234567", "0241110000", "0241119999", "0209876543"].entries()) {
            const placed = yield* call(server.url, "POST", "/api/v1/orders", {
              key,
              body: { bundle_id: bundleId, phone_number: phone, reference: `backup-${i}` }
            })
            assert.strictEqual(placed.status, 200, JSON.stringify(placed.body))
          }
          // While the server holds the data directory, a backup is refused, naming its process.
          const refused = yield* cli(["backup", file], env(first))
          assert.strictEqual(refused.code, 1)
          assert.include(refused.stderr, `in use by process ${server.child.pid}`)
          assert.isFalse(fs.existsSync(file))
          return { key, ...yield* snapshot(server.url, key) }
        }))
        assert.isTrue(before.audit.ok, JSON.stringify(before.audit))
        assert.sameMembers(before.orders.map((o: string) => o.split(" ")[1]), [
          "successful",
          "failed",
          "pending",
          "successful"
        ])

        const backedUp = yield* cli(["backup", file], env(first))
        assert.strictEqual(backedUp.code, 0, backedUp.stderr)
        assert.include(backedUp.stdout, `to ${file}`)
        assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)

        const restored = yield* cli(["restore", file], env(second))
        assert.strictEqual(restored.code, 0, restored.stderr)
        assert.include(restored.stdout, "(4 orders)")
        // Never over a database.
        const again = yield* cli(["restore", file], env(second))
        assert.strictEqual(again.code, 1)
        assert.include(again.stderr, "already holds a database")
        // Not a backup: refused, and the data directory left without a half-made database.
        const junk = path.join(tmp, "junk.tgz")
        fs.writeFileSync(junk, "not a backup")
        const third = path.join(tmp, "third")
        const bad = yield* cli(["restore", junk], env(third))
        assert.strictEqual(bad.code, 1)
        assert.isFalse(fs.existsSync(path.join(third, "pgdata")))

        const after = yield* Effect.scoped(Effect.gen(function*() {
          const server = yield* Processes.start(env(second))
          return yield* snapshot(server.url, before.key)
        }))
        assert.deepStrictEqual(after.balance, before.balance)
        assert.deepStrictEqual(after.orders, before.orders)
        assert.isTrue(after.audit.ok, JSON.stringify(after.audit))
        fs.rmSync(tmp, { recursive: true, force: true })
      }),
    180_000
  )

  it.effect("on Postgres, both refuse and name pg_dump", () =>
    Effect.gen(function*() {
      for (const command of ["backup", "restore"]) {
        const result = yield* cli([command, Processes.BIN], { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" })
        assert.strictEqual(result.code, 1)
        assert.include(result.stderr, "pg_dump")
      }
    }))
})
