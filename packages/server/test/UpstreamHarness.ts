/**
 * Two real server processes chained: an upstream on its simulator, and a downstream whose
 * provider buys from it (through a fault proxy, when the test wants one). Each runs on its
 * own database: PGlite in its own data directory, or a fresh Postgres database when
 * TEST_DATABASE_URL is set.
 */
import { freshDatabase } from "@databundle/core/testing"
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"

/** The admin token of both processes. */
export const ADMIN_TOKEN = "adm_upstream_test_token_never_logged"

/** The databases the chained processes run on. */
export const databases: ReadonlyArray<{ readonly name: string; readonly url: string | undefined }> = [
  { name: "PGlite", url: undefined },
  ...(process.env.TEST_DATABASE_URL ? [{ name: "Postgres", url: process.env.TEST_DATABASE_URL }] : [])
]

/** One HTTP call; the body parsed as JSON. */
export const call = (
  base: string,
  method: string,
  route: string,
  options: { key?: string; admin?: boolean; body?: unknown } = {}
) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: {
        accept: "application/json",
        ...(options.key ? { "x-api-key": options.key } : {}),
        ...(options.admin ? { authorization: `Bearer ${ADMIN_TOKEN}` } : {}),
        ...(options.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
    const text = await response.text()
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    return { status: response.status, body }
  })

/** An admin call that must succeed. */
export const admin = (base: string, method: string, route: string, body?: unknown) =>
  Effect.flatMap(call(base, method, route, { admin: true, body }), (response) => {
    assert.isTrue(response.status < 300, `${method} ${route}: ${response.status} ${JSON.stringify(response.body)}`)
    return Effect.succeed(response.body)
  })

/** The environment of a process on a database of its own. */
export const databaseEnv = (url: string | undefined) =>
  Effect.gen(function*() {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-upstream-"))
    const env: Record<string, string> = { BUNDLES_DATA_DIR: dataDir, BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN }
    if (url !== undefined) env.DATABASE_URL = yield* freshDatabase(url)
    return env
  })

/** A funded account with a key. */
export const account = (base: string, name: string, cedis: number) =>
  Effect.gen(function*() {
    const created = yield* admin(base, "POST", "/admin/v1/accounts", { name })
    if (cedis > 0) yield* admin(base, "POST", `/admin/v1/accounts/${created.id}/wallet/fund`, { amount: cedis })
    const key = (yield* admin(base, "POST", `/admin/v1/accounts/${created.id}/keys`)).api_key as string
    return { id: created.id as number, key }
  })

/** The upstream: the example catalogue, and an account for the downstream with `cedis`. */
export const startUpstream = (url: string | undefined, cedis: number, extra: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const env = yield* databaseEnv(url)
    const server = yield* Processes.start({ ...env, BUNDLES_SIMULATOR_PENDING_SECONDS: "2", ...extra })
    const catalog = JSON.parse(fs.readFileSync(new URL("../../../examples/catalog.json", import.meta.url), "utf8"))
    yield* admin(server.url, "POST", "/admin/v1/catalog", catalog)
    const buyer = yield* account(server.url, "Downstream reseller", cedis)
    return { server, buyer, env }
  })

/** Fast tuning for tests: short timeouts, quick retries and polls. */
export const FAST = {
  BUNDLES_POLL_SECONDS: "0.2",
  BUNDLES_UPSTREAM_TIMEOUT_SECONDS: "1",
  BUNDLES_UPSTREAM_RETRY_SECONDS: "0.5",
  BUNDLES_UPSTREAM_POLL_SECONDS: "0.5",
  BUNDLES_UPSTREAM_BREAKER_SECONDS: "1"
}

/** A port nothing listens on. */
export const deadPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })
)

/** Waits until `check` holds, polling; fails with `what` after `seconds`. */
export const eventually = <A>(what: string, seconds: number, probe: Effect.Effect<A>, check: (a: A) => boolean) =>
  Effect.gen(function*() {
    const until = Date.now() + seconds * 1000
    while (true) {
      const value = yield* probe
      if (check(value)) return value
      if (Date.now() > until) return assert.fail(`${what}: last ${JSON.stringify(value)}`)
      yield* Effect.sleep("100 millis")
    }
  })

/** Every order of an account upstream with the given reference. */
export const upstreamOrders = (base: string, key: string, reference: string) =>
  Effect.map(
    call(base, "GET", `/api/v1/orders?reference=${encodeURIComponent(reference)}`, { key }),
    (response) => response.body.orders as Array<{ order_number: string; status: string; reference: string }>
  )

/** The ledger audit: every wallet equals its ledger, one debit per order, one refund per failed order. */
export const audit = (base: string) =>
  Effect.map(admin(base, "GET", "/admin/v1/audit"), (report) => report as { ok: boolean })

/** Runs `bundles-server admin ...args` (the built binary) against `base`; its exit code and output. */
export const cli = (base: string, ...args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [Processes.BIN, "admin", ...args, "--url", base, "--token", ADMIN_TOKEN],
        { env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
      )
    })
  )

/** An order's status as its buyer reads it on the server at `base`. */
export const orderStatus = (base: string, key: string, orderNumber: string) =>
  Effect.map(call(base, "GET", `/api/v1/orders/${orderNumber}`, { key }), (r) => r.body.order?.status as string)
