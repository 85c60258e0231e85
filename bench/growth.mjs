#!/usr/bin/env node
// Reads that must not grow with history (`pnpm bench:growth`):
//
//   node bench/growth.mjs [--orders 1000000] [--accounts 10] [--share 0.4] [--repeat 7] [--json FILE]
//
// A fresh Postgres database, migrated by our server, the example catalogue and --accounts live
// accounts; then bench/seed-growth.sql writes --orders orders over the last year with their
// ledger (the first account gets --share of them), and the ledger audit must be clean. Each read
// below is then sent --repeat times, one after the other, and its server time is the median of
// the `duration_ms` the server logged for it (found by its X-Request-Id), judged against 50 ms.
// Last, the server is restarted on the grown database: the time until /readyz answers 200.
import * as fs from "node:fs"
import * as path from "node:path"
import {
  adminClient,
  checkBinary,
  createAccount,
  DEFAULT_PG,
  fail,
  fmt,
  importCatalog,
  intOption,
  log,
  makeTempDir,
  newAdminToken,
  parseOptions,
  postgres,
  request,
  requireLoopbackPg,
  ROOT,
  runMain,
  sleep,
  startServer
} from "./lib.mjs"

const USAGE =
  `Usage: node bench/growth.mjs [--orders N] [--accounts N] [--share F] [--repeat N] [--pg URL] [--json FILE] [--keep]`
const opts = parseOptions(USAGE, {
  orders: { type: "string", default: "1000000" },
  accounts: { type: "string", default: "10" },
  share: { type: "string", default: "0.4" },
  repeat: { type: "string", default: "7" },
  pg: { type: "string", default: DEFAULT_PG },
  json: { type: "string" },
  keep: { type: "boolean", default: false }
})
const ORDERS = intOption(opts, "orders", 1000, 50_000_000)
const ACCOUNTS = intOption(opts, "accounts", 1, 1000)
const REPEAT = intOption(opts, "repeat", 1, 100)
const SHARE = Number(opts.share)
if (!(SHARE > 0 && SHARE <= 1)) fail(2, "--share is a fraction in (0, 1]")
requireLoopbackPg(opts.pg)

const TARGET_MS = 50

/** The server's logged duration of each request id in its log file. */
const loggedDurations = (file) => {
  const byId = new Map()
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue
    try {
      const entry = JSON.parse(line)
      const a = entry.annotations ?? entry
      if (a.request_id !== undefined && a.duration_ms !== undefined) byId.set(a.request_id, Number(a.duration_ms))
    } catch {
      // not a log line of ours
    }
  }
  return byId
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)]
}

async function main() {
  checkBinary()
  const pg = postgres(opts.pg)
  if (!pg.hasPsql) fail(1, "bench:growth needs psql to run bench/seed-growth.sql")
  const tmp = makeTempDir({ keep: opts.keep })
  const token = newAdminToken()
  const db = await pg.createDatabase({ keep: opts.keep })
  const start = (name) => startServer({ tmp, token, databaseUrl: db.url, name })

  let server = await start("server")
  let starts = 0
  /** Stops the server and starts it again: the time from the spawn until /readyz answers 200. */
  const restart = async () => {
    await server.stop()
    const restarted = Date.now()
    server = await start(`restart-${++starts}`)
    for (;;) {
      const ready = await request("GET", `${server.url}/readyz`, { expect: [200, 503] }).catch(() => undefined)
      if (ready?.status === 200) break
      if (Date.now() - restarted > 120_000) fail(1, "not ready within 120 s of the restart")
      await sleep(20)
    }
    return Date.now() - restarted
  }
  const admin = (...args) => adminClient(server.url, token)(...args)
  await importCatalog(admin)
  const limits = { all: 1_000_000, orders: 1_000_000, balance: 1_000_000 }
  const accounts = []
  for (let i = 0; i < ACCOUNTS; i++) accounts.push(await createAccount(admin, { name: `growth ${i + 1}`, limits }))
  const first = accounts[0]

  const emptyRestartMs = await restart()
  log(`restart before the seed: ready in ${emptyRestartMs} ms`)
  log(`seeding ${ORDERS.toLocaleString("en")} orders over ${ACCOUNTS} accounts (the first: ${SHARE * 100} %)`)
  const seeded = Date.now()
  const seedSql = fs.readFileSync(path.join(ROOT, "bench/seed-growth.sql"), "utf8")
    .replaceAll("{{ACCOUNTS}}", `{${accounts.map((a) => a.id).join(",")}}`)
    .replaceAll("{{ORDERS}}", String(ORDERS))
    .replaceAll("{{SHARE}}", String(SHARE))
  await pg.sql(seedSql, db.name)
  // As autovacuum would have long since, on a year of history: the visibility map lets the
  // indexes answer counts and skipped rows without reading the table.
  await pg.sql("VACUUM ANALYZE", db.name)
  const counts = await pg.sql(
    `SELECT (SELECT count(*) FROM orders) || ' orders, ' || (SELECT count(*) FROM ledger_entries) || ' ledger entries, '
      || (SELECT count(*) FROM orders WHERE account_id = ${first.id}) || ' of the first account'`,
    db.name
  )
  log(`seeded in ${((Date.now() - seeded) / 1000).toFixed(1)} s: ${counts}`)
  const audit = await admin("GET", "/audit")
  log(`audit: ok ${audit.ok}, ${audit.orders} orders, ${audit.ledger_entries} ledger entries`)
  if (!audit.ok) fail(1, `the audit is not clean: ${JSON.stringify(audit).slice(0, 500)}`)

  const reference = await pg.sql(
    `SELECT reference FROM orders WHERE account_id = ${first.id} AND reference IS NOT NULL ORDER BY id LIMIT 1 OFFSET 1000`,
    db.name
  )
  const phone = await pg.sql(
    `SELECT phone_number FROM orders WHERE account_id = ${first.id} ORDER BY id LIMIT 1 OFFSET 5000`,
    db.name
  )
  const day = new Date(Date.now() - 100 * 86_400_000).toISOString().slice(0, 10)
  const apiHeaders = { "x-api-key": first.apiKey }
  const adminHeaders = { authorization: `Bearer ${token}` }
  const probes = [
    ["GET /api/v1/orders (first page)", "/api/v1/orders", apiHeaders],
    ["GET /api/v1/orders?page=1000", "/api/v1/orders?page=1000", apiHeaders],
    ["GET /api/v1/orders?status=successful", "/api/v1/orders?status=successful", apiHeaders],
    ["GET /api/v1/orders?status=failed", "/api/v1/orders?status=failed", apiHeaders],
    ["GET /api/v1/orders?status=pending (none)", "/api/v1/orders?status=pending", apiHeaders],
    ["GET /api/v1/orders?reference=…", `/api/v1/orders?reference=${reference}`, apiHeaders],
    ["GET /api/v1/orders?phone_number=…", `/api/v1/orders?phone_number=${phone}`, apiHeaders],
    ["GET /api/v1/orders?from=…&to=… (one day)", `/api/v1/orders?from=${day}&to=${day}`, apiHeaders],
    ["GET /admin/v1/stats (30 days)", "/admin/v1/stats", adminHeaders],
    ["GET /admin/v1/stats?days=90", "/admin/v1/stats?days=90", adminHeaders],
    ["GET /metrics (scrape)", "/metrics", adminHeaders],
    ["GET /admin/v1/orders (first page)", "/admin/v1/orders", adminHeaders],
    ["GET /admin/v1/orders?account_id=…", `/admin/v1/orders?account_id=${first.id}`, adminHeaders],
    ["GET /admin/v1/orders?status=failed", "/admin/v1/orders?status=failed", adminHeaders],
    ["GET /admin/v1/orders?phone_number=…", `/admin/v1/orders?phone_number=${phone}`, adminHeaders],
    ["GET /admin/v1/orders?reference=…", `/admin/v1/orders?reference=${reference}`, adminHeaders]
  ]
  // The totals the filtered lists answer from the kept counts are the orders counted.
  for (
    const [pathname, headers, where] of [
      ["/api/v1/orders?status=successful", apiHeaders, `account_id = ${first.id} AND status = 'successful'`],
      ["/api/v1/orders?status=failed", apiHeaders, `account_id = ${first.id} AND status = 'failed'`],
      ["/admin/v1/orders?status=failed", adminHeaders, `mode = 'live' AND status = 'failed'`]
    ]
  ) {
    const answered = (await request("GET", `${server.url}${pathname}`, { headers })).json.pagination.total
    const counted = Number(await pg.sql(`SELECT count(*) FROM orders WHERE ${where}`, db.name))
    if (answered !== counted) fail(1, `${pathname} answered a total of ${answered}, not the ${counted} orders`)
  }
  const sent = []
  for (const [name, pathname, headers] of probes) {
    const ids = []
    for (let i = 0; i < REPEAT; i++) {
      const res = await request("GET", `${server.url}${pathname}`, { headers, expect: [200] })
      ids.push(res.headers.get("x-request-id"))
    }
    sent.push({ name, ids })
  }
  await sleep(500) // the log is written once per turn of the event loop
  const durations = loggedDurations(server.logFile)
  const results = sent.map(({ ids, name }) => ({
    name,
    ms: median(ids.map((id) => durations.get(id)).filter((d) => d !== undefined))
  }))

  log("restarting the server on the grown database")
  const restartMs = await restart()
  console.log(`\n${ORDERS.toLocaleString("en")} orders, ${ACCOUNTS} accounts; median of ${REPEAT} sends each\n`)
  console.log("| read | server time | target | |")
  console.log("|---|---:|---:|---|")
  for (const r of results) {
    const verdict = r.ms === undefined ? "n/a" : r.ms <= TARGET_MS ? "met" : "not met"
    console.log(`| ${r.name} | ${fmt(r.ms, 1)} ms | ${TARGET_MS} ms | ${verdict} |`)
  }
  console.log(
    `| restart (spawn to /readyz 200) | ${restartMs} ms | the same before the seed: ${emptyRestartMs} ms | ${
      restartMs <= emptyRestartMs * 1.5 ? "does not grow" : "grows"
    } |`
  )
  await server.stop()
  if (opts.json !== undefined) {
    fs.writeFileSync(
      opts.json,
      JSON.stringify({ orders: ORDERS, accounts: ACCOUNTS, results, restartMs, emptyRestartMs }, null, 2)
    )
  }
  return 0
}

runMain("growth", main)
