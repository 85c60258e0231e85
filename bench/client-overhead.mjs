#!/usr/bin/env node
// What @databundle/client costs per call on top of the network: the Promise face against a
// raw `fetch` of the same request (same URL and headers, body read and parsed as JSON), one
// call at a time, on loopback.
//
//   node bench/client-overhead.mjs                    # own server on embedded PGlite, 3000 calls each
//   node bench/client-overhead.mjs --calls 10000 --warmup 1000
//   node bench/client-overhead.mjs --url http://127.0.0.1:8080 --token "$BUNDLES_ADMIN_TOKEN"
//
// The client is bundled from packages/client/src with esbuild on the fly, as an app's bundler
// would, so no build step is needed. Raw and client calls alternate in rounds, so drift in the
// server or the machine touches both alike. It prints the median and p90 of each, the
// difference, and the ratio client / raw. Only loopback addresses are ever targeted.
import * as esbuild from "esbuild"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const SERVER_BIN = path.join(ROOT, "packages/server/dist/bin.mjs")
const CLIENT_ENTRY = path.join(ROOT, "packages/client/src/index.ts")
const CATALOG_FILE = path.join(ROOT, "examples/catalog.json")

const USAGE = `Usage: node bench/client-overhead.mjs [options]

  --calls N      measured calls per endpoint and side (default 3000)
  --warmup N     unmeasured calls per endpoint and side first (default 300)
  --rounds N     raw and client alternate in N rounds (default 10)
  --url URL      use a running server (loopback only) instead of starting one, with
  --token TOKEN  its admin token
  --json FILE    also write the figures as JSON
  --help`

const argv = process.argv.slice(2)
if (argv[0] === "--") argv.shift()
let opts
try {
  opts = parseArgs({
    args: argv,
    options: {
      calls: { type: "string", default: "3000" },
      warmup: { type: "string", default: "300" },
      rounds: { type: "string", default: "10" },
      url: { type: "string" },
      token: { type: "string" },
      json: { type: "string" },
      help: { type: "boolean", default: false }
    },
    strict: true
  }).values
} catch (error) {
  console.error(`${error.message}\n\n${USAGE}`)
  process.exit(2)
}
if (opts.help) {
  console.log(USAGE)
  process.exit(0)
}
const int = (name, min, max) => {
  const n = Number(opts[name])
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be a whole number from ${min} to ${max}`)
    process.exit(2)
  }
  return n
}
const CALLS = int("calls", 10, 1_000_000)
const WARMUP = int("warmup", 0, 1_000_000)
const ROUNDS = int("rounds", 1, 1000)
if ((opts.url === undefined) !== (opts.token === undefined)) {
  console.error("--url and --token go together")
  process.exit(2)
}
if (opts.url !== undefined) {
  const { hostname, protocol } = new URL(opts.url)
  if (protocol !== "http:" || !/^(?:127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(hostname)) {
    console.error("--url must be an http:// URL of this machine")
    process.exit(2)
  }
}

const log = (message) => console.error(message)

// ---------------------------------------------------------------------------------------------
// The server: ours on embedded PGlite in a temporary directory, or the one given

let child
let tmp
const stop = async () => {
  if (child !== undefined && child.exitCode === null) {
    child.kill("SIGTERM")
    await Promise.race([new Promise((resolve) => child.once("exit", resolve)), sleep(10_000)])
    if (child.exitCode === null) child.kill("SIGKILL")
  }
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true })
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => void stop().finally(() => process.exit(130)))
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })

async function startServer() {
  if (!fs.existsSync(SERVER_BIN)) {
    throw new Error("packages/server/dist/bin.mjs is missing: run `cd packages/server && node build.mjs` first")
  }
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-client-bench-"))
  const token = `bench_${randomBytes(24).toString("hex")}`
  const env = { ...process.env, BUNDLES_ADMIN_TOKEN: token, BUNDLES_DATA_DIR: path.join(tmp, "data") }
  for (const name of ["DATABASE_URL", "PORT", "HOST", "TLS_CERT", "TLS_KEY"]) delete env[name]
  const logFile = path.join(tmp, "server.log")
  const out = fs.openSync(logFile, "w")
  // One log line per request goes to a file, off the measured path.
  child = spawn(process.execPath, [SERVER_BIN, "serve", "--port", String(await freePort()), "--host", "127.0.0.1"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", out, out]
  })
  fs.closeSync(out)
  const deadline = Date.now() + 120_000
  for (;;) {
    const match = /listening on (http:\/\/[^\s/]+)/.exec(fs.readFileSync(logFile, "utf8"))
    if (match) return { url: match[1], token }
    if (child.exitCode !== null) throw new Error(`the server exited:\n${fs.readFileSync(logFile, "utf8").slice(-2000)}`)
    if (Date.now() > deadline) throw new Error("the server did not start within 120 s")
    await sleep(100)
  }
}

async function admin(origin, token, method, pathname, body) {
  const response = await fetch(`${origin}/admin/v1${pathname}`, {
    method,
    headers: { authorization: `Bearer ${token}`, accept: "application/json", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const json = await response.json()
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

// ---------------------------------------------------------------------------------------------
// The client, bundled as an app would bundle it

async function loadClient() {
  const outfile = path.join(os.tmpdir(), `databundle-client-bench-${process.pid}.mjs`)
  await esbuild.build({
    entryPoints: [CLIENT_ENTRY],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    target: "es2022",
    minify: true,
    logLevel: "warning"
  })
  try {
    return await import(pathToFileURL(outfile).href)
  } finally {
    fs.rmSync(outfile, { force: true })
  }
}

// ---------------------------------------------------------------------------------------------
// Measurement

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

async function measure(name, raw, viaClient) {
  for (let i = 0; i < WARMUP; i++) {
    await raw()
    await viaClient()
  }
  const times = { raw: [], client: [] }
  const perRound = Math.ceil(CALLS / ROUNDS)
  for (let round = 0; round < ROUNDS; round++) {
    for (
      const [side, call] of round % 2 === 0
        ? [["raw", raw], ["client", viaClient]]
        : [["client", viaClient], ["raw", raw]]
    ) {
      for (let i = 0; i < perRound && times[side].length < CALLS; i++) {
        const started = performance.now()
        await call()
        times[side].push(performance.now() - started)
      }
    }
  }
  const stats = {}
  for (const side of ["raw", "client"]) {
    const sorted = times[side].sort((a, b) => a - b)
    stats[side] = { median: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), calls: sorted.length }
  }
  return {
    endpoint: name,
    raw: stats.raw,
    client: stats.client,
    overheadMs: stats.client.median - stats.raw.median,
    ratio: stats.client.median / stats.raw.median
  }
}

try {
  const target = opts.url === undefined ? await startServer() : { url: opts.url.replace(/\/+$/, ""), token: opts.token }
  log(`server ${target.url}`)
  const catalog = JSON.parse(fs.readFileSync(CATALOG_FILE, "utf8"))
  await admin(target.url, target.token, "POST", "/catalog", catalog)
  const account = await admin(target.url, target.token, "POST", "/accounts", { name: "Client overhead bench" })
  await admin(target.url, target.token, "POST", `/accounts/${account.id}/wallet/fund`, { amount: 100 })
  // No 429 may land in a measured call.
  const limit = 1_000_000
  await admin(target.url, target.token, "PATCH", `/accounts/${account.id}`, {
    limits: { all: limit, orders: limit, balance: limit }
  })
  const { api_key: apiKey } = await admin(target.url, target.token, "POST", `/accounts/${account.id}/keys`)

  const { createClient, USER_AGENT } = await loadClient()
  const baseUrl = `${target.url}/api/v1`
  const client = createClient({ apiKey, baseUrl })
  const headers = { "x-api-key": apiKey, accept: "application/json", "user-agent": USER_AGENT }
  const rawGet = (pathname) => async () => {
    const response = await fetch(`${baseUrl}${pathname}`, { headers })
    if (response.status !== 200) throw new Error(`GET ${pathname} answered ${response.status}`)
    return response.json()
  }

  log(`measuring: ${WARMUP} warm-up and ${CALLS} measured calls per endpoint and side, sequential`)
  const results = [
    await measure("GET /networks", rawGet("/networks"), () => client.networks()),
    await measure("GET /balance", rawGet("/balance"), () => client.balance())
  ]

  const ms = (n) => `${n.toFixed(3)} ms`
  console.log("")
  console.log(`Client overhead per call (median of ${CALLS}, sequential, loopback; Node ${process.version})`)
  console.log("")
  console.log("| endpoint | raw fetch median (p90) | client median (p90) | overhead | ratio client / raw |")
  console.log("|---|---|---|---|---|")
  for (const r of results) {
    console.log(
      `| ${r.endpoint} | ${ms(r.raw.median)} (${ms(r.raw.p90)}) | ${ms(r.client.median)} (${ms(r.client.p90)}) | ` +
        `${ms(r.overheadMs)} | ${r.ratio.toFixed(2)} |`
    )
  }
  if (opts.json !== undefined) {
    fs.writeFileSync(
      opts.json,
      JSON.stringify({ calls: CALLS, warmup: WARMUP, node: process.version, results }, null, 2)
    )
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
} finally {
  await stop()
}
