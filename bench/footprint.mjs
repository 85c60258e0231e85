#!/usr/bin/env node
// The embedded server's resident memory on a small machine (issue: a 1 GB VPS beside the OS):
//
//   node bench/footprint.mjs [--idle 45] [--json FILE]
//
// 1. `serve --demo` in an empty data directory (a first start: the database made, migrated,
//    the demo catalogue and account loaded): the process's peak RSS (VmHWM, the kernel's own
//    high-water mark, so no moment is missed between samples), read once it answers /readyz
//    and the demo key is written, then stopped.
// 2. `serve --demo` again on that directory (a restart): its peak, its RSS 10 s after ready,
//    and after --idle seconds with no request (V8 shrinks its young generation when idle).
//
// Targets (docs/benchmarks.md): a first start at most 300 MB at any moment, idle at most
// 200 MB. `pnpm bench:memory` measures the third target (5 minutes of orders).
import * as fs from "node:fs"
import * as path from "node:path"
import {
  checkBinary,
  fail,
  freePort,
  intOption,
  log,
  makeTempDir,
  mb,
  newAdminToken,
  parseOptions,
  request,
  rssKb,
  runMain,
  sleep,
  startServer
} from "./lib.mjs"

const USAGE = `Usage: node bench/footprint.mjs [--idle SECONDS] [--json FILE] [--keep]`
const opts = parseOptions(USAGE, {
  idle: { type: "string", default: "45" },
  json: { type: "string" },
  keep: { type: "boolean", default: false }
})
const IDLE = intOption(opts, "idle", 10, 600)

const FIRST_TARGET_MB = 300
const IDLE_TARGET_MB = 200

/** The kernel's peak resident set of a process (VmHWM), in kB. */
const peakKb = (pid) => {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

/** Starts `serve --demo` on the data directory under `tmp`; resolves once ready and seeded. */
async function demo(tmp, token, name) {
  const started = Date.now()
  const port = await freePort()
  const server = await startServer({
    tmp,
    token,
    name,
    scriptArgs: ["serve", "--demo", "--host", "127.0.0.1", "--port", String(port)]
  }).catch((error) => fail(1, error.message))
  for (;;) {
    const ready = await request("GET", `${server.url}/readyz`, { expect: [200, 503] }).catch(() => undefined)
    if (ready?.status === 200 && fs.existsSync(path.join(tmp, "data", "demo-api-key"))) break
    if (Date.now() - started > 120_000) fail(1, `${name}: not ready within 120 s`)
    await sleep(100)
  }
  return { server, readyMs: Date.now() - started }
}

async function main() {
  checkBinary()
  const tmp = makeTempDir({ keep: opts.keep })
  const token = newAdminToken()

  log("first serve --demo in an empty data directory")
  const first = await demo(tmp, token, "first-start")
  await sleep(1_000)
  const firstPeak = peakKb(first.server.pid)
  log(`first start: ready in ${first.readyMs} ms, peak RSS ${mb(firstPeak)}`)
  await first.server.stop()

  log("restart on the same data directory")
  const again = await demo(tmp, token, "restart")
  await sleep(10_000)
  const idle10 = rssKb(again.server.pid)
  log(`restart: ready in ${again.readyMs} ms, RSS ${mb(idle10)} 10 s later; waiting ${IDLE} s idle`)
  await sleep((IDLE - 10) * 1_000)
  const idleLate = rssKb(again.server.pid)
  const restartPeak = peakKb(again.server.pid)
  await again.server.stop()

  const figures = {
    firstStart: { readyMs: first.readyMs, peakKb: firstPeak },
    restart: { readyMs: again.readyMs, peakKb: restartPeak, idle10Kb: idle10, idleKb: idleLate, idleSeconds: IDLE }
  }
  const verdict = (kb, target) => kb === undefined ? "n/a" : kb / 1024 <= target ? "met" : "not met"
  console.log("\n| figure | measured | target |")
  console.log("|---|---|---|")
  console.log(
    `| first serve --demo, peak RSS | ${mb(firstPeak)} (ready in ${first.readyMs} ms) | ≤ ${FIRST_TARGET_MB} MB: ${
      verdict(firstPeak, FIRST_TARGET_MB)
    } |`
  )
  console.log(`| restart, peak RSS | ${mb(restartPeak)} (ready in ${again.readyMs} ms) | reported |`)
  console.log(`| idle 10 s after a restart | ${mb(idle10)} | reported |`)
  console.log(
    `| idle ${IDLE} s after a restart | ${mb(idleLate)} | ≤ ${IDLE_TARGET_MB} MB: ${
      verdict(idleLate, IDLE_TARGET_MB)
    } |`
  )
  if (opts.json !== undefined) fs.writeFileSync(opts.json, JSON.stringify(figures, null, 2))
  return 0
}

runMain("footprint", main)
