// Shared parts of the bench scripts (load.mjs, soak.mjs, crash.mjs): options, output, clean-up,
// a throw-away Postgres database, our own server processes, the admin API, HTTP calls, the
// server's request log, and the checks of orders and money after a run.
//
// Each script is its own process, so the output helpers, the problem list and the clean-up
// registry are module-level singletons.
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as readline from "node:readline"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const SERVER_DIR = path.join(ROOT, "packages/server")
export const SERVER_BIN = path.join(SERVER_DIR, "dist/bin.mjs")
export const PROBE = path.join(ROOT, "bench/probe.mjs")
export const CATALOG_FILE = path.join(ROOT, "examples/catalog.json")
export const DEFAULT_PG = "postgres://postgres@127.0.0.1:5432"

// ---------------------------------------------------------------------------------------------
// Options

export function fail(code, message) {
  console.error(message)
  process.exit(code)
}

/**
 * Parses the command line with `node:util` parseArgs; prints `usage` and exits 2 on an error,
 * prints it and exits 0 for `--help`. A leading "--" (from `pnpm bench -- ...`) is dropped.
 */
export function parseOptions(usage, options, argv = process.argv.slice(2)) {
  const args = [...argv]
  if (args[0] === "--") args.shift()
  let values
  try {
    values = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", default: false } },
      strict: true,
      allowPositionals: false
    }).values
  } catch (error) {
    console.error(`${error.message}\n\n${usage}`)
    process.exit(2)
  }
  if (values.help) {
    console.log(usage)
    process.exit(0)
  }
  return values
}

/** A whole-number option within bounds, or exit 2. */
export const intOption = (opts, name, min, max) => {
  const n = Number(opts[name])
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be a whole number from ${min} to ${max}`)
    process.exit(2)
  }
  return n
}

export const isLoopback = (hostname) =>
  hostname === "localhost" || hostname === "[::1]" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/** Exits 2 unless `--pg` points at this machine. */
export const requireLoopbackPg = (pgUrl) => {
  let pg
  try {
    pg = new URL(pgUrl)
  } catch {
    fail(2, `--pg ${pgUrl} is not a URL`)
  }
  if (!isLoopback(pg.hostname)) fail(2, `--pg must point at this machine (127.0.0.1), not ${pg.hostname}`)
}

// ---------------------------------------------------------------------------------------------
// Output helpers

const t0 = Date.now()
export const log = (message) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${message}`)
export const mb = (kb) => kb === undefined ? "n/a" : `${(kb / 1024).toFixed(1)} MB`
export const fmt = (n, digits = 0) => n === undefined || Number.isNaN(n) ? "n/a" : n.toFixed(digits)
/** Every failed check of the run, in order; a script exits 1 when there is any. */
export const problems = []
export const problem = (message) => {
  problems.push(message)
  console.log(`  !! ${message}`)
}
/** Prints the problem list, if any. */
export const printProblems = () => {
  if (problems.length === 0) return
  console.log(`\n${problems.length} problem(s):`)
  for (const p of problems) console.log(`  - ${p}`)
}

// ---------------------------------------------------------------------------------------------
// Clean-up: run once, last registered first, on normal exit, errors, SIGINT and SIGTERM

const cleanups = []
let cleaning
export const cleanup = () => (cleaning ??= (async () => {
  while (cleanups.length > 0) {
    const step = cleanups.pop()
    try {
      await step.run()
    } catch (error) {
      console.error(`clean-up (${step.name}) failed: ${error.message}`)
    }
  }
})())
/** Registers a clean-up step: `run` (async) normally, `sync` when the process exits without it. */
export const onCleanup = (name, run, sync) => cleanups.push({ name, run, sync })

/** `interrupted` turns true on SIGINT/SIGTERM (exit code 130/143); loads should stop when it does. */
export const runState = { interrupted: false, exitCode: undefined }
const interruptHooks = []
/** `hook` runs on SIGINT/SIGTERM before the clean-up (to stop the load); it may return a promise (3 s at most). */
export const onInterrupt = (hook) => interruptHooks.push(hook)

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (runState.interrupted) return
    runState.interrupted = true
    runState.exitCode = signal === "SIGINT" ? 130 : 143
    console.error(`\n${signal}: stopping the load and cleaning up...`)
    // Let the load generator wind down (it stops within a second) before the servers go away.
    const stopLoads = Promise.allSettled(interruptHooks.map((hook) => hook()))
    Promise.race([stopLoads, sleep(3_000)])
      .then(cleanup)
      .finally(() => process.exit(runState.exitCode))
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

/**
 * Runs `main`, then the clean-up, then exits with main's code (1 when it threw). After SIGINT or
 * SIGTERM the exit is 130 or 143 whatever main did (it may fail as the servers stop under it).
 */
export async function runMain(name, main) {
  let code
  try {
    code = await main()
  } catch (error) {
    if (!runState.interrupted) console.error(`\n${name} failed: ${error.stack ?? error.message}`)
    code = 1
  }
  await cleanup()
  process.exit(runState.interrupted ? runState.exitCode : code)
}

/** A temporary directory, removed at clean-up unless `keep`. */
export function makeTempDir({ keep = false, prefix = "bundles-bench-" } = {}) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  onCleanup(
    "temporary directory",
    async () => {
      if (keep) log(`kept ${tmp}`)
      else fs.rmSync(tmp, { recursive: true, force: true })
    },
    () => keep || fs.rmSync(tmp, { recursive: true, force: true })
  )
  return tmp
}

// ---------------------------------------------------------------------------------------------
// Postgres: psql when installed, else the pg package from the pnpm store

const hasPsql = spawnSync("psql", ["--version"], { encoding: "utf8" }).status === 0

const loadPg = () => {
  const store = path.join(ROOT, "node_modules/.pnpm")
  const dir = fs.existsSync(store) ? fs.readdirSync(store).find((d) => /^pg@\d/.test(d)) : undefined
  if (dir === undefined) return undefined
  return createRequire(import.meta.url)(path.join(store, dir, "node_modules/pg"))
}

/** The Postgres server at `pgUrl`: SQL statements, throw-away databases. */
export function postgres(pgUrl) {
  const target = new URL(pgUrl)

  const psqlArgs = (database) => [
    "-X",
    "-q",
    "-A",
    "-t",
    "-v",
    "ON_ERROR_STOP=1",
    "-h",
    target.hostname.replace(/^\[|\]$/g, ""),
    "-p",
    target.port || "5432",
    "-U",
    decodeURIComponent(target.username || "postgres"),
    "-d",
    database
  ]
  const psqlEnv = () => ({
    ...process.env,
    ...(target.password ? { PGPASSWORD: decodeURIComponent(target.password) } : {})
  })

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
    const url = new URL(pgUrl)
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

  /** Runs a statement whose single value is JSON text (cast it `::text`) and parses it. */
  const sqlJson = async (statement, database) => JSON.parse(await sql(statement, database))

  const dropDatabaseSync = (name) => {
    if (!hasPsql) return
    spawnSync("psql", [...psqlArgs("postgres"), "-c", `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`], {
      env: psqlEnv(),
      timeout: 15_000
    })
  }

  /**
   * Creates a fresh database `bundles_bench_<random>`, dropped at clean-up unless `keep`;
   * returns its name, its URL and the server version.
   */
  async function createDatabase({ keep = false } = {}) {
    const name = `bundles_bench_${randomBytes(6).toString("hex")}`
    await sql(`CREATE DATABASE "${name}"`)
    log(`created database ${name}`)
    let dropped = false
    onCleanup(
      "database",
      async () => {
        if (keep) return log(`kept database ${name}`)
        try {
          await sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
        } catch {
          await sql(`DROP DATABASE IF EXISTS "${name}"`)
        }
        dropped = true
        log(`dropped database ${name}`)
      },
      () => keep || dropped || dropDatabaseSync(name)
    )
    const url = new URL(pgUrl)
    url.pathname = `/${name}`
    const version = await sql("SHOW server_version").catch(() => "?")
    return { name, url: url.toString(), version: version.split(" ")[0] }
  }

  return { sql, sqlJson, createDatabase, dropDatabaseSync, hasPsql }
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers for the set-up and the checks (not for the load itself)

export async function request(method, url, { headers = {}, body, expect = [200] } = {}) {
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

/** `admin(method, path, body?, expect?)` against `${baseUrl}/admin/v1`, resolving to the JSON body. */
export const adminClient = (baseUrl, token) => (method, pathname, body, expect) =>
  request(method, `${baseUrl}/admin/v1${pathname}`, {
    headers: { authorization: `Bearer ${token}` },
    body,
    expect
  }).then((r) => r.json)

/** `api(path)`: a GET of the public API with an API key, resolving to the whole response. */
export const apiClient = (baseUrl, apiKey) => (pathname) =>
  request("GET", `${baseUrl}/api/v1${pathname}`, { headers: { "x-api-key": apiKey } })

/**
 * A keep-alive agent for a load generator. Its `timeout` closes an idle socket after 3 s, before
 * the server's 5 s keep-alive timeout does: Node's agent only shortens its idle timeout to the
 * server's `Keep-Alive: timeout=5` hint when it has one of its own, and without it a request
 * sent on a socket the server is closing at that moment fails with ECONNRESET.
 */
export const keepAliveAgent = (maxSockets) => new http.Agent({ keepAlive: true, maxSockets, timeout: 3_000 })

/**
 * One HTTP call for a load generator, on a keep-alive `agent`. Never throws: resolves to
 * `{ status, headers, text, json, ms }`, or `{ status: 0, error }` when no answer came (a
 * connection error or the timeout; the request may or may not have been processed).
 */
export function httpCall({ agent, url, method = "GET", path: pathname, headers = {}, body, timeoutMs = 10_000 }) {
  return new Promise((resolve) => {
    const started = performance.now()
    let settled = false
    const done = (result) => {
      if (settled) return
      settled = true
      resolve({ ...result, ms: performance.now() - started })
    }
    const target = new URL(url)
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body)
    let req
    try {
      req = http.request({
        agent,
        hostname: target.hostname,
        port: target.port,
        method,
        path: pathname,
        headers: {
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-length": String(payload.length) }),
          ...headers
        }
      }, (res) => {
        const chunks = []
        res.on("data", (chunk) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let json
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          done({ status: res.statusCode, headers: res.headers, text, json })
        })
        res.on("error", (error) => done({ status: 0, error: error.code ?? error.message }))
        res.on("aborted", () => done({ status: 0, error: "ECONNRESET (response aborted)" }))
      })
    } catch (error) {
      done({ status: 0, error: error.code ?? error.message })
      return
    }
    req.on("error", (error) => done({ status: 0, error: error.code ?? error.message }))
    req.setTimeout(timeoutMs, () => {
      done({ status: 0, error: "timeout" })
      req.destroy()
    })
    req.end(payload)
  })
}

// ---------------------------------------------------------------------------------------------
// Our own server

export const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })

export const tail = (file, lines) => {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return ""
  }
}

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

export function buildServer() {
  log("building packages/server (node build.mjs)...")
  const result = spawnSync(process.execPath, ["build.mjs"], { cwd: SERVER_DIR, stdio: "inherit" })
  if (result.status !== 0) throw new Error(`the server build failed (exit ${result.status})`)
}

export function checkBinary() {
  if (!fs.existsSync(SERVER_BIN)) {
    throw new Error(
      `${path.relative(ROOT, SERVER_BIN)} is missing: build it (cd packages/server && node build.mjs) or pass --build`
    )
  }
  const built = fs.statSync(SERVER_BIN).mtimeMs
  const sources = Math.max(
    ...["server", "core", "contract", "sql-pg", "sql-pglite"].map((p) =>
      newestMtime(path.join(ROOT, "packages", p, "src"))
    )
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

/** A random admin token for our own servers. */
export const newAdminToken = () => `bench_${randomBytes(24).toString("hex")}`

/** Environment variables of the caller that must not leak into our own servers. */
const CLEARED_ENV = ["DATABASE_URL", "PORT", "HOST", "TLS_CERT", "TLS_KEY", "BUNDLES_ADMIN_TOKEN", "BUNDLES_DATA_DIR"]

/**
 * Starts `bundles-server serve` on `port` (a free one by default); resolves once it printed
 * "listening on". Its stdout (one JSON line per request) goes to `<tmp>/<name>.log`, its
 * stderr to `<tmp>/<name>.err`. `env` adds variables (undefined removes one); `args` adds
 * arguments to `serve`, `nodeArgs` to node itself. The clean-up stops it with SIGTERM (SIGKILL after 15 s).
 * `onUnexpectedExit` runs when it exits while nobody asked it to (see `kill` and `stop`).
 */
export async function startServer({
  tmp,
  token,
  databaseUrl,
  name = "server",
  port,
  args = [],
  env: extraEnv = {},
  onUnexpectedExit,
  script = SERVER_BIN,
  scriptArgs,
  nodeArgs = []
}) {
  const env = { ...process.env }
  for (const variable of CLEARED_ENV) delete env[variable]
  env.BUNDLES_ADMIN_TOKEN = token
  env.BUNDLES_DATA_DIR = path.join(tmp, "data")
  // The CPU probe (bench/probe.mjs) answers in here.
  env.BENCH_PROBE_DIR = fs.mkdtempSync(path.join(tmp, "probe-"))
  if (databaseUrl !== undefined) env.DATABASE_URL = databaseUrl
  for (const [variable, value] of Object.entries(extraEnv)) {
    if (value === undefined) delete env[variable]
    else env[variable] = String(value)
  }

  port ??= await freePort()
  const logFile = path.join(tmp, `${name}.log`)
  const errFile = path.join(tmp, `${name}.err`)
  const out = fs.openSync(logFile, "w")
  const err = fs.openSync(errFile, "w")
  // The server logs one line per request; a file keeps that off the load generator's CPU.
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      "--import",
      PROBE,
      script,
      ...(scriptArgs ?? ["serve", "--port", String(port), "--host", "127.0.0.1"]),
      ...args
    ],
    { cwd: ROOT, env, stdio: ["ignore", out, err] }
  )
  fs.closeSync(out)
  fs.closeSync(err)

  const server = {
    name,
    child,
    pid: child.pid,
    port,
    token,
    logFile,
    errFile,
    exited: undefined,
    stopping: false,
    url: undefined,
    probeDir: env.BENCH_PROBE_DIR
  }
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      server.exited = { code, signal }
      resolve(server.exited)
      if (!server.stopping) {
        console.error(`\n!! the server exited unexpectedly (code ${code}, signal ${signal})`)
        console.error(tail(errFile, 20) || tail(logFile, 20))
        onUnexpectedExit?.(server)
      }
    })
  )
  server.whenExited = exited
  /** SIGKILL, on purpose: resolves once the process is gone. */
  server.kill = async () => {
    server.stopping = true
    if (!server.exited) child.kill("SIGKILL")
    return await exited
  }
  /** SIGTERM, then SIGKILL after `graceMs`; resolves to the exit, `forced` when SIGKILL was needed. */
  server.stop = async (graceMs = 15_000) => {
    if (server.exited) return { ...server.exited, forced: false }
    server.stopping = true
    child.kill("SIGTERM")
    const result = await Promise.race([exited, sleep(graceMs).then(() => undefined)])
    if (result !== undefined) return { ...result, forced: false }
    child.kill("SIGKILL")
    return { ...(await exited), forced: true }
  }
  onCleanup(
    name,
    async () => {
      if (server.exited) return
      const result = await server.stop()
      if (result.forced) {
        log(`the ${name} did not stop within 15 s of SIGTERM; sent SIGKILL`)
        problem(`the ${name} did not stop within 15 s of SIGTERM`)
      } else {
        log(`${name} stopped (${result.signal ?? `exit ${result.code}`})`)
      }
    },
    () => server.exited || child.kill("SIGKILL")
  )

  const deadline = Date.now() + 120_000
  for (;;) {
    // The banner is on stderr (stdout is not a terminal here, and holds only the JSON log lines).
    const text = fs.readFileSync(errFile, "utf8") + fs.readFileSync(logFile, "utf8")
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
  return server
}

// ---------------------------------------------------------------------------------------------
// Process figures

/** The process and every process below it (the workers of `serve --workers`), from /proc. */
export const processTree = (pid) => {
  if (pid === undefined) return []
  const children = new Map()
  let entries = []
  try {
    entries = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return [pid]
  }
  for (const name of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      if (!children.has(ppid)) children.set(ppid, [])
      children.get(ppid).push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  const all = []
  const visit = (p) => {
    all.push(p)
    for (const child of children.get(p) ?? []) visit(child)
  }
  visit(pid)
  return all
}

/**
 * CPU seconds (user + system) and RSS (kB) of a process tree, as each process counts them
 * itself (`process.cpuUsage`, through bench/probe.mjs, asked with SIGUSR2); a process that does
 * not answer within 2 s is read from /proc instead. Undefined when nothing can be read.
 */
export async function processUsage(pid, probeDir) {
  if (pid === undefined) return undefined
  let cpu = 0
  let rss = 0
  let any = false
  for (const p of processTree(pid)) {
    let sample
    if (probeDir !== undefined) {
      const file = path.join(probeDir, `${p}.json`)
      fs.rmSync(file, { force: true })
      try {
        process.kill(p, "SIGUSR2")
        for (let i = 0; i < 400 && !fs.existsSync(file); i++) await sleep(5)
        sample = JSON.parse(fs.readFileSync(file, "utf8"))
      } catch {
        sample = undefined
      }
    }
    if (sample !== undefined) {
      cpu += (sample.user + sample.system) / 1e6
      rss += sample.rss / 1024
      any = true
    } else {
      const seconds = cpuSeconds(p)
      const kb = rssKb(p)
      if (seconds !== undefined) {
        cpu += seconds
        rss += kb ?? 0
        any = true
      }
    }
  }
  return any ? { cpu, rssKb: rss } : undefined
}

/** Summed VmRSS of a process tree in kB (cheap enough to sample every second). */
export const treeRssKb = (pid) => {
  const tree = processTree(pid)
  if (tree.length === 0) return undefined
  return tree.reduce((sum, p) => sum + (rssKb(p) ?? 0), 0)
}

/** VmRSS of a process in kB, from /proc/<pid>/status; undefined when it cannot be read. */
export const rssKb = (pid) => {
  if (pid === undefined) return undefined
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

/** The process ids of this machine's Postgres: every process named `postgres`; undefined without /proc. */
const postgresPids = () => {
  let entries
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return undefined
  }
  const pids = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") pids.push(Number(entry))
    } catch {
      // gone since the listing
    }
  }
  return pids
}

/**
 * Measures the CPU of this machine's Postgres (its backends, the WAL writer and the rest) from
 * now until `stop()`, which returns it in seconds. Each process is read every half second, so
 * a backend that ends during the run (pgbench's, a pool's idle one) keeps what it was seen to
 * use, and one that starts counts from zero. Undefined without /proc or without Postgres here.
 * Anything else using that Postgres meanwhile counts too.
 */
export const databaseCpuMeter = () => {
  const pids = postgresPids()
  if (pids === undefined || pids.length === 0) return undefined
  const base = new Map()
  const seen = new Map()
  const sample = (first) => {
    for (const pid of first ?? postgresPids() ?? []) {
      const seconds = cpuSeconds(pid)
      if (seconds === undefined) continue
      if (!base.has(pid)) base.set(pid, first === undefined ? 0 : seconds)
      seen.set(pid, seconds)
    }
  }
  sample(pids)
  const timer = setInterval(() => sample(), 500)
  timer.unref()
  return {
    stop: () => {
      clearInterval(timer)
      sample()
      let total = 0
      for (const [pid, seconds] of seen) total += seconds - base.get(pid)
      return total
    }
  }
}

/** User + system CPU time of a process in seconds, from /proc/<pid>/stat (assumes 100 ticks a second). */
export const cpuSeconds = (pid) => {
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
// Seeding through the admin API

/** Imports examples/catalog.json; returns the import's answer. */
export const importCatalog = (admin) => admin("POST", "/catalog", JSON.parse(fs.readFileSync(CATALOG_FILE, "utf8")))

/**
 * Creates an account, funds its main wallet with `funds` cedis (when > 0), creates an API key
 * and sets rate-limit overrides (when given). Returns `{ id, apiKey, keyId, prefix }`.
 */
export async function createAccount(admin, { name, funds = 0, limits, note = "bench" }) {
  const account = await admin("POST", "/accounts", { name }, [201])
  if (funds > 0) await admin("POST", `/accounts/${account.id}/wallet/fund`, { amount: funds, wallet: "main", note })
  const key = await admin("POST", `/accounts/${account.id}/keys`, undefined, [201])
  if (limits !== undefined) await admin("PATCH", `/accounts/${account.id}`, { limits })
  return { id: account.id, apiKey: key.api_key, keyId: key.id, prefix: key.prefix }
}

/**
 * Turns the agent and referral programmes on for `linked` accounts: an agent in the `agent`
 * price group and a referrer, both linked to every one of them, and a referral rate of 2 %.
 */
export async function startCommissions(admin, linked) {
  const agent = await admin("POST", "/accounts", { name: "bench agent", price_group: "agent" }, [201])
  const referrer = await admin("POST", "/accounts", { name: "bench referrer" }, [201])
  for (const id of linked) await admin("PATCH", `/accounts/${id}`, { agent_id: agent.id, referred_by: referrer.id })
  await admin("PUT", "/commissions", { referral_percent: 2 })
  log(`commissions on: agent ${agent.id}, referrer ${referrer.id} (2 %) for accounts ${linked.join(", ")}`)
  return { agent: agent.id, referrer: referrer.id }
}

/**
 * Every successful order of an account with an agent or a referrer holds exactly the
 * commissions it earns (the agent's price difference when positive, 2 % rounded down), and no
 * other order holds any; the earners' wallets equal what their commissions sum to.
 */
async function commissionChecks(pg, database) {
  const figures = await pg.sqlJson(
    `WITH expected AS (
       SELECT o.id, 'agent' AS wallet, a.agent_id AS earner,
         o.amount - COALESCE(p.price, b.base_price) AS amount
       FROM orders o JOIN accounts a ON a.id = o.account_id JOIN accounts ag ON ag.id = a.agent_id
       JOIN bundles b ON b.id = o.bundle_id
       LEFT JOIN bundle_prices p ON p.bundle_id = b.id AND p.price_group_id = ag.price_group_id
       WHERE o.status = 'successful' AND o.mode = 'live'
       UNION ALL
       SELECT o.id, 'referral', a.referred_by, o.amount * (SELECT referral_bps FROM commission_rates) / 10000
       FROM orders o JOIN accounts a ON a.id = o.account_id
       WHERE o.status = 'successful' AND o.mode = 'live' AND a.referred_by IS NOT NULL
     ),
     paid AS (
       SELECT order_id AS id, wallet, account_id AS earner, sum(amount) AS amount, count(*) AS entries
       FROM ledger_entries WHERE reason IN ('commission', 'commission_reversal') GROUP BY order_id, wallet, account_id
     )
     SELECT json_build_object(
       'expected', (SELECT count(*) FROM expected WHERE amount > 0),
       'paid', (SELECT count(*) FROM paid),
       'missing_or_wrong', (SELECT count(*) FROM expected e WHERE e.amount > 0 AND NOT EXISTS (
         SELECT 1 FROM paid p WHERE p.id = e.id AND p.wallet = e.wallet AND p.earner = e.earner
           AND p.amount = e.amount AND p.entries = 1)),
       'unexpected', (SELECT count(*) FROM paid p WHERE NOT EXISTS (
         SELECT 1 FROM expected e WHERE e.id = p.id AND e.wallet = p.wallet AND e.amount > 0)),
       'earners_off', (SELECT count(*) FROM wallets w WHERE w.kind IN ('agent', 'referral') AND w.balance <> (
         SELECT coalesce(sum(l.amount), 0) FROM ledger_entries l WHERE l.account_id = w.account_id
           AND l.wallet = w.kind AND l.reason IN ('commission', 'commission_reversal')))
     )::text`,
    database
  )
  const issues = []
  for (const key of ["missing_or_wrong", "unexpected", "earners_off"]) {
    if (Number(figures[key]) !== 0) issues.push(`${key}: ${figures[key]}`)
  }
  return { figures, issues }
}

/** Every bundle of every network (active or not), cheapest first, with its network's name and id. */
export async function allBundles(api) {
  const networks = (await api("/networks")).json.networks
  const all = []
  for (const network of networks) {
    const { bundles } = (await api(`/networks/${network.id}/bundles`)).json
    for (const b of bundles) all.push({ ...b, network: network.name, networkId: network.id })
  }
  all.sort((a, b) => a.price - b.price)
  return all
}

/** Every active bundle of every network, cheapest first, with its network's name. */
export const activeBundles = async (api) => (await allBundles(api)).filter((b) => b.is_active)

/** Cedis (a JSON number with at most two decimals) to integer pesewas, without float arithmetic. */
export const pesewas = (cedis) => {
  const match = /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(String(cedis))
  if (match === null) throw new Error(`not an amount in cedis: ${cedis}`)
  const value = BigInt(match[2]) * 100n + BigInt((match[3] ?? "").padEnd(2, "0"))
  return match[1] === "-" ? -value : value
}

// ---------------------------------------------------------------------------------------------
// Server log: requests by route and status, server errors

/** Tallies a server's JSON-lines log: requests by route and status, notable lines, 5xx. */
export async function readServerLog(file) {
  const routes = new Map()
  const notable = []
  const serverErrors = []
  const levels = {}
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
    const level = String(entry.logLevel ?? "")
    levels[level] = (levels[level] ?? 0) + 1
    const a = entry.annotations ?? {}
    if (entry.message === "request" && a.path !== undefined) {
      const route = `${a.method} ${String(a.path).replace(/\/\d+(?=\/|$)/g, "/{id}")}`
      const key = `${route} ${a.status}`
      routes.set(key, (routes.get(key) ?? 0) + 1)
      if (a.status >= 500) {
        if (notable.length < 10) notable.push(line.slice(0, 400))
        if (serverErrors.length < 20) serverErrors.push(line.slice(0, 600))
      }
    } else if (/^(WARN|WARNING|ERROR|FATAL)$/i.test(level) && notable.length < 10) {
      notable.push(line.slice(0, 400))
    }
  }
  const count = (predicate) => [...routes].filter(([key]) => predicate(key)).reduce((n, [, v]) => n + v, 0)
  return {
    routes,
    notable,
    serverErrors,
    levels,
    jsonLines,
    otherLines,
    status500: count((key) => / 500$/.test(key)),
    errorLines: (levels.ERROR ?? 0) + (levels.Error ?? 0) + (levels.FATAL ?? 0) + (levels.Fatal ?? 0)
  }
}

/**
 * The request logs of several servers together: requests by route and status, how many were
 * answered 500 (also found by a plain search for `"status":500`), ERROR and WARN lines, and a
 * few samples of those for the report.
 */
export async function scanServerLogs(servers) {
  let status500 = 0
  let errorLines = 0
  let warnLines = 0
  let otherLines = 0
  const samples = []
  const routes = new Map()
  for (const server of servers) {
    if (server.logFile === undefined || !fs.existsSync(server.logFile)) continue
    const tally = await readServerLog(server.logFile)
    const raw = fs.readFileSync(server.logFile, "utf8").split("\n").filter((l) => l.includes("\"status\":500")).length
    status500 += Math.max(tally.status500, raw)
    errorLines += tally.errorLines
    warnLines += (tally.levels.WARN ?? 0) + (tally.levels.WARNING ?? 0) + (tally.levels.Warning ?? 0)
    otherLines += tally.otherLines
    for (const [key, n] of tally.routes) routes.set(key, (routes.get(key) ?? 0) + n)
    for (const line of [...tally.serverErrors, ...tally.notable]) {
      const sample = `${server.name}: ${line}`
      if (samples.length < 8 && !samples.includes(sample)) samples.push(sample)
    }
  }
  return { status500, errorLines, warnLines, otherLines, samples, routes }
}

// ---------------------------------------------------------------------------------------------
// Checks after a run

/**
 * The orders reconciliation shared by the scripts: every order the load generator saw
 * acknowledged must exist exactly once, orders answered with a 4xx must not exist, and the
 * total in the database must be the acknowledged ones plus those whose outcome the client
 * never saw (in flight when a run stopped, timed out, 5xx) that exist.
 *
 * `count(key)` says how many orders the database holds for a key (a phone number, a
 * reference); `ackSample` may be every acknowledged key or a sample. At most `maxLookups`
 * unknown keys are looked up (then the result is not exact).
 */
export async function reconcileOrders({
  total,
  acknowledged,
  unknown,
  rejectedSample = [],
  ackSample = [],
  count,
  maxLookups = Infinity
}) {
  let unknownFound = 0
  let unknownChecked = 0
  const duplicates = []
  for (const key of unknown.slice(0, maxLookups)) {
    const n = await count(key)
    unknownChecked++
    unknownFound += Math.min(n, 1)
    if (n > 1) duplicates.push({ key, n })
  }
  const rejectedFoundKeys = []
  for (const key of rejectedSample) {
    if ((await count(key)) > 0) rejectedFoundKeys.push(key)
  }
  const missing = []
  const duplicated = []
  for (const key of ackSample) {
    const n = await count(key)
    if (n === 0) missing.push(key)
    if (n > 1) duplicated.push(key)
  }
  const rejectedFound = rejectedFoundKeys.length
  const expected = acknowledged + unknownFound + rejectedFound
  return {
    total,
    acknowledged,
    unknown: unknown.length,
    unknownChecked,
    unknownFound,
    unknownDuplicates: duplicates,
    rejectedFound,
    rejectedFoundKeys,
    ackChecked: ackSample.length,
    ackMissing: missing.length,
    ackDuplicated: duplicated.length,
    missing,
    duplicated,
    expected,
    exact: unknownChecked === unknown.length,
    match: total === expected
  }
}

/** Every order in the database, as plain objects (amount in pesewas as a string). */
export const fetchOrders = (pg, database) =>
  pg.sqlJson(
    `SELECT coalesce(json_agg(o ORDER BY o.id), '[]')::text FROM (
       SELECT id::text, order_number, account_id, bundle_id, phone_number, amount::text, status, reference,
         next_check_at, created_at, settled_at
       FROM orders
     ) o`,
    database
  )

/** How many orders are pending. */
export const pendingCount = async (pg, database) =>
  Number(await pg.sql("SELECT count(*) FROM orders WHERE status = 'pending'", database))

/**
 * The money invariants, straight from the database (independently of GET /admin/v1/audit):
 * one debit of the order's amount per order, one refund per failed order and none for the
 * others, no negative balance, every ledger entry's balance_after equal to the running sum of
 * its wallet's entries, and per account: balance = ledger sum = funded − orders not failed.
 * `funded` maps account id → the pesewas the script funded it with (bigint); the database's
 * own funding entries must add up to it.
 */
export async function moneyChecks(pg, database, funded) {
  const invariants = await pg.sqlJson(
    `SELECT json_build_object(
       'orders', (SELECT count(*) FROM orders),
       'ledger_entries', (SELECT count(*) FROM ledger_entries),
       'pending', (SELECT count(*) FROM orders WHERE status = 'pending'),
       'orders_debited_not_once', (SELECT count(*) FROM orders o WHERE (
         SELECT count(*) FROM ledger_entries l WHERE l.order_id = o.id AND l.reason = 'order') <> 1),
       'debits_of_wrong_amount', (SELECT count(*) FROM orders o JOIN ledger_entries l
         ON l.order_id = o.id AND l.reason = 'order' WHERE l.amount <> -o.amount),
       'refunds_not_matching_status', (SELECT count(*) FROM orders o WHERE (
         SELECT count(*) FROM ledger_entries l WHERE l.order_id = o.id AND l.reason = 'refund')
         <> CASE WHEN o.status = 'failed' THEN 1 ELSE 0 END),
       'refunds_of_wrong_amount', (SELECT count(*) FROM orders o JOIN ledger_entries l
         ON l.order_id = o.id AND l.reason = 'refund' WHERE l.amount <> o.amount),
       'debits_not_from_main', (SELECT count(*) FROM ledger_entries
         WHERE reason IN ('order', 'refund') AND wallet <> 'main'),
       'negative_balances', (SELECT count(*) FROM wallets WHERE balance < 0),
       'negative_balance_after', (SELECT count(*) FROM ledger_entries WHERE balance_after < 0),
       'broken_ledger_chain', (SELECT count(*) FROM (
         SELECT balance_after, sum(amount) OVER (PARTITION BY account_id, wallet ORDER BY id) AS running
         FROM ledger_entries) c WHERE c.balance_after <> c.running)
     )::text`,
    database
  )
  const accounts = await pg.sqlJson(
    `SELECT coalesce(json_agg(t ORDER BY t.account_id), '[]')::text FROM (
       SELECT w.account_id, w.balance::text AS balance,
         (SELECT coalesce(sum(amount), 0) FROM ledger_entries l
           WHERE l.account_id = w.account_id AND l.wallet = 'main')::text AS ledger_sum,
         (SELECT coalesce(sum(amount), 0) FROM ledger_entries l
           WHERE l.account_id = w.account_id AND l.wallet = 'main' AND l.reason = 'funding')::text AS funded,
         (SELECT coalesce(sum(amount), 0) FROM orders o
           WHERE o.account_id = w.account_id AND o.status <> 'failed')::text AS spent,
         (SELECT count(*) FROM orders o WHERE o.account_id = w.account_id) AS orders,
         (SELECT count(*) FROM orders o WHERE o.account_id = w.account_id AND o.status = 'failed') AS failed
       FROM wallets w WHERE w.kind = 'main'
     ) t`,
    database
  )
  const issues = []
  for (
    const key of [
      "orders_debited_not_once",
      "debits_of_wrong_amount",
      "refunds_not_matching_status",
      "refunds_of_wrong_amount",
      "debits_not_from_main",
      "negative_balances",
      "negative_balance_after",
      "broken_ledger_chain"
    ]
  ) {
    if (Number(invariants[key]) !== 0) issues.push(`${key}: ${invariants[key]}`)
  }
  for (const a of accounts) {
    const balance = BigInt(a.balance)
    const expectedFunding = funded.get(a.account_id)
    if (balance !== BigInt(a.ledger_sum)) {
      issues.push(`account ${a.account_id}: balance ${a.balance} ≠ ledger sum ${a.ledger_sum} (pesewas)`)
    }
    if (expectedFunding !== undefined && BigInt(a.funded) !== expectedFunding) {
      issues.push(`account ${a.account_id}: funding entries ${a.funded} ≠ ${expectedFunding} funded by the script`)
    }
    const funding = expectedFunding ?? BigInt(a.funded)
    if (balance !== funding - BigInt(a.spent)) {
      issues.push(
        `account ${a.account_id}: balance ${a.balance} ≠ funded ${funding} − orders not failed ${a.spent} (pesewas)`
      )
    }
    if (balance < 0n) issues.push(`account ${a.account_id}: negative balance ${a.balance}`)
  }
  // Commissions (`startCommissions`): every successful order earned exactly its own.
  const commissions = await commissionChecks(pg, database)
  console.log(`  commissions        ${JSON.stringify(commissions.figures)}`)
  if (Number(commissions.figures.paid) > 0 || Number(commissions.figures.expected) > 0) {
    issues.push(...commissions.issues.map((issue) => `commissions: ${issue}`))
  }
  return { invariants, accounts, issues }
}

/** GET /admin/v1/audit, printed; a problem unless ok. */
export async function auditCheck(admin) {
  const audit = await admin("GET", "/audit")
  console.log(`  audit              ${JSON.stringify(audit)}`)
  if (audit.ok !== true) problem("GET /admin/v1/audit did not report ok: true")
  return audit
}

// ---------------------------------------------------------------------------------------------
// Small utilities for the load generators

/** A seeded pseudo-random generator (mulberry32): `rand()` in [0, 1). */
export function seededRandom(seed) {
  let a = seed >>> 0
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  rand.int = (n) => Math.floor(rand() * n)
  rand.pick = (list) => list[Math.floor(rand() * list.length)]
  /** Picks a key of `weights` ({ name: weight }) in proportion to its weight. */
  rand.weighted = (weights) => {
    const entries = Object.entries(weights)
    let r = rand() * entries.reduce((s, [, w]) => s + w, 0)
    for (const [name, w] of entries) {
      if ((r -= w) < 0) return name
    }
    return entries.at(-1)[0]
  }
  return rand
}

/** A counter of named things: `inc(key)`, `entries()` sorted by key. */
export const tally = () => {
  const counts = new Map()
  return {
    inc: (key, n = 1) => counts.set(key, (counts.get(key) ?? 0) + n),
    get: (key) => counts.get(key) ?? 0,
    entries: () => [...counts].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    toJSON: () => Object.fromEntries(counts)
  }
}

export { sleep }
