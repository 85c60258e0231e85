#!/usr/bin/env node
// `pnpm bench`: every figure of docs/benchmarks.md in one run, each beside its reference and
// the ratio to it, so the figures of a busy machine still compare with each other:
//
//   POST /orders on Postgres          vs  pgbench tpcb-like, scale 1, same clients, and the
//                                          same placement without our server around it: from
//                                          node:http with node-postgres, and from a bare Effect
//                                          HttpApi endpoint calling Orders.place
//   GET /networks (and other reads)   vs  a bare Effect HttpApi server with the same body,
//                                          and raw node:http with the same body
//   serve --workers 2                 vs  one worker, and one worker with the workers'
//                                          rate-limit store (the database)
//   the embedded database (PGlite)    vs  Postgres
//   bundles --version                 vs  node -e 0
//
// with the CPU each request cost the server (its processes' own process.cpuUsage) and their
// resident memory (with the embedded server's first start and idle memory, bench/footprint.mjs).
// About 4 to 5 minutes by default; the 5-minute memory run of the embedded
// database is separate: `pnpm bench:memory`.
//
//   pnpm bench                      # 10 s per scenario after a 2 s warm-up, 8 connections
//   pnpm bench -- --seconds 20 --json bench.json
import autocannon from "autocannon"
import * as esbuild from "esbuild"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import {
  CATALOG_FILE,
  databaseCpuMeter,
  DEFAULT_PG,
  fmt,
  intOption,
  log,
  makeTempDir,
  mb,
  parseOptions,
  postgres,
  processUsage,
  requireLoopbackPg,
  ROOT,
  runMain,
  runState,
  startServer,
  treeRssKb
} from "./lib.mjs"

const USAGE = `Usage: node bench/suite.mjs [options]      (or: pnpm bench -- [options])

  --seconds N       length of each measured scenario (default 10)
  --warmup N        warm-up before each scenario (default 2)
  --connections N   connections, and pgbench clients (default 8)
  --pg URL          Postgres server for the throw-away databases (default ${DEFAULT_PG})
  --skip LIST       leave out parts: pgbench, floors, workers, embedded, cli (comma-separated)
  --json FILE       also write every figure as JSON
  --build           rebuild the server and the CLI first
  --help`

const opts = parseOptions(USAGE, {
  seconds: { type: "string", default: "10" },
  warmup: { type: "string", default: "2" },
  connections: { type: "string", default: "8" },
  pg: { type: "string", default: DEFAULT_PG },
  skip: { type: "string", default: "" },
  json: { type: "string" },
  build: { type: "boolean", default: false }
})
const SECONDS = intOption(opts, "seconds", 1, 3600)
const WARMUP = intOption(opts, "warmup", 0, 60)
const CONNECTIONS = intOption(opts, "connections", 1, 1000)
const SKIP = new Set(opts.skip.split(",").map((s) => s.trim()).filter((s) => s !== ""))
requireLoopbackPg(opts.pg)

const tmp = makeTempDir({ prefix: "bundles-suite-" })
const pg = postgres(opts.pg)

/** Runs bench/load.mjs with `args` (and `env` added); resolves to its JSON figures (and its exit status). */
function loadTest(name, args, env = {}) {
  const json = path.join(tmp, `${name}.json`)
  log(`${name}: node bench/load.mjs ${args.join(" ")}`)
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [
      path.join(ROOT, "bench/load.mjs"),
      "--seconds",
      String(SECONDS),
      "--warmup",
      String(WARMUP),
      "--connections",
      String(CONNECTIONS),
      "--pg",
      opts.pg,
      "--json",
      json,
      ...args
    ], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } })
    const out = fs.createWriteStream(path.join(tmp, `${name}.txt`))
    child.stdout.on("data", (chunk) => {
      out.write(chunk)
      // The scenario lines, indented, so the run can be followed.
      for (const line of String(chunk).split("\n")) {
        if (/requests\/s|latency|server CPU|non-2xx  |reconciliation|audit|!!/.test(line)) {
          console.log(`  ${line.trim()}`)
        }
      }
    })
    child.on("exit", (code) => {
      out.end()
      let figures
      try {
        figures = JSON.parse(fs.readFileSync(json, "utf8"))
      } catch {
        figures = undefined
      }
      resolve({ code, figures })
    })
  })
}

const scenarioOf = (run, key) => run?.figures?.results?.find((r) => r.key === key)

/** pgbench tpcb-like at scale 1 with `clients` clients for `seconds`: its tps. */
async function pgbench(clients, seconds) {
  if (spawnSync("pgbench", ["--version"], { encoding: "utf8" }).status !== 0) {
    log("pgbench not found (Debian: apt-get install postgresql-contrib): no database reference")
    return undefined
  }
  const db = await pg.createDatabase()
  const url = new URL(db.url)
  const conn = ["-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username || "postgres")]
  const init = spawnSync("pgbench", [...conn, "-i", "-s", "1", "-q", db.name], { encoding: "utf8" })
  if (init.status !== 0) throw new Error(`pgbench -i failed: ${init.stderr}`)
  log(`pgbench tpcb-like, scale 1, ${clients} clients, ${seconds} s`)
  // Run without blocking, so that the meter reads pgbench's backends while they live.
  const meter = databaseCpuMeter()
  const run = await new Promise((resolve, reject) => {
    const child = spawn(
      "pgbench",
      [
        ...conn,
        "-b",
        "tpcb-like",
        "-c",
        String(clients),
        "-j",
        String(Math.min(clients, 2)),
        "-T",
        String(seconds),
        db.name
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })
  const databaseCpu = meter?.stop()
  if (run.status !== 0) throw new Error(`pgbench failed: ${run.stderr}`)
  const tps = Number(/tps = ([\d.]+)/.exec(run.stdout)?.[1])
  const latency = Number(/latency average = ([\d.]+) ms/.exec(run.stdout)?.[1])
  const transactions = Number(/number of transactions actually processed: (\d+)/.exec(run.stdout)?.[1])
  // The database's CPU per transaction, beside the server's and the database's per order.
  const databaseCpuMsPerTransaction = databaseCpu !== undefined && transactions > 0
    ? databaseCpu * 1000 / transactions
    : undefined
  console.log(
    `  pgbench            ${fmt(tps, 0)} tps, mean latency ${fmt(latency, 1)} ms, database CPU ${
      fmt(databaseCpuMsPerTransaction, 3)
    } ms per transaction`
  )
  return { tps, latencyMs: latency, databaseCpuMsPerTransaction }
}

/**
 * Load on a floor server (started with `server`'s options) for the scenario's time after its
 * warm-up: req/s, latency, its CPU per request and, with `database`, the database's.
 */
async function measureFloor(name, server, requests, database = false) {
  const floorServer = await startServer({ tmp, token: "none", name, ...server })
  try {
    const run = (seconds) =>
      new Promise((resolve, reject) =>
        autocannon(
          { url: floorServer.url, connections: CONNECTIONS, duration: seconds, requests },
          (error, result) => error ? reject(error) : resolve(result)
        )
      )
    if (WARMUP > 0) await run(WARMUP)
    const before = await processUsage(floorServer.pid, floorServer.probeDir)
    const meter = database ? databaseCpuMeter() : undefined
    const result = await run(SECONDS)
    const databaseCpu = meter?.stop()
    const after = await processUsage(floorServer.pid, floorServer.probeDir)
    const cpu = before && after ? after.cpu - before.cpu : undefined
    const perRequest = (seconds) => seconds === undefined ? undefined : seconds * 1000 / result.requests.total
    const figures = {
      rps: result.requests.mean,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      cpuMsPerRequest: perRequest(cpu),
      databaseCpuMsPerRequest: perRequest(databaseCpu),
      rssMax: treeRssKb(floorServer.pid)
    }
    console.log(
      `  ${name.padEnd(18)} ${fmt(figures.rps, 0)} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, ${
        fmt(figures.cpuMsPerRequest, 3)
      } ms CPU per request${database ? `, database ${fmt(figures.databaseCpuMsPerRequest, 3)} ms` : ""}${
        figures.non2xx > 0 ? `, ${figures.non2xx} non-2xx` : ""
      }`
    )
    return figures
  } finally {
    await floorServer.stop()
  }
}

/** A floor server (bench/floor.mjs) under GET /api/v1/networks. */
const floor = (mode, bodyFile) =>
  measureFloor(`floor-${mode}`, {
    script: path.join(ROOT, "bench/floor.mjs"),
    scriptArgs: ["--mode", mode, "--body", bodyFile, "--port", "0"]
  }, [{ method: "GET", path: "/api/v1/networks", headers: { accept: "application/json" } }])

/** bench/order-floor.mjs bundled from the workspace's sources (it imports the domain): the bundle's path. */
async function orderFloorBundle() {
  const outfile = path.join(tmp, "order-floor.mjs")
  await esbuild.build({
    entryPoints: [path.join(ROOT, "bench/order-floor.mjs")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The workspace's packages from their sources, resolved as the server resolves them.
    conditions: ["@databundle/source", "module"],
    nodePaths: ["server", "core", "sql-pg"].map((p) => path.join(ROOT, "packages", p, "node_modules")),
    external: ["@electric-sql/pglite", "pg-native", "cloudflare:sockets"],
    banner: {
      js:
        "import { createRequire as __createRequire } from 'node:module';const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })
  return outfile
}

// Every order a floor is sent has a number of its own, as load.mjs's: never ending in 0000 or
// 9999, which the simulator fails or keeps pending.
let floorPhones = 0
const floorPhone = () => {
  floorPhones += floorPhones % 10000 === 9998 ? 3 : 1
  return `02${String(floorPhones).padStart(8, "0")}`
}

/** An order floor (`mode` of bench/order-floor.mjs, bundled at `bundle`) on a database of its own under POST /api/v1/orders. */
async function orderFloor(mode, bundle) {
  const database = await pg.createDatabase()
  return measureFloor(
    `order-floor-${mode}`,
    {
      script: bundle,
      scriptArgs: ["--mode", mode, "--port", "0", "--catalog", CATALOG_FILE],
      databaseUrl: database.url
    },
    [{
      method: "POST",
      path: "/api/v1/orders",
      headers: { "content-type": "application/json" },
      setupRequest: (request) => ({ ...request, body: JSON.stringify({ bundle_id: 1, phone_number: floorPhone() }) })
    }],
    true
  )
}

/**
 * Median wall time of `node -e 0`, `bundles --version` and `bundles --help`, in turns, with the
 * CLI's code cache warm. The binary answers `--version` alone without loading its program;
 * `--help` is the start-up of the program itself.
 */
function cliStartup(runs = 15) {
  const cli = path.join(ROOT, "packages/cli/dist/bundles.mjs")
  if (!fs.existsSync(cli)) return undefined
  const env = { PATH: process.env.PATH ?? "", HOME: tmp, XDG_CACHE_HOME: path.join(tmp, "cache"), NO_COLOR: "1" }
  const time = (args) => {
    const started = process.hrtime.bigint()
    const result = spawnSync(process.execPath, args, { env, stdio: "ignore" })
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}`)
    return Number(process.hrtime.bigint() - started) / 1e6
  }
  time(["-e", "0"])
  time([cli, "--version"])
  time([cli, "--help"]) // writes the code cache
  const node = []
  const version = []
  const help = []
  for (let i = 0; i < runs; i++) {
    node.push(time(["-e", "0"]))
    version.push(time([cli, "--version"]))
    help.push(time([cli, "--help"]))
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
  return { node: median(node), version: median(version), help: median(help), runs }
}

const ratio = (a, b) => a === undefined || b === undefined || b === 0 ? undefined : a / b
const x = (r) => r === undefined ? "n/a" : `${r.toFixed(2)}x`
const verdict = (ok) => ok === undefined ? "" : ok ? "met" : "NOT MET"

runMain("bench suite", async () => {
  if (opts.build) {
    for (const pkg of ["server", "cli"]) {
      if (
        spawnSync(process.execPath, [path.join(ROOT, `packages/${pkg}/build.mjs`)], { stdio: "inherit" }).status !== 0
      ) {
        throw new Error(`the ${pkg} build failed`)
      }
    }
  }
  const env = {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model?.trim() ?? "unknown",
    commit: spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout?.trim(),
    loadBefore: os.loadavg()[0]
  }
  console.log(`Benchmark suite: node ${env.node}, ${env.cpus} CPUs (${env.cpuModel}), commit ${env.commit}`)
  console.log(
    `load average (1 min) before: ${env.loadBefore.toFixed(2)}${
      env.loadBefore > env.cpus / 2 ? " (busy machine: compare ratios, not absolute figures)" : ""
    }`
  )
  const bodyFile = path.join(tmp, "networks.json")
  const figures = { env }

  console.log("\n== Postgres, one server process")
  figures.postgres = await loadTest("postgres", [
    "--scenarios",
    "orders,networks,bundles,balance,order,list",
    "--save-networks",
    bodyFile
  ])
  if (!SKIP.has("pgbench") && !runState.interrupted) {
    console.log("\n== pgbench (the database alone)")
    figures.pgbench = await pgbench(CONNECTIONS, SECONDS)
  }
  if (!SKIP.has("floors") && fs.existsSync(bodyFile) && !runState.interrupted) {
    console.log("\n== floors: the same GET /api/v1/networks body")
    figures.httpapi = await floor("httpapi", bodyFile)
    figures.raw = await floor("raw", bodyFile)
  }
  if (!SKIP.has("floors") && !runState.interrupted) {
    console.log("\n== floors: the same order placement, without our gateway and request log")
    const bundle = await orderFloorBundle()
    figures.orderRaw = await orderFloor("raw", bundle)
    figures.orderHttpApi = await orderFloor("httpapi", bundle)
  }
  if (!SKIP.has("workers") && !runState.interrupted) {
    console.log("\n== Postgres, serve --workers 2")
    figures.workers = await loadTest("workers", ["--workers", "2", "--scenarios", "orders,networks"])
    // Workers share their rate-limit counts through the database (one more statement per
    // request); one process with the same store tells that cost from the workers' own.
    console.log("\n== Postgres, one process, rate limits in the database (as the workers keep them)")
    figures.sharedLimits = await loadTest("shared-limits", ["--scenarios", "orders,networks"], {
      BUNDLES_RATE_LIMIT_STORE: "database"
    })
  }
  if (!SKIP.has("embedded") && !runState.interrupted) {
    console.log("\n== embedded database (PGlite)")
    figures.embedded = await loadTest("embedded", ["--embedded", "--scenarios", "orders,networks"])
    console.log("\n== embedded server's memory: a first serve --demo, then a restart left idle")
    const file = path.join(os.tmpdir(), `bundles-footprint-${process.pid}.json`)
    const footprint = spawnSync(process.execPath, [path.join(ROOT, "bench/footprint.mjs"), "--json", file], {
      stdio: "inherit"
    })
    if (footprint.status === 0 && fs.existsSync(file)) {
      figures.footprint = JSON.parse(fs.readFileSync(file, "utf8"))
      fs.rmSync(file, { force: true })
    }
  }
  if (!SKIP.has("cli") && !runState.interrupted) {
    console.log("\n== bundles --version cold start")
    figures.cli = cliStartup()
    if (figures.cli) {
      console.log(
        `  node -e 0 ${fmt(figures.cli.node, 1)} ms, bundles --version ${
          fmt(figures.cli.version, 1)
        } ms, bundles --help ${fmt(figures.cli.help, 1)} ms`
      )
    }
  }
  if (runState.interrupted) return 130
  env.loadAfter = os.loadavg()[0]

  // The table
  const orders = scenarioOf(figures.postgres, "orders")
  const networks = scenarioOf(figures.postgres, "networks")
  const rows = []
  const row = (what, ours, reference, r, target) => rows.push({ what, ours, reference, ratio: r, target })
  const reqs = (s) =>
    s === undefined
      ? "n/a"
      : `${fmt(s.rps, 0)} req/s, p99 ${s.p99} ms, ${fmt(s.cpuMsPerRequest, 3)} ms CPU/req${
        s.databaseCpuMsPerRequest === undefined ? "" : ` (database ${fmt(s.databaseCpuMsPerRequest, 3)} ms)`
      }, RSS ≤ ${mb(s.rssMax)}`
  row(
    `POST /orders, Postgres, ${CONNECTIONS} conn., one account`,
    reqs(orders),
    figures.pgbench
      ? `pgbench tpcb-like s=1 c=${CONNECTIONS}: ${fmt(figures.pgbench.tps, 0)} tps (database ${
        fmt(figures.pgbench.databaseCpuMsPerTransaction, 3)
      } ms CPU/tx)`
      : "n/a",
    ratio(orders?.rps, figures.pgbench?.tps),
    "reported (a tpcb-like transaction is a third of an order's work)"
  )
  // The database's work per order, against a pgbench transaction's.
  const dbPerOrder = orders?.databaseCpuMsPerRequest
  const dbPerTx = figures.pgbench?.databaseCpuMsPerTransaction
  const dbRatio = ratio(dbPerOrder, dbPerTx)
  row(
    "database CPU per order, POST /orders on Postgres",
    `${fmt(dbPerOrder, 3)} ms`,
    figures.pgbench ? `pgbench: ${fmt(dbPerTx, 3)} ms per transaction` : "n/a",
    dbRatio,
    `≤ 0.6 ms, ≤ 1.5x: ${
      verdict(dbPerOrder === undefined || dbRatio === undefined ? undefined : dbPerOrder <= 0.6 && dbRatio <= 1.5)
    }`
  )
  // Our server against the same placement statement with nothing around it.
  const rawRatio = ratio(orders?.rps, figures.orderRaw?.rps)
  if (figures.orderRaw) {
    row(
      "POST /orders, Postgres, against the raw floor",
      reqs(orders),
      `node:http + node-postgres, our placement statement: ${fmt(figures.orderRaw.rps, 0)} req/s`,
      rawRatio,
      `≥ 0.9x, p99 < 25 ms: ${
        verdict(orders === undefined || rawRatio === undefined ? undefined : rawRatio >= 0.9 && orders.p99 < 25)
      }`
    )
  }
  // What the placement allows on this machine without us: the database's floor and the framework's.
  const orderFloors = [
    ["orderRaw", "POST /orders floor: node:http + node-postgres, our placement statement"],
    ["orderHttpApi", "POST /orders floor: a bare HttpApi endpoint calling Orders.place"]
  ]
  for (const [key, what] of orderFloors) {
    const f = figures[key]
    if (f === undefined) continue
    row(
      what,
      reqs(f),
      figures.pgbench ? `pgbench: ${fmt(figures.pgbench.tps, 0)} tps` : "n/a",
      ratio(f.rps, figures.pgbench?.tps),
      "(the most POST /orders could reach here)"
    )
  }
  if (orders && figures.orderHttpApi) {
    row(
      "POST /orders, Postgres",
      reqs(orders),
      `bare HttpApi + Orders.place: ${fmt(figures.orderHttpApi.rps, 0)} req/s, ${
        fmt(figures.orderHttpApi.cpuMsPerRequest, 3)
      } ms CPU/req`,
      ratio(orders.rps, figures.orderHttpApi.rps),
      "reported (what the gateway and the request log cost)"
    )
  }
  const floorRef = figures.httpapi
  for (const key of ["networks", "bundles", "balance", "order", "list"]) {
    const s = scenarioOf(figures.postgres, key)
    if (s === undefined) continue
    const r = ratio(s.rps, floorRef?.rps)
    row(
      s.scenario,
      reqs(s),
      floorRef
        ? `bare HttpApi GET /networks: ${fmt(floorRef.rps, 0)} req/s, ${fmt(floorRef.cpuMsPerRequest, 3)} ms CPU/req`
        : "n/a",
      r,
      key === "networks" ? `≥ 0.8x: ${verdict(r === undefined ? undefined : r >= 0.8)}` : "not far behind"
    )
  }
  if (figures.raw && networks) {
    row(
      "GET /api/v1/networks",
      reqs(networks),
      `raw node:http: ${fmt(figures.raw.rps, 0)} req/s, ${fmt(figures.raw.cpuMsPerRequest, 3)} ms CPU/req`,
      ratio(networks.rps, figures.raw.rps),
      "(what Node alone costs)"
    )
  }
  const workersOrders = scenarioOf(figures.workers, "orders")
  if (workersOrders) {
    row(
      "POST /orders, serve --workers 2",
      reqs(workersOrders),
      `one worker: ${fmt(orders?.rps, 0)} req/s`,
      ratio(workersOrders.rps, orders?.rps),
      "reported"
    )
  }
  const sharedOrders = scenarioOf(figures.sharedLimits, "orders")
  if (workersOrders && sharedOrders) {
    row(
      "POST /orders, serve --workers 2",
      reqs(workersOrders),
      `one worker, rate limits in the database: ${fmt(sharedOrders.rps, 0)} req/s, ${
        fmt(sharedOrders.cpuMsPerRequest, 3)
      } ms CPU/req`,
      ratio(workersOrders.rps, sharedOrders.rps),
      "reported"
    )
  }
  const workersNetworks = scenarioOf(figures.workers, "networks")
  if (workersNetworks) {
    row(
      "GET /networks, serve --workers 2",
      reqs(workersNetworks),
      `one worker: ${fmt(networks?.rps, 0)} req/s`,
      ratio(workersNetworks.rps, networks?.rps),
      "reported"
    )
  }
  const sharedNetworks = scenarioOf(figures.sharedLimits, "networks")
  if (workersNetworks && sharedNetworks) {
    row(
      "GET /networks, serve --workers 2",
      reqs(workersNetworks),
      `one worker, rate limits in the database: ${fmt(sharedNetworks.rps, 0)} req/s, ${
        fmt(sharedNetworks.cpuMsPerRequest, 3)
      } ms CPU/req`,
      ratio(workersNetworks.rps, sharedNetworks.rps),
      "reported"
    )
  }
  const embeddedOrders = scenarioOf(figures.embedded, "orders")
  if (embeddedOrders) {
    const r = ratio(embeddedOrders.rps, orders?.rps)
    row(
      "POST /orders, embedded PGlite",
      reqs(embeddedOrders),
      `Postgres: ${fmt(orders?.rps, 0)} req/s`,
      r,
      `≥ 0.5x: ${verdict(r === undefined ? undefined : r >= 0.5)}`
    )
  }
  const embeddedNetworks = scenarioOf(figures.embedded, "networks")
  if (embeddedNetworks) {
    row(
      "GET /networks, embedded PGlite",
      reqs(embeddedNetworks),
      `Postgres: ${fmt(networks?.rps, 0)} req/s`,
      ratio(embeddedNetworks.rps, networks?.rps),
      "reported"
    )
  }
  if (figures.footprint) {
    const { firstStart, restart } = figures.footprint
    const underMb = (kb, limit) => verdict(kb === undefined ? undefined : kb / 1024 <= limit)
    row(
      "embedded server RSS: a first serve --demo, at any moment (VmHWM)",
      `${mb(firstStart.peakKb)}, ready in ${fmt(firstStart.readyMs / 1000, 1)} s`,
      "a 1 GB machine beside its OS",
      undefined,
      `≤ 300 MB: ${underMb(firstStart.peakKb, 300)}`
    )
    row(
      `embedded server RSS: idle ${restart.idleSeconds} s after a restart`,
      `${mb(restart.idleKb)} (${mb(restart.idle10Kb)} at 10 s)`,
      "a 1 GB machine beside its OS",
      undefined,
      `≤ 200 MB: ${underMb(restart.idleKb, 200)}`
    )
  }
  if (figures.cli) {
    const r = ratio(figures.cli.version, figures.cli.node)
    row(
      "bundles --version (median, code cache warm)",
      `${fmt(figures.cli.version, 1)} ms`,
      `node -e 0: ${fmt(figures.cli.node, 1)} ms`,
      r,
      `≤ 2x: ${verdict(r === undefined ? undefined : r <= 2)}`
    )
    row(
      "bundles --help (the program's own start-up)",
      `${fmt(figures.cli.help, 1)} ms`,
      `node -e 0: ${fmt(figures.cli.node, 1)} ms`,
      ratio(figures.cli.help, figures.cli.node),
      "reported"
    )
  }
  console.log("\n### Benchmark suite\n")
  console.log("| figure | ours | reference | ratio | target |")
  console.log("|---|---|---|---:|---|")
  for (const r of rows) console.log(`| ${r.what} | ${r.ours} | ${r.reference} | ${x(r.ratio)} | ${r.target} |`)
  console.log(
    `\nNode ${env.node} · ${env.cpus} CPUs (${env.cpuModel}) · ${SECONDS} s per scenario after ${WARMUP} s warm-up · ` +
      `${CONNECTIONS} connections · autocannon on the same machine · load average ${
        env.loadBefore.toFixed(2)
      } before, ` +
      `${env.loadAfter.toFixed(2)} after · commit ${env.commit}`
  )
  const failedRuns = ["postgres", "workers", "embedded"].filter((k) =>
    figures[k] !== undefined && figures[k].code !== 0
  )
  for (const k of failedRuns) {
    const text = fs.readFileSync(path.join(tmp, `${k}.txt`), "utf8").split("\n").slice(-40).join("\n")
    console.log(`\n!! the ${k} load test reported a problem; the end of its output:\n${text}`)
  }
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({ ...figures, rows }, null, 2))
  return failedRuns.length > 0 ? 1 : 0
})
