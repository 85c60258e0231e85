/**
 * Operating the server, end to end on a real port: the probes (`/healthz`, `/readyz`), the
 * Prometheus scrape (`/metrics`) and what it counts, and the JSON log lines.
 */
import { targets } from "@databundle/core/testing"
import { SqlClient } from "@effect/sql"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Logger, TestClock } from "effect"
import * as net from "node:net"
import * as Logging from "../src/Logging.js"
import * as RequestContext from "../src/RequestContext.js"
import { parseExposition, sample } from "./Exposition.js"
import { ADMIN_TOKEN, adminClient, bundlesByName, newAccount, raw, resellerClient, serverLayer } from "./Harness.js"

const scrape = Effect.gen(function*() {
  const res = yield* raw("GET", "/metrics", { bearer: ADMIN_TOKEN })
  assert.strictEqual(res.status, 200, res.text)
  assert.match(res.headers["content-type"] ?? "", /^text\/plain; version=0\.0\.4/)
  return { text: res.text, samples: parseExposition(res.text) }
})

const closedPort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

const REQUESTS = "bundles_http_request_duration_seconds_count"

for (const target of targets) {
  describe(`operations on ${target.name}`, () => {
    layer(
      serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "600", BUNDLES_RATE_LIMITS: "balance=2" }),
      { timeout: 60_000 }
    )((it) => {
      it.effect("/healthz and /readyz answer without credentials, through the route decision", () =>
        Effect.gen(function*() {
          const health = yield* raw("GET", "/healthz")
          assert.strictEqual(health.status, 200)
          assert.deepStrictEqual(health.json, { status: "ok" })
          assert.isString(health.headers["x-request-id"])
          const ready = yield* raw("GET", "/readyz")
          assert.strictEqual(ready.status, 200, ready.text)
          assert.deepStrictEqual(ready.json, {
            status: "ready",
            checks: { database: "ok", migrations: "ok", workers: "ok" }
          })
          assert.strictEqual(ready.headers["cache-control"], "no-store")
          // The route table decides them like every other path: strict spellings, 405 with Allow.
          for (const path of ["/healthz/", "/HEALTHZ", "/readyz/x", "//healthz"]) {
            assert.strictEqual((yield* raw("GET", path)).status, 404, path)
          }
          const post = yield* raw("POST", "/healthz", { body: {} })
          assert.strictEqual(post.status, 405)
          assert.strictEqual(post.headers.allow, "GET")
          assert.strictEqual(post.json.code, "method_not_allowed")
        }))

      it.effect("/readyz is 503 while the database lacks a migration this server needs", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [latest] = yield* sql<{ migration_id: number; name: string; created_at: Date }>`
            SELECT * FROM bundles_migrations ORDER BY migration_id DESC LIMIT 1`
          yield* sql`DELETE FROM bundles_migrations WHERE migration_id = ${latest!.migration_id}`
          const ready = yield* raw("GET", "/readyz").pipe(
            Effect.ensuring(Effect.orDie(sql`INSERT INTO bundles_migrations ${sql.insert(latest!)}`))
          )
          assert.strictEqual(ready.status, 503, ready.text)
          assert.strictEqual(ready.json.status, "not_ready")
          assert.strictEqual(ready.json.checks.database, "ok")
          assert.match(ready.json.checks.migrations, /^pending: the database has \d+, this server needs \d+$/)
          assert.strictEqual((yield* raw("GET", "/readyz")).status, 200)
        }))

      it.effect("/metrics needs the admin token", () =>
        Effect.gen(function*() {
          const anonymous = yield* raw("GET", "/metrics")
          assert.strictEqual(anonymous.status, 401)
          assert.strictEqual(anonymous.json.code, "unauthorized")
          assert.strictEqual((yield* raw("GET", "/metrics", { bearer: "adm_wrong" })).status, 401)
          assert.strictEqual((yield* raw("GET", "/metrics", { key: "bk_live_nope" })).status, 401)
        }))

      it.effect("counts requests by route template and status, never by raw path", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const account = yield* newAccount(100_000n)
          const client = yield* resellerClient(account.key)
          const before = (yield* scrape).samples
          const bundle = [...bundles.values()][0]!
          const placed = yield* client.orders.place({
            payload: { bundle_id: bundle.id, phone_number: "0241239999", reference: "ops-metrics-1" }
          })
          const number = placed.order.order_number
          yield* client.orders.get({ path: { order_number: number } })
          yield* raw("GET", "/api/v1/no-such-thing-7f3a", { key: account.key })
          const after = yield* scrape
          const delta = (labels: Record<string, string>) =>
            sample(after.samples, REQUESTS, labels) - sample(before, REQUESTS, labels)
          assert.strictEqual(delta({ method: "POST", route: "/api/v1/orders", status: "200" }), 1, after.text)
          assert.strictEqual(delta({ method: "GET", route: "/api/v1/orders/:order_number", status: "200" }), 1)
          assert.strictEqual(delta({ route: "unmatched", status: "404" }), 1)
          assert.notInclude(after.text, number)
          assert.notInclude(after.text, "no-such-thing")
          // The histogram's buckets are there, the largest holding every request.
          assert.strictEqual(
            sample(after.samples, "bundles_http_request_duration_seconds_bucket", {
              method: "POST",
              route: "/api/v1/orders",
              status: "200",
              le: "+Inf"
            }),
            sample(after.samples, REQUESTS, { method: "POST", route: "/api/v1/orders", status: "200" })
          )
          // The database's figures: the order is pending, and young.
          assert.isAtLeast(sample(after.samples, "bundles_orders", { status: "pending" }), 1)
          // Read from the daily rollups and the pending index, they are the orders counted.
          const sql = yield* SqlClient.SqlClient
          const counted = yield* sql<{ status: string; n: number }>`
            SELECT status, count(*)::int AS n FROM orders WHERE mode = 'live' GROUP BY status`
          for (const status of ["pending", "successful", "failed"]) {
            assert.strictEqual(
              sample(after.samples, "bundles_orders", { status }),
              counted.find((row) => row.status === status)?.n ?? 0,
              status
            )
          }
          assert.isAtLeast(sample(after.samples, "bundles_pending_orders", { age: "under_1m" }), 1)
          assert.isAbove(sample(after.samples, "bundles_oldest_pending_order_age_seconds"), 0)
          assert.include(after.text, "process_cpu_user_seconds_total")
        }))

      it.effect("counts 429s by scope, failed authentications by credentials, and refunds", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const account = yield* newAccount(100_000n)
          const client = yield* resellerClient(account.key)
          const before = (yield* scrape).samples
          for (let i = 0; i < 3; i++) yield* raw("GET", "/api/v1/balance", { key: account.key })
          yield* raw("GET", "/api/v1/balance", { key: "bk_live_0000000000000000000000000000" })
          yield* raw("GET", "/admin/v1/accounts", { bearer: "adm_wrong" })
          const failed = yield* client.orders.place({
            payload: { bundle_id: [...bundles.values()][0]!.id, phone_number: "0241230000", reference: "ops-refund" }
          })
          assert.strictEqual(failed.order.status, "failed")
          // A test key's refunded order is play money: not counted.
          const made = yield* raw("POST", `/admin/v1/accounts/${account.id}/keys?mode=test`, { bearer: ADMIN_TOKEN })
          assert.strictEqual(made.status, 201, made.text)
          const testOrder = yield* raw("POST", "/api/v1/orders", {
            key: made.json.api_key,
            body: { bundle_id: [...bundles.values()][0]!.id, phone_number: "0240000000" }
          })
          assert.strictEqual(testOrder.json.order.status, "failed", testOrder.text)
          const after = (yield* scrape).samples
          const delta = (name: string, labels: Record<string, string> = {}) =>
            sample(after, name, labels) - sample(before, name, labels)
          assert.strictEqual(delta("bundles_rate_limited_total", { scope: "balance" }), 1)
          assert.strictEqual(delta("bundles_auth_failures_total", { credentials: "api_key" }), 1)
          assert.strictEqual(delta("bundles_auth_failures_total", { credentials: "admin_token" }), 1)
          assert.strictEqual(delta("bundles_refunded_orders"), 1)
          // The figure kept with each refund is what the ledger says.
          const sql = yield* SqlClient.SqlClient
          const [ledger] = yield* sql<{ count: number }>`
            SELECT count(*)::int AS count FROM ledger_entries l JOIN orders o ON o.id = l.order_id
            WHERE l.reason = 'refund' AND o.mode = 'live'`
          assert.strictEqual(sample(after, "bundles_refunded_orders"), Number(ledger!.count))
          assert.strictEqual(delta(REQUESTS, { route: "/api/v1/balance", status: "429" }), 1)
        }))

      it.effect("shows the webhook backlog and times each delivery attempt", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const account = yield* newAccount(100_000n)
          const admin = yield* adminClient
          const port = yield* closedPort
          yield* admin.accounts.update({
            path: { account_id: account.id },
            payload: { webhook_url: `http://127.0.0.1:${port}/hook` }
          })
          const client = yield* resellerClient(account.key)
          const before = (yield* scrape).samples
          yield* client.orders.place({
            payload: { bundle_id: [...bundles.values()][0]!.id, phone_number: "0241234567", reference: "ops-hook" }
          })
          // The receiver refuses connections: the first attempt fails, and the event waits for its retry.
          let after = before
          for (let i = 0; i < 100; i++) {
            // The workers poll on the test's clock, which moves only when told to.
            yield* TestClock.adjust("1 second")
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
            after = (yield* scrape).samples
            const attempts = sample(after, "bundles_webhook_attempt_duration_seconds_count", { outcome: "error" })
            if (attempts > sample(before, "bundles_webhook_attempt_duration_seconds_count", { outcome: "error" })) break
          }
          assert.isAbove(
            sample(after, "bundles_webhook_attempt_duration_seconds_count", { outcome: "error" }),
            sample(before, "bundles_webhook_attempt_duration_seconds_count", { outcome: "error" }),
            JSON.stringify(after.filter((s) => s.name.includes("webhook") && !s.name.includes("bucket")))
          )
          assert.isAtLeast(sample(after, "bundles_webhook_backlog", { state: "waiting" }), 1)
          assert.isAbove(sample(after, "bundles_oldest_webhook_event_age_seconds"), 0)
        }), 30_000)
    })
  })
}

describe("log lines", () => {
  it.live("are JSON without fiber ids or empty spans, and carry the request id of the request they belong to", () => {
    const lines: Array<string> = []
    const capture = Logger.replace(Logger.defaultLogger, Logger.map(Logging.jsonLine, (line) => lines.push(line)))
    return Effect.gen(function*() {
      yield* Effect.logWarning("inside a request").pipe(
        Effect.annotateLogs({ detail: 1 }),
        Effect.locally(RequestContext.current, { id: "req_0123456789abcdef", accountId: undefined })
      )
      yield* Effect.logInfo("outside any request")
      yield* Effect.logInfo("in a span").pipe(Effect.withLogSpan("step"))
      const [inside, outside, spanned] = lines.map((line) => JSON.parse(line))
      assert.strictEqual(lines.length, 3)
      assert.deepStrictEqual(Object.keys(inside).sort(), ["annotations", "logLevel", "message", "timestamp"])
      assert.deepStrictEqual(inside.annotations, { request_id: "req_0123456789abcdef", detail: 1 })
      assert.strictEqual(inside.message, "inside a request")
      assert.deepStrictEqual(outside.annotations, {})
      assert.notInclude(lines.join("\n"), "fiberId")
      assert.isNumber(spanned.spans.step)
    }).pipe(Effect.provide(capture))
  })
})
