#!/usr/bin/env node
// How fast the `bundles` binary starts: the median wall time of fresh processes (spawnSync, one
// after the other) of `bundles --version`, `--help` and `balance` (one API call against a
// server), next to `node -e 0` on the same machine, and each as a ratio to it. The commands
// take turns in every round, so drift of the machine touches them all alike.
//
//   node bench/cli-startup.mjs                   # own server on embedded PGlite, 21 runs each
//   node bench/cli-startup.mjs --runs 51 --build
//   node bench/cli-startup.mjs --url http://127.0.0.1:8080 --key "$(cat .bundles/demo-api-key)"
//
// The binary answers `--version` alone without loading its program; everything else starts the
// program from a V8 code cache once one run wrote it. The figures are those of the cached
// binary (as people run it), plus `--help` with the cache turned off
// (NODE_DISABLE_COMPILE_CACHE=1), which is what a first run costs. The cache goes to a
// temporary directory, not the user's. Target: `bundles --version` within 2x of `node -e 0`;
// exit status 1 when it is missed, 2 for a usage error.
import { spawnSync } from "node:child_process"
import * as os from "node:os"
import * as path from "node:path"
import {
  adminClient,
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

const USAGE = `Usage: node bench/cli-startup.mjs [options]

  --runs N     timed starts of each command (default 21); the median is reported
  --url URL    time \`bundles balance\` against a running server (loopback only), with
  --key KEY    one of its API keys (its account's limits must allow 2 x runs balance calls a minute)
  --build      run node packages/cli/build.mjs first
  --help`

const TARGET = 2
const CLI = path.join(ROOT, "packages/cli/dist/bundles.mjs")

const opts = parseOptions(USAGE, {
  runs: { type: "string", default: "21" },
  url: { type: "string" },
  key: { type: "string" },
  build: { type: "boolean", default: false }
})
const runs = intOption(opts, "runs", 3, 1000)
if ((opts.url === undefined) !== (opts.key === undefined)) fail(2, `--url and --key go together\n\n${USAGE}`)
if (opts.url !== undefined && !isLoopback(new URL(opts.url).hostname)) fail(2, "--url must be a loopback address")

/** Wall time of one fresh process, in milliseconds; throws when it does not exit 0. */
const time = (args, env) => {
  const started = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" })
  const millis = Number(process.hrtime.bigint() - started) / 1e6
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return millis
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

runMain("cli-startup", async () => {
  if (opts.build) {
    log("building packages/cli (node build.mjs)...")
    if (spawnSync(process.execPath, [path.join(ROOT, "packages/cli/build.mjs")], { stdio: "inherit" }).status !== 0) {
      throw new Error("the CLI build failed")
    }
  }
  const tmp = makeTempDir({ prefix: "bundles-cli-startup-" })
  let baseUrl = opts.url
  let apiKey = opts.key
  if (baseUrl === undefined) {
    const token = newAdminToken()
    // Limits far above the runs, so `balance` never waits for the rate limiter.
    const server = await startServer({
      tmp,
      token,
      env: { BUNDLES_RATE_LIMITS: "all=100000,orders=10,balance=100000" }
    })
    const admin = adminClient(server.url, token)
    await importCatalog(admin)
    apiKey = (await createAccount(admin, { name: "Start-up bench", funds: 100 })).apiKey
    baseUrl = server.url
    log(`server on ${baseUrl}`)
  }

  // A clean environment: the cache in the temporary directory, no saved login, no colour.
  const base = {
    PATH: process.env.PATH ?? "",
    HOME: tmp,
    XDG_CACHE_HOME: path.join(tmp, "cache"),
    BUNDLES_CONFIG: path.join(tmp, "config.json"),
    BUNDLES_API_KEY: apiKey,
    BUNDLES_BASE_URL: baseUrl,
    NO_COLOR: "1"
  }
  const commands = [
    { name: "node -e 0", args: ["-e", "0"], env: base },
    { name: "bundles --version", args: [CLI, "--version"], env: base },
    { name: "bundles --help", args: [CLI, "--help"], env: base },
    { name: "bundles balance", args: [CLI, "balance"], env: base },
    {
      name: "bundles --help (no code cache)",
      args: [CLI, "--help"],
      env: { ...base, NODE_DISABLE_COMPILE_CACHE: "1" }
    }
  ]
  // One untimed run each: it writes the code cache, and warms the server and the OS's file cache.
  for (const command of commands) time(command.args, command.env)
  const samples = commands.map(() => [])
  log(`${runs} runs of ${commands.length} commands...`)
  for (let round = 0; round < runs; round++) {
    commands.forEach((command, i) => samples[i].push(time(command.args, command.env)))
  }

  const medians = samples.map((list) => quantile([...list].sort((a, b) => a - b), 0.5))
  const p90s = samples.map((list) => quantile([...list].sort((a, b) => a - b), 0.9))
  const baseline = medians[0]
  const width = Math.max(...commands.map((c) => c.name.length))
  console.log(
    `\nbundles start-up: median of ${runs} runs (node ${process.version}, ${os.platform()} ${os.arch()}, ${os.cpus().length} CPUs)\n`
  )
  console.log(`${"command".padEnd(width)}  ${"median".padStart(9)}  ${"p90".padStart(9)}  x node -e 0`)
  commands.forEach((command, i) => {
    console.log(
      `${command.name.padEnd(width)}  ${`${medians[i].toFixed(1)} ms`.padStart(9)}  ${
        `${p90s[i].toFixed(1)} ms`.padStart(9)
      }  ${(medians[i] / baseline).toFixed(2).padStart(11)}`
    )
  })
  const ratio = medians[1] / baseline
  const met = ratio <= TARGET
  console.log(
    `\ntarget: bundles --version within ${TARGET}x of node -e 0: ${met ? "met" : "MISSED"} (${ratio.toFixed(2)}x)`
  )
  return met ? 0 : 1
})
