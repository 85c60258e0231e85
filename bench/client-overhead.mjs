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
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import {
  adminClient,
  checkBinary,
  createAccount,
  fail,
  importCatalog,
  intOption,
  isLoopback,
  log,
  makeTempDir,
  newAdminToken,
  parseOptions,
  ROOT,
  runMain,
  startServer
} from "./lib.mjs"

const CLIENT_ENTRY = path.join(ROOT, "packages/client/src/index.ts")

const USAGE = `Usage: node bench/client-overhead.mjs [options]

  --calls N      measured calls per endpoint and side (default 3000)
  --warmup N     unmeasured calls per endpoint and side first (default 300)
  --rounds N     raw and client alternate in N rounds (default 10)
  --url URL      use a running server (loopback only) instead of starting one, with
  --token TOKEN  its admin token
  --json FILE    also write the figures as JSON
  --help`

const opts = parseOptions(USAGE, {
  calls: { type: "string", default: "3000" },
  warmup: { type: "string", default: "300" },
  rounds: { type: "string", default: "10" },
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "string" }
})
const CALLS = intOption(opts, "calls", 10, 1_000_000)
const WARMUP = intOption(opts, "warmup", 0, 1_000_000)
const ROUNDS = intOption(opts, "rounds", 1, 1000)
if ((opts.url === undefined) !== (opts.token === undefined)) fail(2, "--url and --token go together")
if (opts.url !== undefined) {
  const { hostname, protocol } = new URL(opts.url)
  if (protocol !== "http:" || !isLoopback(hostname)) fail(2, "--url must be an http:// URL of this machine")
}

/** Our own server on embedded PGlite in a temporary directory, or the one given. */
async function target() {
  if (opts.url !== undefined) return { url: opts.url.replace(/\/+$/, ""), token: opts.token }
  checkBinary()
  return startServer({ tmp: makeTempDir({ prefix: "bundles-client-bench-" }), token: newAdminToken() })
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
    // The contract from its sources, as the client itself.
    conditions: ["@databundle/source", "module"],
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

await runMain("client-overhead", async () => {
  const server = await target()
  log(`server ${server.url}`)
  const admin = adminClient(server.url, server.token)
  await importCatalog(admin)
  // No 429 may land in a measured call.
  const limit = 1_000_000
  const { apiKey } = await createAccount(admin, {
    name: "Client overhead bench",
    funds: 100,
    limits: { all: limit, orders: limit, balance: limit }
  })

  const { createClient, USER_AGENT } = await loadClient()
  const baseUrl = `${server.url}/api/v1`
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
  return 0
})
