#!/usr/bin/env node
// Load test of the data bundle reseller server, with autocannon as the load generator.
//
//   pnpm bench                      # own server on a fresh Postgres database, 15 s per scenario
//   pnpm bench -- --seconds 10 --soak 60
//   pnpm bench -- --embedded        # own server on embedded PGlite instead
//   pnpm bench -- --url http://127.0.0.1:8080 --token "$BUNDLES_ADMIN_TOKEN" [--pid PID]
//
// See bench/README.md for what each figure means. Only loopback addresses are ever targeted.
import autocannon from "autocannon"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import {
  activeBundles,
  adminClient,
  apiClient,
  auditCheck,
  buildServer,
  checkBinary,
  createAccount,
  databaseCpuMeter,
  DEFAULT_PG,
  fail,
  fmt,
  importCatalog,
  intOption,
  isLoopback,
  log,
  makeTempDir,
  mb,
  newAdminToken,
  onCleanup,
  onInterrupt,
  parseOptions,
  postgres,
  printProblems,
  problem,
  problems,
  processUsage,
  readServerLog,
  reconcileOrders,
  request,
  requireLoopbackPg,
  ROOT,
  runMain,
  runState,
  startServer as spawnServer,
  treeRssKb
} from "./lib.mjs"

const FUNDS_CEDIS = 10_000_000
const LIMITS = { all: 1_000_000, orders: 1_000_000, balance: 1_000_000 }
const RSS_INTERVAL_MS = 5_000
/** Most orders whose outcome the load generator never saw that are looked up one by one afterwards. */
const MAX_LOOKUPS = 2_000
/** Acknowledged orders checked one by one (a random sample) to exist exactly once. */
const ACK_SAMPLE = 200

// ---------------------------------------------------------------------------------------------
// Options

const USAGE = `Usage: node bench/load.mjs [options]      (or: pnpm bench -- [options])

Target (default: start our own server on a fresh Postgres database, dropped afterwards)
  --pg URL            Postgres server to create the database on (default postgres://postgres@127.0.0.1:5432)
  --embedded          start our own server on embedded PGlite in a temporary directory instead
  --url URL           use a running server instead (loopback only), with
  --token TOKEN       its admin token (BUNDLES_ADMIN_TOKEN)
  --pid PID           the running server's process id, for the RSS samples (optional with --url)
  --build             rebuild packages/server/dist/bin.mjs before starting
  --workers N         start our own server with serve --workers N (Postgres only; default 1)
  --profile DIR       start our own server under node --cpu-prof, writing its profile to DIR

Load
  --seconds N         length of each measured scenario (default 15)
  --warmup N          warm-up before each scenario, not counted (default 2; 0 for none)
  --connections N     concurrent connections (default 8)
  --scenarios LIST    comma-separated, in order, from: orders, networks, bundles, balance, order, list
                      (default orders,networks)
  --soak N            after the scenarios, N seconds of load with RSS sampling (default 0: off)
  --soak-mix MIX      what the soak sends: mixed (orders, networks, balance) or orders (default mixed)
  --timeout N         per-request timeout in seconds (default 10)

Output
  --json FILE         also write every figure to FILE as JSON
  --save-networks FILE  write the body of GET /api/v1/networks to FILE (for the floor servers of bench/suite.mjs)
  --keep              keep the database / data directory and the server log (paths are printed)
  --skip-catalog      with --url: do not import examples/catalog.json (use the server's catalogue)
  --help`

const opts = parseOptions(USAGE, {
  url: { type: "string" },
  token: { type: "string" },
  pid: { type: "string" },
  embedded: { type: "boolean", default: false },
  pg: { type: "string", default: DEFAULT_PG },
  build: { type: "boolean", default: false },
  workers: { type: "string", default: "1" },
  profile: { type: "string" },
  scenarios: { type: "string", default: "orders,networks" },
  "soak-mix": { type: "string", default: "mixed" },
  seconds: { type: "string", default: "15" },
  warmup: { type: "string", default: "2" },
  connections: { type: "string", default: "8" },
  soak: { type: "string", default: "0" },
  timeout: { type: "string", default: "10" },
  json: { type: "string" },
  "save-networks": { type: "string" },
  keep: { type: "boolean", default: false },
  "skip-catalog": { type: "boolean", default: false }
})

const SECONDS = intOption(opts, "seconds", 1, 3600)
const WARMUP = intOption(opts, "warmup", 0, 60)
const CONNECTIONS = intOption(opts, "connections", 1, 1000)
const SOAK = intOption(opts, "soak", 0, 24 * 3600)
const TIMEOUT = intOption(opts, "timeout", 1, 600)
const WORKERS = intOption(opts, "workers", 1, 64)
const SCENARIOS = opts.scenarios.split(",").map((name) => name.trim()).filter((name) => name !== "")
const KNOWN_SCENARIOS = ["orders", "networks", "bundles", "balance", "order", "list"]
for (const name of SCENARIOS) {
  if (!KNOWN_SCENARIOS.includes(name)) fail(2, `unknown scenario ${name} (known: ${KNOWN_SCENARIOS.join(", ")})`)
}
if (!["mixed", "orders"].includes(opts["soak-mix"])) fail(2, "--soak-mix is mixed or orders")
if (WORKERS > 1 && (opts.embedded || opts.url !== undefined)) {
  fail(2, "--workers is for our own server on Postgres (the embedded database serves one process)")
}

if (opts.url !== undefined || opts.token !== undefined) {
  if (opts.url === undefined || opts.token === undefined) fail(2, "--url and --token go together")
  if (opts.embedded) fail(2, "--embedded starts its own server; it cannot be combined with --url")
  if (opts.profile !== undefined) fail(2, "--profile is for our own server; profile a running one with node --cpu-prof")
  let parsed
  try {
    parsed = new URL(opts.url)
  } catch {
    fail(2, `--url ${opts.url} is not a URL`)
  }
  if (parsed.protocol !== "http:") fail(2, "--url must be an http:// URL")
  if (!isLoopback(parsed.hostname)) fail(2, `--url must point at this machine (127.0.0.1), not ${parsed.hostname}`)
}
if (opts.pid !== undefined && opts.url === undefined) fail(2, "--pid is only for --url (our own server's pid is known)")
requireLoopbackPg(opts.pg)

// ---------------------------------------------------------------------------------------------
// Clean-up on SIGINT/SIGTERM: stop the load generator first (lib.mjs then cleans up)

const activeLoads = new Set()
onInterrupt(async () => {
  for (const instance of activeLoads) instance.stop()
  for (let i = 0; i < 30 && activeLoads.size > 0; i++) await sleep(100)
})

// ---------------------------------------------------------------------------------------------
// Our own server

const pg = postgres(opts.pg)

/** Starts `bundles-server serve` on a fresh database (or embedded PGlite) and a free port. */
async function startServer() {
  const tmp = makeTempDir({ keep: opts.keep })
  const token = newAdminToken()
  let database
  let databaseUrl
  if (opts.embedded) {
    database = { kind: "embedded PGlite", detail: `in ${path.join(tmp, "data")}` }
  } else {
    const created = await pg.createDatabase({ keep: opts.keep })
    databaseUrl = created.url
    // (On this machine: --pg must be a loopback address, so its processes can be counted.)
    database = {
      kind: `Postgres ${created.version}`,
      detail: `database ${created.name}`,
      local: true,
      name: created.name
    }
  }
  const server = await spawnServer({
    tmp,
    token,
    databaseUrl,
    args: WORKERS > 1 ? ["--workers", String(WORKERS)] : [],
    nodeArgs: opts.profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${path.resolve(opts.profile)}`],
    onUnexpectedExit: () => {
      for (const instance of activeLoads) instance.stop()
    }
  })
  server.database = database
  log(
    `server pid ${server.pid} listening on ${server.url} (${database.kind}, ${database.detail}${
      WORKERS > 1 ? `, ${WORKERS} workers` : ""
    })`
  )
  return server
}

// ---------------------------------------------------------------------------------------------
// The load

/** Every order body sent gets the next phone number: 02XXXXYYYY with YYYY in 0001..9998 (never 0000 or 9999). */
let phoneSeq = 0
const nextPhone = () => {
  const n = phoneSeq++
  const last4 = (n % 9998) + 1
  const first4 = Math.floor(n / 9998) % 10_000
  return `02${String(first4).padStart(4, "0")}${String(last4).padStart(4, "0")}`
}

/** What happened to every POST /orders the load generator sent. */
const orders = {
  sent: 0,
  acknowledged: 0, // 2xx seen
  rejected: 0, // 4xx seen: no order should exist
  serverErrors: 0, // 5xx seen: outcome unknown
  abandoned: 0, // in flight when a run stopped, or timed out: outcome unknown
  inflight: new Set(), // sent, no response yet
  unknown: new Set(), // outcome never seen (in flight when a run stopped, timed out) or 5xx
  rejectedSample: [],
  ackSample: [], // reservoir sample of acknowledged phone numbers
  budget: Infinity // most orders the wallet can pay for, set after seeding
}

const newTally = () => ({ statuses: {}, samples: {} })
const record = (tally, status, body) => {
  tally.statuses[status] = (tally.statuses[status] ?? 0) + 1
  if ((status < 200 || status >= 300) && (tally.samples[status]?.length ?? 0) < 3) {
    ;(tally.samples[status] ??= []).push(String(body ?? "").slice(0, 300))
  }
}

function orderRequest(ctx, tally) {
  return {
    method: "POST",
    path: "/api/v1/orders",
    headers: { "content-type": "application/json", accept: "application/json", "x-api-key": ctx.apiKey },
    setupRequest(req, context) {
      if (orders.sent >= orders.budget) {
        for (const instance of activeLoads) instance.stop()
      }
      const phone = nextPhone()
      const bundleId = ctx.bundleIds[orders.sent % ctx.bundleIds.length]
      orders.sent++
      orders.inflight.add(phone)
      context.phone = phone
      req.body = `{"bundle_id":${bundleId},"phone_number":"${phone}"}`
      return req
    },
    onResponse(status, body, context) {
      const phone = context.phone
      orders.inflight.delete(phone)
      if (status >= 200 && status < 300) {
        orders.acknowledged++
        if (orders.ackSample.length < ACK_SAMPLE) orders.ackSample.push(phone)
        else {
          const j = Math.floor(Math.random() * orders.acknowledged)
          if (j < ACK_SAMPLE) orders.ackSample[j] = phone
        }
      } else if (status >= 500) {
        orders.serverErrors++
        orders.unknown.add(phone)
      } else {
        orders.rejected++
        if (orders.rejectedSample.length < 100) orders.rejectedSample.push(phone)
      }
      record(tally, status, body)
    }
  }
}

const getRequest = (ctx, tally, pathname) => ({
  method: "GET",
  path: pathname,
  headers: { accept: "application/json", "x-api-key": ctx.apiKey },
  onResponse(status, body) {
    record(tally, status, body)
  }
})

/** One autocannon run, bounded by its duration and, should it hang, by a watchdog. */
function runLoad({ url, seconds, requests }) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections: CONNECTIONS, pipelining: 1, duration: seconds, timeout: TIMEOUT, requests },
      (error, result) => {
        clearTimeout(watchdog)
        activeLoads.delete(instance)
        // Whatever was still in flight when the run stopped has an unknown outcome.
        for (const phone of orders.inflight) orders.unknown.add(phone)
        orders.abandoned += orders.inflight.size
        orders.inflight.clear()
        if (error) reject(error)
        else resolve(result)
      }
    )
    activeLoads.add(instance)
    const watchdog = setTimeout(() => instance.stop(), (seconds + TIMEOUT + 30) * 1000)
    if (runState.interrupted) instance.stop()
  })
}

const summarize = (name, result, tally, extra = {}) => ({
  scenario: name,
  connections: CONNECTIONS,
  seconds: result.duration,
  rps: result.requests.mean,
  rpsStddev: result.requests.stddev,
  rpsMin: result.requests.min,
  rpsMax: result.requests.max,
  p50: result.latency.p50,
  p90: result.latency.p90,
  p99: result.latency.p99,
  latencyMean: result.latency.mean,
  latencyMax: result.latency.max,
  total: result.requests.total,
  sent: result.requests.sent,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  resets: result.resets,
  statuses: tally.statuses,
  samples: tally.samples,
  ...extra
})

function printScenario(s) {
  const statuses = Object.entries(s.statuses).map(([code, n]) => `${code}×${n}`).join(", ") || "none"
  console.log(
    `  requests/s (mean)  ${fmt(s.rps, 1)}  (stddev ${fmt(s.rpsStddev, 1)}, min ${s.rpsMin}, max ${s.rpsMax})`
  )
  console.log(
    `  latency            p50 ${s.p50} ms, p90 ${s.p90} ms, p99 ${s.p99} ms  (mean ${
      fmt(s.latencyMean, 1)
    }, max ${s.latencyMax})`
  )
  console.log(`  total requests     ${s.total} answered in ${s.seconds} s (${s.sent} sent)`)
  console.log(`  non-2xx            ${s.non2xx}`)
  console.log(`  errors / timeouts  ${s.errors} / ${s.timeouts}`)
  console.log(`  status codes       ${statuses}`)
  if (s.serverCpu !== undefined) {
    console.log(
      `  server CPU         ${fmt(s.serverCpu * 100)}% of one core, ${
        fmt(s.cpuMsPerRequest, 3)
      } ms per request (process.cpuUsage of the server's processes)`
    )
  }
  if (s.databaseCpu !== undefined) {
    console.log(
      `  database CPU       ${fmt(s.databaseCpu * 100)}% of one core, ${
        fmt(s.databaseCpuMsPerRequest, 3)
      } ms per request (the local Postgres processes, from /proc)`
    )
  }
  if (s.rssBefore !== undefined || s.rssAfter !== undefined) {
    console.log(`  server RSS         ${mb(s.rssBefore)} before, ${mb(s.rssMax)} at most, ${mb(s.rssAfter)} after`)
  }
  for (const [code, bodies] of Object.entries(s.samples)) {
    for (const body of bodies) console.log(`  sample ${code}: ${body}`)
  }
  if (s.non2xx > 0) problem(`${s.scenario}: ${s.non2xx} non-2xx responses (${statuses})`)
  if (s.errors > 0) problem(`${s.scenario}: ${s.errors} errors, ${s.timeouts} of them timeouts`)
}

async function scenario(target, name, makeRequests) {
  if (WARMUP > 0) {
    log(`${name}: warm-up ${WARMUP} s`)
    await runLoad({ url: target.url, seconds: WARMUP, requests: makeRequests(newTally()) })
  }
  if (runState.interrupted || target.exited) return undefined
  log(`${name}: ${SECONDS} s at ${CONNECTIONS} connections`)
  const tally = newTally()
  const rssBefore = treeRssKb(target.pid)
  let rssMax = rssBefore
  const rssTimer = setInterval(() => {
    rssMax = Math.max(rssMax ?? 0, treeRssKb(target.pid) ?? 0)
  }, 1000)
  const usageBefore = await processUsage(target.pid, target.probeDir)
  const databaseMeter = target.database.local ? databaseCpuMeter() : undefined
  let result
  try {
    result = await runLoad({ url: target.url, seconds: SECONDS, requests: makeRequests(tally) })
  } finally {
    clearInterval(rssTimer)
  }
  if (runState.interrupted) return undefined
  const databaseCpu = databaseMeter?.stop()
  const usageAfter = await processUsage(target.pid, target.probeDir)
  const cpu = usageBefore && usageAfter ? usageAfter.cpu - usageBefore.cpu : undefined
  const rssAfter = treeRssKb(target.pid)
  const s = summarize(name, result, tally, {
    rssBefore,
    rssAfter,
    rssMax: Math.max(rssMax ?? 0, rssAfter ?? 0) || undefined,
    serverCpu: cpu === undefined ? undefined : cpu / result.duration,
    cpuMsPerRequest: cpu === undefined || result.requests.total === 0 ? undefined : cpu * 1000 / result.requests.total,
    databaseCpu: databaseCpu === undefined ? undefined : databaseCpu / result.duration,
    databaseCpuMsPerRequest: databaseCpu === undefined || result.requests.total === 0
      ? undefined
      : databaseCpu * 1000 / result.requests.total
  })
  printScenario(s)
  return s
}

async function soak(target, ctx) {
  const mixed = opts["soak-mix"] === "mixed"
  const name = mixed ? "mixed: POST /orders + GET /networks + GET /balance" : "POST /orders"
  log(`soak: ${SOAK} s of ${name} at ${CONNECTIONS} connections, RSS every ${RSS_INTERVAL_MS / 1000} s`)
  const tally = { orders: newTally(), networks: newTally(), balance: newTally() }
  const all = newTally()
  const requests = mixed
    ? [
      wrapTally(orderRequest(ctx, tally.orders), all),
      wrapTally(getRequest(ctx, tally.networks, "/api/v1/networks"), all),
      wrapTally(getRequest(ctx, tally.balance, "/api/v1/balance"), all)
    ]
    : [wrapTally(orderRequest(ctx, tally.orders), all)]
  const series = []
  const started = Date.now()
  const sample = () => series.push({ t: Math.round((Date.now() - started) / 1000), kb: treeRssKb(target.pid) })
  sample()
  const timer = setInterval(sample, RSS_INTERVAL_MS)
  const usageBefore = await processUsage(target.pid, target.probeDir)
  let result
  try {
    result = await runLoad({ url: target.url, seconds: SOAK, requests })
  } finally {
    clearInterval(timer)
  }
  if (runState.interrupted) return undefined
  sample()
  const usageAfter = await processUsage(target.pid, target.probeDir)
  const cpu = usageBefore && usageAfter ? usageAfter.cpu - usageBefore.cpu : undefined
  const s = summarize(`soak ${SOAK} s (${name})`, result, all, {
    perEndpoint: Object.fromEntries(Object.entries(tally).map(([k, t]) => [k, t.statuses])),
    rss: series,
    serverCpu: cpu === undefined ? undefined : cpu / result.duration,
    cpuMsPerRequest: cpu === undefined || result.requests.total === 0 ? undefined : cpu * 1000 / result.requests.total
  })
  printScenario(s)
  for (const [endpoint, statuses] of Object.entries(s.perEndpoint)) {
    console.log(`  ${endpoint.padEnd(9)}          ${Object.entries(statuses).map(([c, n]) => `${c}×${n}`).join(", ")}`)
  }
  const known = series.filter((p) => p.kb !== undefined)
  if (known.length === 0) {
    console.log("  RSS                n/a (no pid: pass --pid with --url)")
  } else {
    console.log(`  RSS series (MB)    ${known.map((p) => `${p.t}s:${(p.kb / 1024).toFixed(1)}`).join("  ")}`)
    const first = known[0].kb
    const last = known.at(-1).kb
    const max = Math.max(...known.map((p) => p.kb))
    const minutes = (known.at(-1).t - known[0].t) / 60
    s.rssFirst = first
    s.rssLast = last
    s.rssMax = max
    console.log(
      `  RSS first/last/max ${mb(first)} / ${mb(last)} / ${mb(max)}  (growth ${mb(last - first)}` +
        `${minutes > 0 ? `, ${mb((last - first) / minutes)} per minute` : ""})`
    )
  }
  return s
}

/** Counts every response into `all` as well as the request's own tally. */
function wrapTally(req, all) {
  const inner = req.onResponse
  return {
    ...req,
    onResponse(status, body, context) {
      inner(status, body, context)
      record(all, status, body)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  console.log("Data bundle reseller server: load test")
  const cpus = os.cpus()
  const env = {
    node: process.version,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model?.trim() ?? "unknown",
    platform: `${os.type()} ${os.release()}`,
    commit: spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout?.trim() ||
      "unknown"
  }
  console.log(`node ${env.node}, ${env.cpus} CPUs (${env.cpuModel}), ${env.platform}, commit ${env.commit}`)
  env.loadBefore = os.loadavg()[0]
  console.log(`load average (1 min) before the runs: ${env.loadBefore.toFixed(2)}`)
  if (env.loadBefore > env.cpus / 2) {
    console.log("  note: the machine is already busy; the figures will be lower and noisier than on an idle machine")
  }

  // 1. The target
  let target
  if (opts.url !== undefined) {
    const pid = opts.pid === undefined ? undefined : Number(opts.pid)
    target = {
      url: opts.url.replace(/\/+$/, ""),
      token: opts.token,
      pid,
      database: { kind: "external server", detail: opts.url }
    }
    log(`using the running server at ${target.url}${pid ? ` (pid ${pid})` : " (no --pid: no RSS figures)"}`)
  } else {
    if (opts.build) buildServer()
    checkBinary()
    target = await startServer()
  }
  const admin = adminClient(target.url, target.token)

  // 2. Seeding through the admin API
  if (opts["skip-catalog"]) {
    log("catalogue import skipped (--skip-catalog)")
  } else {
    const imported = await importCatalog(admin)
    log(
      `imported examples/catalog.json: networks ${JSON.stringify(imported.networks)}, bundles ${
        JSON.stringify(imported.bundles)
      }`
    )
  }
  const exported = await admin("GET", "/catalog")
  const exportedBundles = (exported.networks ?? []).reduce((n, net) => n + (net.bundles?.length ?? 0), 0)
  log(`catalogue export: ${exported.networks?.length ?? 0} networks, ${exportedBundles} bundles`)
  const account = await createAccount(admin, {
    name: `bench ${new Date().toISOString()}`,
    funds: FUNDS_CEDIS,
    limits: LIMITS,
    note: "load test"
  })
  log(
    `account ${account.id} funded with GHS ${FUNDS_CEDIS.toLocaleString("en")}, key ${account.prefix}..., limits ${
      JSON.stringify(LIMITS)
    }`
  )
  if (opts.url !== undefined) {
    // Do not leave a funded, working key behind on someone else's server.
    onCleanup("bench key", async () => {
      await admin("DELETE", `/accounts/${account.id}/keys/${account.keyId}`)
      log(`revoked the bench key of account ${account.id}`)
    })
  }

  const apiKey = account.apiKey
  const api = apiClient(target.url, apiKey)

  // The raised limits must be in force, or the runs would measure 429s.
  for (let attempt = 0;; attempt++) {
    const r = await api("/balance")
    if (r.headers.get("x-ratelimit-limit") === String(LIMITS.all)) break
    if (attempt >= 20) {
      throw new Error(`the raised rate limits did not apply (x-ratelimit-limit ${r.headers.get("x-ratelimit-limit")})`)
    }
    await sleep(500)
  }

  // Active bundles to order: the cheapest few across the networks, so the wallet lasts.
  const active = await activeBundles(api)
  if (active.length === 0) throw new Error("no active bundle to order")
  const chosen = active.slice(0, 8)
  const maxPrice = Math.max(...chosen.map((b) => b.price))
  orders.budget = Math.floor((FUNDS_CEDIS * 0.98) / maxPrice)
  log(
    `ordering bundles ${chosen.map((b) => `${b.id} (${b.name}, GHS ${b.price})`).join(", ")}; ` +
      `at most ${orders.budget.toLocaleString("en")} orders`
  )
  const ctx = { apiKey, bundleIds: chosen.map((b) => b.id) }
  const rssStart = treeRssKb(target.pid)
  if (rssStart !== undefined) log(`server RSS after seeding: ${mb(rssStart)}`)

  // 3. The scenarios
  const results = []
  const run = async (name, makeRequests) => {
    if (runState.interrupted || target.exited) return
    console.log("")
    const s = await scenario(target, name, makeRequests)
    if (s) results.push(s)
  }
  // One order to read back in the `order` scenario, counted like every other.
  let orderNumber
  if (SCENARIOS.includes("order")) {
    const phone = nextPhone()
    orders.sent++
    const placed = await request("POST", `${target.url}/api/v1/orders`, {
      headers: { "x-api-key": apiKey },
      body: { bundle_id: ctx.bundleIds[0], phone_number: phone }
    })
    orders.acknowledged++
    orderNumber = placed.json.order.order_number
  }
  const networkId = active[0].networkId
  if (opts["save-networks"] !== undefined) {
    fs.writeFileSync(opts["save-networks"], JSON.stringify((await api("/networks")).json))
  }
  const scenarios = {
    orders: ["POST /api/v1/orders", (tally) => [orderRequest(ctx, tally)]],
    networks: ["GET /api/v1/networks", (tally) => [getRequest(ctx, tally, "/api/v1/networks")]],
    bundles: [
      "GET /api/v1/networks/{id}/bundles",
      (tally) => [getRequest(ctx, tally, `/api/v1/networks/${networkId}/bundles`)]
    ],
    balance: ["GET /api/v1/balance", (tally) => [getRequest(ctx, tally, "/api/v1/balance")]],
    order: ["GET /api/v1/orders/{order_number}", (tally) => [getRequest(ctx, tally, `/api/v1/orders/${orderNumber}`)]],
    list: ["GET /api/v1/orders?per_page=20", (tally) => [getRequest(ctx, tally, "/api/v1/orders?per_page=20")]]
  }
  for (const key of SCENARIOS) {
    const [name, makeRequests] = scenarios[key]
    // The planner's statistics as autovacuum keeps them on a served database (a Postgres may
    // run without it, as on our test machines): a table grown from empty by the last scenario
    // would otherwise be planned as empty.
    if (target.database?.name !== undefined) await pg.sql("ANALYZE", target.database.name)
    await run(name, (tally) => makeRequests(tally))
    if (results.at(-1)?.scenario === name) results.at(-1).key = key
  }

  // 4. The soak
  let soakResult
  if (SOAK > 0 && !runState.interrupted && !target.exited) {
    console.log("")
    soakResult = await soak(target, ctx)
    results.push(soakResult)
  }
  if (runState.interrupted) return 130
  if (target.exited) throw new Error("the server died during the load")

  // 5. Checks: the audit, and every acknowledged order in the database exactly once
  console.log("")
  log("checks")
  await sleep(1000) // let requests abandoned by a stopping run finish on the server
  const audit = await auditCheck(admin)

  const countFor = async (phone) => (await api(`/orders?phone_number=${phone}&per_page=1`)).json.pagination.total
  const dbTotal = (await api("/orders?per_page=1")).json.pagination.total

  const unknown = [...orders.unknown]
  const rec = await reconcileOrders({
    total: dbTotal,
    acknowledged: orders.acknowledged,
    unknown,
    rejectedSample: orders.rejectedSample,
    ackSample: orders.ackSample,
    count: countFor,
    maxLookups: MAX_LOOKUPS
  })
  const { unknownFound, unknownChecked, rejectedFound, ackMissing, ackDuplicated, expected, exact } = rec
  for (const { key, n } of rec.unknownDuplicates) problem(`phone ${key} has ${n} orders, expected at most 1`)
  if (rejectedFound > 0) problem(`${rejectedFound} orders answered with 4xx exist in the database anyway`)
  if (ackMissing > 0) problem(`${ackMissing} of ${orders.ackSample.length} sampled acknowledged orders are missing`)
  if (ackDuplicated > 0) {
    problem(`${ackDuplicated} of ${orders.ackSample.length} sampled acknowledged orders exist more than once`)
  }

  console.log(`  orders in database ${dbTotal} (GET /api/v1/orders pagination total for account ${account.id})`)
  console.log(
    `  200s seen          ${orders.acknowledged} for POST /orders (warm-ups included), ${orders.rejected} 4xx`
  )
  console.log(
    `  outcome unknown    ${unknown.length} (${orders.abandoned} in flight when a run stopped or timed out, ` +
      `${orders.serverErrors} answered 5xx); ` +
      `${unknownFound} of ${unknownChecked} looked up exist`
  )
  console.log(
    `  sampled 200s       ${orders.ackSample.length} looked up: ${ackMissing} missing, ${ackDuplicated} duplicated`
  )
  const match = rec.match
  console.log(
    `  reconciliation     ${dbTotal} in database ${
      match ? "=" : "≠"
    } ${orders.acknowledged} acknowledged + ${unknownFound} ` +
      `committed after the client gave up${rejectedFound ? ` + ${rejectedFound} rejected-but-stored` : ""} ` +
      `→ ${match ? "MATCH" : "MISMATCH"}${
        exact ? "" : ` (only ${unknownChecked} of ${unknown.length} unknowns looked up)`
      }`
  )
  if (!match) problem(`orders in database (${dbTotal}) ≠ acknowledged + committed-unknown (${expected})`)

  // Server-side view, from its request log
  let serverLog
  if (target.logFile) {
    serverLog = await readServerLog(target.logFile)
    const orderOk = serverLog.routes.get("POST /api/v1/orders 200") ?? 0
    console.log(`  server log         ${serverLog.jsonLines} JSON lines, ${serverLog.otherLines} other lines`)
    for (const [key, n] of [...serverLog.routes].sort()) console.log(`    ${key.padEnd(44)} ${n}`)
    console.log(`  server logged      ${orderOk} × 200 for POST /api/v1/orders`)
    const orderErrors = [...serverLog.routes].filter(([k]) => /^POST \/api\/v1\/orders 5\d\d$/.test(k))
      .reduce((n, [, v]) => n + v, 0)
    if (orderErrors > 0) {
      console.log(
        `  note: the server logged ${orderErrors} POST /orders as 5xx; the load generator saw ${orders.serverErrors} 5xx ` +
          `and abandoned ${orders.abandoned} requests when its runs stopped (the server logs a request whose client ` +
          `went away as 500)`
      )
    }
    for (const line of serverLog.notable.slice(0, 3)) console.log(`  log: ${line}`)
    // The start-up banner is a few plain lines; anything beyond that is unexpected in a JSON-lines log.
    if (serverLog.otherLines > 20) {
      problem(`the server log holds ${serverLog.otherLines} lines that are not JSON (a JSON-lines log was expected)`)
    }
  }

  // 6. Summary
  const rssEnd = treeRssKb(target.pid)
  env.loadAfter = os.loadavg()[0]
  const lines = []
  lines.push("")
  lines.push("### Load test results")
  lines.push("")
  lines.push(
    "| Scenario | Connections | req/s (mean) | p50 (ms) | p99 (ms) | CPU ms/req | RSS max | Requests | Non-2xx | Errors |"
  )
  lines.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const s of results) {
    lines.push(
      `| ${s.scenario} | ${s.connections} | ${fmt(s.rps, 0)} | ${s.p50} | ${s.p99} | ${fmt(s.cpuMsPerRequest, 3)} | ${
        mb(s.rssMax ?? s.rssFirst)
      } | ${s.total} | ${s.non2xx} | ${s.errors} |`
    )
  }
  lines.push("")
  lines.push(
    `Node ${env.node} · ${env.cpus} CPUs (${env.cpuModel}) · database: ${target.database.kind} · ` +
      `${SECONDS} s per scenario after a ${WARMUP} s warm-up · autocannon 9 on the same machine · ` +
      `load average ${env.loadBefore.toFixed(2)} before, ${env.loadAfter.toFixed(2)} after · commit ${env.commit} · ` +
      `${new Date().toISOString().slice(0, 10)}`
  )
  if (soakResult?.rssFirst !== undefined) {
    lines.push(
      `Server RSS during the ${SOAK} s soak: first ${mb(soakResult.rssFirst)}, last ${mb(soakResult.rssLast)}, max ${
        mb(soakResult.rssMax)
      }.`
    )
  }
  lines.push(
    `Audit ok: ${audit.ok}. Orders in the database: ${dbTotal}; 200s seen by the load generator: ${orders.acknowledged}` +
      `${unknownFound ? ` (+${unknownFound} committed while the client had stopped waiting)` : ""}.`
  )
  console.log(lines.join("\n"))

  if (opts.json) {
    const out = {
      env,
      database: target.database.kind,
      options: { seconds: SECONDS, warmup: WARMUP, connections: CONNECTIONS, soak: SOAK, timeout: TIMEOUT },
      results,
      audit,
      orders: {
        inDatabase: dbTotal,
        acknowledged: orders.acknowledged,
        rejected: orders.rejected,
        unknown: unknown.length,
        unknownFound,
        match
      },
      rss: { afterSeeding: rssStart, atEnd: rssEnd },
      serverLog: serverLog && { routes: Object.fromEntries(serverLog.routes), otherLines: serverLog.otherLines },
      problems
    }
    fs.writeFileSync(opts.json, JSON.stringify(out, null, 2))
    log(`wrote ${opts.json}`)
  }

  printProblems()
  const failed = audit.ok !== true || !match || ackMissing > 0 || ackDuplicated > 0 || rejectedFound > 0
  return failed ? 1 : 0
}

await runMain("load test", main)
