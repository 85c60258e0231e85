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
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const SERVER_DIR = path.join(ROOT, "packages/server")
const SERVER_BIN = path.join(SERVER_DIR, "dist/bin.mjs")
const CATALOG_FILE = path.join(ROOT, "examples/catalog.json")
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

Load
  --seconds N         length of each measured scenario (default 15)
  --warmup N          warm-up before each scenario, not counted (default 2; 0 for none)
  --connections N     concurrent connections (default 8)
  --soak N            after the scenarios, N seconds of mixed load with RSS sampling (default 0: off)
  --timeout N         per-request timeout in seconds (default 10)

Output
  --json FILE         also write every figure to FILE as JSON
  --keep              keep the database / data directory and the server log (paths are printed)
  --skip-catalog      with --url: do not import examples/catalog.json (use the server's catalogue)
  --help`

// `pnpm bench -- --seconds 10` hands the script a leading "--"; `pnpm bench --seconds 10` does not.
const argv = process.argv.slice(2)
if (argv[0] === "--") argv.shift()

let opts
try {
  opts = parseArgs({
    args: argv,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      pid: { type: "string" },
      embedded: { type: "boolean", default: false },
      pg: { type: "string", default: "postgres://postgres@127.0.0.1:5432" },
      build: { type: "boolean", default: false },
      seconds: { type: "string", default: "15" },
      warmup: { type: "string", default: "2" },
      connections: { type: "string", default: "8" },
      soak: { type: "string", default: "0" },
      timeout: { type: "string", default: "10" },
      json: { type: "string" },
      keep: { type: "boolean", default: false },
      "skip-catalog": { type: "boolean", default: false },
      help: { type: "boolean", default: false }
    },
    strict: true,
    allowPositionals: false
  }).values
} catch (error) {
  console.error(`${error.message}\n\n${USAGE}`)
  process.exit(2)
}
if (opts.help) {
  console.log(USAGE)
  process.exit(0)
}

const intOption = (name, min, max) => {
  const n = Number(opts[name])
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be a whole number from ${min} to ${max}`)
    process.exit(2)
  }
  return n
}
const SECONDS = intOption("seconds", 1, 3600)
const WARMUP = intOption("warmup", 0, 60)
const CONNECTIONS = intOption("connections", 1, 1000)
const SOAK = intOption("soak", 0, 24 * 3600)
const TIMEOUT = intOption("timeout", 1, 600)

const isLoopback = (hostname) =>
  hostname === "localhost" || hostname === "[::1]" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname)

if (opts.url !== undefined || opts.token !== undefined) {
  if (opts.url === undefined || opts.token === undefined) fail(2, "--url and --token go together")
  if (opts.embedded) fail(2, "--embedded starts its own server; it cannot be combined with --url")
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
{
  const pg = new URL(opts.pg)
  if (!isLoopback(pg.hostname)) fail(2, `--pg must point at this machine (127.0.0.1), not ${pg.hostname}`)
}

function fail(code, message) {
  console.error(message)
  process.exit(code)
}

// ---------------------------------------------------------------------------------------------
// Output helpers

const t0 = Date.now()
const log = (message) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${message}`)
const mb = (kb) => kb === undefined ? "n/a" : `${(kb / 1024).toFixed(1)} MB`
const fmt = (n, digits = 0) => n === undefined || Number.isNaN(n) ? "n/a" : n.toFixed(digits)
const problems = []
const problem = (message) => {
  problems.push(message)
  console.log(`  !! ${message}`)
}

// ---------------------------------------------------------------------------------------------
// Clean-up: run once, last registered first, on normal exit, errors, SIGINT and SIGTERM

const cleanups = []
let cleaning
const cleanup = () => (cleaning ??= (async () => {
  while (cleanups.length > 0) {
    const step = cleanups.pop()
    try {
      await step.run()
    } catch (error) {
      console.error(`clean-up (${step.name}) failed: ${error.message}`)
    }
  }
})())
const onCleanup = (name, run, sync) => cleanups.push({ name, run, sync })

const activeLoads = new Set()
let interrupted = false
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (interrupted) return
    interrupted = true
    console.error(`\n${signal}: stopping the load and cleaning up...`)
    for (const instance of activeLoads) instance.stop()
    // Let the load generator wind down (it stops within a second) before the server goes away.
    const waitForLoads = async () => {
      for (let i = 0; i < 30 && activeLoads.size > 0; i++) await sleep(100)
    }
    waitForLoads()
      .then(cleanup)
      .finally(() => process.exit(signal === "SIGINT" ? 130 : 143))
  })
}
// Last resort if the process exits without the async clean-up having run (e.g. process.exit elsewhere).
process.on("exit", () => {
  for (const step of cleanups.reverse()) {
    try {
      step.sync?.()
    } catch {
      // nothing more to do
    }
  }
})

// ---------------------------------------------------------------------------------------------
// Postgres: psql when installed, else the pg package from the pnpm store

const pgTarget = new URL(opts.pg)

const psqlArgs = (database) => [
  "-X",
  "-q",
  "-A",
  "-t",
  "-v",
  "ON_ERROR_STOP=1",
  "-h",
  pgTarget.hostname.replace(/^\[|\]$/g, ""),
  "-p",
  pgTarget.port || "5432",
  "-U",
  decodeURIComponent(pgTarget.username || "postgres"),
  "-d",
  database
]
const psqlEnv = () => ({
  ...process.env,
  ...(pgTarget.password ? { PGPASSWORD: decodeURIComponent(pgTarget.password) } : {})
})

const hasPsql = spawnSync("psql", ["--version"], { encoding: "utf8" }).status === 0

const loadPg = () => {
  const store = path.join(ROOT, "node_modules/.pnpm")
  const dir = fs.existsSync(store) ? fs.readdirSync(store).find((d) => /^pg@\d/.test(d)) : undefined
  if (dir === undefined) return undefined
  return createRequire(import.meta.url)(path.join(store, dir, "node_modules/pg"))
}

/** Runs one SQL statement on `database` and returns its first column's text, rows joined by newlines. */
async function sql(statement, database = "postgres") {
  if (hasPsql) {
    return await new Promise((resolve, reject) => {
      const child = spawn("psql", [...psqlArgs(database), "-c", statement], { env: psqlEnv() })
      let out = ""
      let err = ""
      child.stdout.on("data", (d) => (out += d))
      child.stderr.on("data", (d) => (err += d))
      child.on("error", reject)
      child.on(
        "exit",
        (code) => code === 0 ? resolve(out.trim()) : reject(new Error(`psql: ${err.trim() || `exit ${code}`}`))
      )
    })
  }
  const pg = loadPg()
  if (pg === undefined) {
    throw new Error(
      "Neither psql nor the pg package was found: install the Postgres client (psql), " +
        "or run with --embedded, or point --url at a running server."
    )
  }
  const url = new URL(opts.pg)
  url.pathname = `/${database}`
  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  try {
    const result = await client.query(statement)
    return (result.rows ?? []).map((row) => String(Object.values(row)[0])).join("\n")
  } finally {
    await client.end()
  }
}

const dropDatabaseSync = (name) => {
  if (!hasPsql) return
  spawnSync("psql", [...psqlArgs("postgres"), "-c", `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`], {
    env: psqlEnv(),
    timeout: 15_000
  })
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers for the set-up and the checks (not for the load itself)

async function request(method, url, { headers = {}, body, expect = [200] } = {}) {
  const res = await fetch(url, {
    method,
    headers: {
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await res.text()
  let json
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  if (!expect.includes(res.status)) {
    throw new Error(`${method} ${new URL(url).pathname} answered ${res.status}: ${text.slice(0, 500)}`)
  }
  return { status: res.status, headers: res.headers, json }
}

// ---------------------------------------------------------------------------------------------
// Our own server

const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })

const newestMtime = (dir) => {
  let newest = 0
  if (!fs.existsSync(dir)) return newest
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full))
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, fs.statSync(full).mtimeMs)
  }
  return newest
}

function buildServer() {
  log("building packages/server (node build.mjs)...")
  const result = spawnSync(process.execPath, ["build.mjs"], { cwd: SERVER_DIR, stdio: "inherit" })
  if (result.status !== 0) throw new Error(`the server build failed (exit ${result.status})`)
}

function checkBinary() {
  if (!fs.existsSync(SERVER_BIN)) {
    throw new Error(
      `${path.relative(ROOT, SERVER_BIN)} is missing: build it (cd packages/server && node build.mjs) or pass --build`
    )
  }
  const built = fs.statSync(SERVER_BIN).mtimeMs
  const sources = Math.max(
    ...["server", "core", "contract", "sql-pglite"].map((p) => newestMtime(path.join(ROOT, "packages", p, "src")))
  )
  log(`server binary built ${new Date(built).toISOString()}`)
  if (sources > built) {
    console.log(
      `  note: sources changed since (newest ${
        new Date(sources).toISOString()
      }); pass --build to measure the latest code`
    )
  }
}

/** Starts `bundles-server serve` on a free port; resolves once it printed "listening on". */
async function startServer() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-bench-"))
  onCleanup(
    "temporary directory",
    async () => {
      if (opts.keep) log(`kept ${tmp}`)
      else fs.rmSync(tmp, { recursive: true, force: true })
    },
    () => opts.keep || fs.rmSync(tmp, { recursive: true, force: true })
  )

  const token = `bench_${randomBytes(24).toString("hex")}`
  const env = { ...process.env }
  for (
    const name of ["DATABASE_URL", "PORT", "HOST", "TLS_CERT", "TLS_KEY", "BUNDLES_ADMIN_TOKEN", "BUNDLES_DATA_DIR"]
  ) {
    delete env[name]
  }
  env.BUNDLES_ADMIN_TOKEN = token
  env.BUNDLES_DATA_DIR = path.join(tmp, "data")

  let database
  if (opts.embedded) {
    database = { kind: "embedded PGlite", detail: `in ${env.BUNDLES_DATA_DIR}` }
  } else {
    const name = `bundles_bench_${randomBytes(6).toString("hex")}`
    await sql(`CREATE DATABASE "${name}"`)
    log(`created database ${name}`)
    let dropped = false
    onCleanup(
      "database",
      async () => {
        if (opts.keep) return log(`kept database ${name}`)
        try {
          await sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
        } catch {
          await sql(`DROP DATABASE IF EXISTS "${name}"`)
        }
        dropped = true
        log(`dropped database ${name}`)
      },
      () => opts.keep || dropped || dropDatabaseSync(name)
    )
    const url = new URL(opts.pg)
    url.pathname = `/${name}`
    env.DATABASE_URL = url.toString()
    const version = await sql("SHOW server_version").catch(() => "?")
    database = { kind: `Postgres ${version.split(" ")[0]}`, detail: `database ${name}` }
  }

  const port = await freePort()
  const logFile = path.join(tmp, "server.log")
  const errFile = path.join(tmp, "server.err")
  const out = fs.openSync(logFile, "w")
  const err = fs.openSync(errFile, "w")
  // The server logs one line per request; a file keeps that off the load generator's CPU.
  const child = spawn(process.execPath, [SERVER_BIN, "serve", "--port", String(port), "--host", "127.0.0.1"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", out, err]
  })
  fs.closeSync(out)
  fs.closeSync(err)

  const server = {
    child,
    pid: child.pid,
    token,
    logFile,
    errFile,
    database,
    exited: undefined,
    stopping: false
  }
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      server.exited = { code, signal }
      resolve(server.exited)
      if (!server.stopping) {
        console.error(`\n!! the server exited unexpectedly (code ${code}, signal ${signal})`)
        console.error(tail(errFile, 20) || tail(logFile, 20))
        for (const instance of activeLoads) instance.stop()
      }
    })
  )
  onCleanup(
    "server",
    async () => {
      if (server.exited) return
      server.stopping = true
      child.kill("SIGTERM")
      const result = await Promise.race([exited, sleep(15_000).then(() => undefined)])
      if (result === undefined) {
        log("the server did not stop within 15 s of SIGTERM; sending SIGKILL")
        child.kill("SIGKILL")
        await exited
        problem("the server did not stop within 15 s of SIGTERM")
      } else {
        log(`server stopped (${result.signal ?? `exit ${result.code}`})`)
      }
    },
    () => server.exited || child.kill("SIGKILL")
  )

  const deadline = Date.now() + 120_000
  for (;;) {
    const text = fs.readFileSync(logFile, "utf8")
    const match = /listening on (http:\/\/\S+)/.exec(text)
    if (match) {
      server.url = match[1]
      break
    }
    if (server.exited) throw new Error(`the server exited before listening:\n${tail(errFile, 30) || tail(logFile, 30)}`)
    if (Date.now() > deadline) {
      throw new Error(`the server did not print "listening on" within 120 s:\n${tail(logFile, 30)}`)
    }
    await sleep(100)
  }
  log(`server pid ${child.pid} listening on ${server.url} (${database.kind}, ${database.detail})`)
  return server
}

const tail = (file, lines) => {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return ""
  }
}

// ---------------------------------------------------------------------------------------------
// Process memory

/** VmRSS of a process in kB, from /proc/<pid>/status; undefined when it cannot be read. */
const rssKb = (pid) => {
  if (pid === undefined) return undefined
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

/** User + system CPU time of a process in seconds, from /proc/<pid>/stat (assumes 100 ticks a second). */
const cpuSeconds = (pid) => {
  if (pid === undefined) return undefined
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
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
    if (interrupted) instance.stop()
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
    console.log(`  server CPU         ${fmt(s.serverCpu * 100)}% of one core (user + system, the server process only)`)
  }
  if (s.rssBefore !== undefined || s.rssAfter !== undefined) {
    console.log(`  server RSS         ${mb(s.rssBefore)} before, ${mb(s.rssAfter)} after`)
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
  if (interrupted || target.exited) return undefined
  log(`${name}: ${SECONDS} s at ${CONNECTIONS} connections`)
  const tally = newTally()
  const rssBefore = rssKb(target.pid)
  const cpuBefore = cpuSeconds(target.pid)
  const result = await runLoad({ url: target.url, seconds: SECONDS, requests: makeRequests(tally) })
  if (interrupted) return undefined
  const s = summarize(name, result, tally, {
    rssBefore,
    rssAfter: rssKb(target.pid),
    serverCpu: cpuBefore === undefined ? undefined : (cpuSeconds(target.pid) - cpuBefore) / result.duration
  })
  printScenario(s)
  return s
}

async function soak(target, ctx) {
  const name = "mixed: POST /orders + GET /networks + GET /balance"
  log(`soak: ${SOAK} s of ${name} at ${CONNECTIONS} connections, RSS every ${RSS_INTERVAL_MS / 1000} s`)
  const tally = { orders: newTally(), networks: newTally(), balance: newTally() }
  const all = newTally()
  const requests = [
    wrapTally(orderRequest(ctx, tally.orders), all),
    wrapTally(getRequest(ctx, tally.networks, "/api/v1/networks"), all),
    wrapTally(getRequest(ctx, tally.balance, "/api/v1/balance"), all)
  ]
  const series = []
  const started = Date.now()
  const sample = () => series.push({ t: Math.round((Date.now() - started) / 1000), kb: rssKb(target.pid) })
  sample()
  const timer = setInterval(sample, RSS_INTERVAL_MS)
  const cpuBefore = cpuSeconds(target.pid)
  let result
  try {
    result = await runLoad({ url: target.url, seconds: SOAK, requests })
  } finally {
    clearInterval(timer)
  }
  if (interrupted) return undefined
  sample()
  const s = summarize(`soak ${SOAK} s (${name})`, result, all, {
    perEndpoint: Object.fromEntries(Object.entries(tally).map(([k, t]) => [k, t.statuses])),
    rss: series,
    serverCpu: cpuBefore === undefined ? undefined : (cpuSeconds(target.pid) - cpuBefore) / result.duration
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
// Server log (our own server only): requests by route and status

async function readServerLog(file) {
  const routes = new Map()
  const notable = []
  let jsonLines = 0
  let otherLines = 0
  const stream = fs.createReadStream(file, { encoding: "utf8" })
  for await (const line of readline.createInterface({ input: stream, crlfDelay: Infinity })) {
    if (!line.startsWith("{")) {
      if (line.trim() !== "") otherLines++
      continue
    }
    let entry
    try {
      entry = JSON.parse(line)
    } catch {
      otherLines++
      continue
    }
    jsonLines++
    const a = entry.annotations ?? {}
    if (entry.message === "request" && a.path !== undefined) {
      const route = `${a.method} ${String(a.path).replace(/\/\d+(?=\/|$)/g, "/{id}")}`
      const key = `${route} ${a.status}`
      routes.set(key, (routes.get(key) ?? 0) + 1)
      if (a.status >= 500 && notable.length < 10) notable.push(line.slice(0, 400))
    } else if (/^(WARN|WARNING|ERROR|FATAL)$/i.test(String(entry.logLevel)) && notable.length < 10) {
      notable.push(line.slice(0, 400))
    }
  }
  return { routes, notable, jsonLines, otherLines }
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
  const admin = (method, pathname, body, expect) =>
    request(method, `${target.url}/admin/v1${pathname}`, {
      headers: { authorization: `Bearer ${target.token}` },
      body,
      expect
    }).then((r) => r.json)

  // 2. Seeding through the admin API
  if (opts["skip-catalog"]) {
    log("catalogue import skipped (--skip-catalog)")
  } else {
    const imported = await admin("POST", "/catalog", JSON.parse(fs.readFileSync(CATALOG_FILE, "utf8")))
    log(
      `imported examples/catalog.json: networks ${JSON.stringify(imported.networks)}, bundles ${
        JSON.stringify(imported.bundles)
      }`
    )
  }
  const exported = await admin("GET", "/catalog")
  const exportedBundles = (exported.networks ?? []).reduce((n, net) => n + (net.bundles?.length ?? 0), 0)
  log(`catalogue export: ${exported.networks?.length ?? 0} networks, ${exportedBundles} bundles`)
  const account = await admin("POST", "/accounts", { name: `bench ${new Date().toISOString()}` }, [201])
  await admin("POST", `/accounts/${account.id}/wallet/fund`, { amount: FUNDS_CEDIS, wallet: "main", note: "load test" })
  const key = await admin("POST", `/accounts/${account.id}/keys`, undefined, [201])
  await admin("PATCH", `/accounts/${account.id}`, { limits: LIMITS })
  log(
    `account ${account.id} funded with GHS ${FUNDS_CEDIS.toLocaleString("en")}, key ${key.prefix}..., limits ${
      JSON.stringify(LIMITS)
    }`
  )
  if (opts.url !== undefined) {
    // Do not leave a funded, working key behind on someone else's server.
    onCleanup("bench key", async () => {
      await admin("DELETE", `/accounts/${account.id}/keys/${key.id}`)
      log(`revoked the bench key of account ${account.id}`)
    })
  }

  const apiKey = key.api_key
  const api = (pathname) => request("GET", `${target.url}/api/v1${pathname}`, { headers: { "x-api-key": apiKey } })

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
  const networks = (await api("/networks")).json.networks
  const active = []
  for (const network of networks) {
    const { bundles } = (await api(`/networks/${network.id}/bundles`)).json
    for (const b of bundles) if (b.is_active) active.push({ ...b, network: network.name })
  }
  if (active.length === 0) throw new Error("no active bundle to order")
  active.sort((a, b) => a.price - b.price)
  const chosen = active.slice(0, 8)
  const maxPrice = Math.max(...chosen.map((b) => b.price))
  orders.budget = Math.floor((FUNDS_CEDIS * 0.98) / maxPrice)
  log(
    `ordering bundles ${chosen.map((b) => `${b.id} (${b.name}, GHS ${b.price})`).join(", ")}; ` +
      `at most ${orders.budget.toLocaleString("en")} orders`
  )
  const ctx = { apiKey, bundleIds: chosen.map((b) => b.id) }
  const rssStart = rssKb(target.pid)
  if (rssStart !== undefined) log(`server RSS after seeding: ${mb(rssStart)}`)

  // 3. The scenarios
  const results = []
  const run = async (name, makeRequests) => {
    if (interrupted || target.exited) return
    console.log("")
    const s = await scenario(target, name, makeRequests)
    if (s) results.push(s)
  }
  await run("POST /api/v1/orders", (tally) => [orderRequest(ctx, tally)])
  await run("GET /api/v1/networks", (tally) => [getRequest(ctx, tally, "/api/v1/networks")])

  // 4. The soak
  let soakResult
  if (SOAK > 0 && !interrupted && !target.exited) {
    console.log("")
    soakResult = await soak(target, ctx)
    results.push(soakResult)
  }
  if (interrupted) return 130
  if (target.exited) throw new Error("the server died during the load")

  // 5. Checks: the audit, and every acknowledged order in the database exactly once
  console.log("")
  log("checks")
  await sleep(1000) // let requests abandoned by a stopping run finish on the server
  const audit = await admin("GET", "/audit")
  console.log(`  audit              ${JSON.stringify(audit)}`)
  if (audit.ok !== true) problem("GET /admin/v1/audit did not report ok: true")

  const countFor = async (phone) => (await api(`/orders?phone_number=${phone}&per_page=1`)).json.pagination.total
  const dbTotal = (await api("/orders?per_page=1")).json.pagination.total

  const unknown = [...orders.unknown]
  let unknownFound = 0
  let unknownChecked = 0
  for (const phone of unknown.slice(0, MAX_LOOKUPS)) {
    const n = await countFor(phone)
    unknownChecked++
    unknownFound += Math.min(n, 1)
    if (n > 1) problem(`phone ${phone} has ${n} orders, expected at most 1`)
  }
  let rejectedFound = 0
  for (const phone of orders.rejectedSample) {
    if ((await countFor(phone)) > 0) rejectedFound++
  }
  if (rejectedFound > 0) problem(`${rejectedFound} orders answered with 4xx exist in the database anyway`)
  let ackMissing = 0
  let ackDuplicated = 0
  for (const phone of orders.ackSample) {
    const n = await countFor(phone)
    if (n === 0) ackMissing++
    if (n > 1) ackDuplicated++
  }
  if (ackMissing > 0) problem(`${ackMissing} of ${orders.ackSample.length} sampled acknowledged orders are missing`)
  if (ackDuplicated > 0) {
    problem(`${ackDuplicated} of ${orders.ackSample.length} sampled acknowledged orders exist more than once`)
  }

  const expected = orders.acknowledged + unknownFound + rejectedFound
  const exact = unknownChecked === unknown.length
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
  const match = dbTotal === expected
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
  const rssEnd = rssKb(target.pid)
  env.loadAfter = os.loadavg()[0]
  const lines = []
  lines.push("")
  lines.push("### Load test results")
  lines.push("")
  lines.push("| Scenario | Connections | req/s (mean) | p50 (ms) | p99 (ms) | Requests | Non-2xx | Errors |")
  lines.push("|---|---:|---:|---:|---:|---:|---:|---:|")
  for (const s of results) {
    lines.push(
      `| ${s.scenario} | ${s.connections} | ${
        fmt(s.rps, 0)
      } | ${s.p50} | ${s.p99} | ${s.total} | ${s.non2xx} | ${s.errors} |`
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

  if (problems.length > 0) {
    console.log(`\n${problems.length} problem(s):`)
    for (const p of problems) console.log(`  - ${p}`)
  }
  const failed = audit.ok !== true || !match || ackMissing > 0 || ackDuplicated > 0 || rejectedFound > 0
  return failed ? 1 : 0
}

let code
try {
  code = await main()
} catch (error) {
  console.error(`\nload test failed: ${error.stack ?? error.message}`)
  code = 1
}
await cleanup()
process.exit(code)
