#!/usr/bin/env node
// Crash test: order load (commissions on) on a server process, `kill -9` at a random moment,
// restart on the same database, retry every request whose answer was lost, and after a few such
// cycles let the worker recover what the crashes left pending; then audit: every acknowledged
// order exists once, no order debited, refunded or commissioned twice, wallets equal their
// ledgers and what was funded minus what was spent, nothing negative, nothing left pending.
//   node bench/crash.mjs                # 3 cycles of 2–5 s of load, then the recovery
//   node bench/crash.mjs --cycles 5 --seed 42
// See bench/README.md. Only 127.0.0.1 is ever targeted; a run takes about a minute (the
// server checks an order whose fulfilment was never recorded 30 s after it was placed).
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  activeBundles,
  adminClient,
  apiClient,
  auditCheck,
  buildServer,
  checkBinary,
  createAccount,
  DEFAULT_PG,
  fetchOrders,
  freePort,
  httpCall,
  importCatalog,
  intOption,
  keepAliveAgent,
  log,
  makeTempDir,
  moneyChecks,
  newAdminToken,
  onInterrupt,
  parseOptions,
  pendingCount,
  pesewas,
  postgres,
  printProblems,
  problem,
  problems,
  reconcileOrders,
  requireLoopbackPg,
  runMain,
  runState,
  scanServerLogs,
  seededRandom,
  sleep,
  startCommissions,
  startServer,
  tally
} from "./lib.mjs"

const USAGE = `Usage: node bench/crash.mjs [options]

Starts a server on a fresh Postgres database (dropped afterwards) and, --cycles times: puts order
load on it, kills it with SIGKILL at a random moment, restarts it and retries every request whose
answer was lost. Then waits for the worker to settle what the crashes left pending, and audits.

  --cycles N           load → kill -9 → restart cycles (default 3)
  --min-load N         least seconds of load before a kill (default 2)
  --max-load N         most seconds of load before a kill (default 5)
  --concurrency N      orders in flight (default 16)
  --pending-seconds N  how long the simulator keeps a ...9999 order pending (default 5)
  --recovery-wait N    most seconds to wait after the last restart for pending orders (default 45)
  --timeout N          per-request timeout in seconds (default 10)
  --seed N             seed of the random choices (default: random; printed)
  --pg URL             Postgres server (default ${DEFAULT_PG})
  --build              rebuild packages/server/dist/bin.mjs first
  --keep               keep the database and the server logs (paths are printed)
  --json FILE          also write the figures as JSON
  --help

Exit status: 0 when every check passed, 1 when one failed, 2 usage error, 130 interrupted.`

const opts = parseOptions(USAGE, {
  cycles: { type: "string", default: "3" },
  "min-load": { type: "string", default: "2" },
  "max-load": { type: "string", default: "5" },
  concurrency: { type: "string", default: "16" },
  "pending-seconds": { type: "string", default: "5" },
  "recovery-wait": { type: "string", default: "45" },
  timeout: { type: "string", default: "10" },
  seed: { type: "string" },
  pg: { type: "string", default: DEFAULT_PG },
  build: { type: "boolean", default: false },
  keep: { type: "boolean", default: false },
  json: { type: "string" }
})
const CYCLES = intOption(opts, "cycles", 1, 20)
const MIN_LOAD = intOption(opts, "min-load", 1, 60)
const MAX_LOAD = intOption(opts, "max-load", MIN_LOAD, 120)
const CONCURRENCY = intOption(opts, "concurrency", 1, 256)
const PENDING_SECONDS = intOption(opts, "pending-seconds", 1, 60)
const RECOVERY_WAIT = intOption(opts, "recovery-wait", 5, 300)
const TIMEOUT_MS = intOption(opts, "timeout", 1, 120) * 1000
if (opts.seed === undefined) opts.seed = String(randomBytes(4).readUInt32BE(0) % 1_000_000)
const SEED = intOption(opts, "seed", 0, 2 ** 32 - 1)
requireLoopbackPg(opts.pg)

const HIGH_LIMITS = { all: 1_000_000, orders: 1_000_000, balance: 1_000_000 }
const ACCOUNT_PLAN = [
  { name: "crash 1", funds: 100_000 },
  { name: "crash 2", funds: 100_000 },
  { name: "crash 3", funds: 100_000 },
  // Little money: concurrent orders race for the last cedis, across the crashes too.
  { name: "crash tight", funds: 60, tight: true }
]

const rand = seededRandom(SEED)
const runId = randomBytes(3).toString("hex")

// ---------------------------------------------------------------------------------------------
// State

/** reference → { account, order, answer: "ack" | "no" | "unknown", orderNumber, retried, cycle } */
const refs = new Map()
/** order number → { accountId, reference, amount, phone } */
const acked = new Map()
const inflight = new Set()
const byStatus = tally()
const unexpected = []
const figures = { requests: 0, fresh: 0, insufficient: 0, status500: 0, retries: 0 }
const cycles = []

let server
let agent
let accounts = []
let orderBundles = []
const bundlePrice = new Map()
let stopLoad = false
let serverDied = false
let refCount = 0

const phone = () => {
  const roll = rand()
  for (;;) {
    let digits = String(rand.int(100_000_000)).padStart(8, "0")
    if (roll < 0.06) digits = digits.slice(0, 4) + "0000"
    else if (roll < 0.16) digits = digits.slice(0, 4) + "9999"
    else if (digits.endsWith("0000") || digits.endsWith("9999")) continue
    return `02${digits}`
  }
}

const body = (o) => JSON.stringify({ bundle_id: o.bundleId, phone_number: o.phone, reference: o.reference })

function post(order, account) {
  figures.requests++
  return httpCall({
    agent,
    url: server.url,
    method: "POST",
    path: "/api/v1/orders",
    headers: { "content-type": "application/json", "x-api-key": account.apiKey },
    body: body(order),
    timeoutMs: TIMEOUT_MS
  }).then((res) => {
    byStatus.inc(res.status === 0 ? `no answer (${res.error})` : `${res.status} ${res.json?._tag ?? "ok"}`)
    if (res.status >= 500) {
      figures.status500++
      problem(`POST /orders answered ${res.status}: ${res.text.slice(0, 300)}`)
    }
    return res
  })
}

/** Checks a 200 against what was sent and records the order as acknowledged. */
function acknowledge(entry, res) {
  const o = res.json?.order
  if (typeof o?.order_number !== "string") {
    unexpected.push({ status: 200, body: res.text.slice(0, 300) })
    return undefined
  }
  const { order, account } = entry
  if (o.reference !== order.reference || o.phone_number !== order.phone) {
    problem(
      `order ${o.order_number} came back as ${o.reference}/${o.phone_number}, sent ${order.reference}/${order.phone}`
    )
  }
  if (pesewas(o.amount_paid) !== bundlePrice.get(order.bundleId)) {
    problem(
      `order ${o.order_number} paid ${o.amount_paid}, the bundle costs ${Number(bundlePrice.get(order.bundleId)) / 100}`
    )
  }
  if (entry.orderNumber !== undefined && entry.orderNumber !== o.order_number) {
    problem(`reference ${order.reference} answered ${o.order_number} after ${entry.orderNumber}`)
  }
  entry.answer = "ack"
  entry.orderNumber = o.order_number
  if (!acked.has(o.order_number)) {
    acked.set(o.order_number, {
      accountId: account.id,
      reference: order.reference,
      amount: bundlePrice.get(order.bundleId),
      phone: order.phone
    })
  }
  return o
}

async function worker(cycle) {
  while (!stopLoad && !runState.interrupted && !serverDied) {
    const account = rand() < 0.15 ? accounts.find((a) => a.tight) : rand.pick(accounts.filter((a) => !a.tight))
    const order = { bundleId: rand.pick(orderBundles).id, phone: phone(), reference: `c-${runId}-${++refCount}` }
    const entry = { account, order, answer: "unknown", orderNumber: undefined, cycle, retried: undefined }
    refs.set(order.reference, entry)
    inflight.add(order.reference)
    const res = await post(order, account)
    inflight.delete(order.reference)
    if (res.status === 200) {
      if (res.headers["idempotent-replayed"] === "true") {
        problem(`a new reference ${order.reference} was answered as a replay`)
      }
      const o = acknowledge(entry, res)
      if (o !== undefined) figures.fresh++
    } else if (res.status === 400 && res.json?._tag === "InsufficientBalance") {
      entry.answer = "no"
      figures.insufficient++
      if (!account.tight) problem(`insufficient balance on ${account.name}`)
    } else if (res.status !== 0) {
      entry.answer = "no"
      if (res.status < 500) unexpected.push({ status: res.status, body: res.text.slice(0, 300) })
    }
    // status 0: no answer, the outcome is unknown until the retry after the restart.
  }
}

// ---------------------------------------------------------------------------------------------
// Server processes

let pg
let db
let tmp
let token
let port
let starts = 0
const started = []

async function start() {
  starts++
  const s = await startServer({
    tmp,
    token,
    databaseUrl: db.url,
    port,
    name: `server start ${starts}`,
    env: {
      BUNDLES_SIMULATOR_PENDING_SECONDS: PENDING_SECONDS,
      BUNDLES_WORKERS: 1,
      BUNDLES_RATE_LIMIT_STORE: undefined,
      BUNDLES_RATE_LIMITS: undefined,
      BUNDLES_POLL_SECONDS: undefined,
      BUNDLES_AUTH_FAILURE_LIMIT: undefined
    },
    onUnexpectedExit: (dead) => {
      serverDied = true
      problem(`the server (pid ${dead.pid}) died without being killed`)
    }
  })
  started.push(s)
  return s
}

/** Waits until Postgres has ended every session of the killed process (so the snapshot is final). */
async function waitForSessionsGone() {
  const until = Date.now() + 10_000
  for (;;) {
    const n = Number(
      await pg.sql(
        `SELECT count(*) FROM pg_stat_activity WHERE datname = '${db.name}' AND application_name = 'bundles-server'`
      )
    )
    if (n === 0) return true
    if (Date.now() > until) return false
    await sleep(100)
  }
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  console.log("Data bundle reseller server: crash test (kill -9 under order load, restart, recover)")
  console.log(
    `seed ${SEED}, ${CYCLES} cycles of ${MIN_LOAD}–${MAX_LOAD} s of load at ${CONCURRENCY} in flight, ` +
      `pending orders settle after ${PENDING_SECONDS} s`
  )
  if (opts.build) buildServer()
  checkBinary()
  pg = postgres(opts.pg)
  tmp = makeTempDir({ keep: opts.keep, prefix: "bundles-crash-" })
  db = await pg.createDatabase({ keep: opts.keep })
  token = newAdminToken()
  port = await freePort()
  onInterrupt(() => {
    stopLoad = true
  })

  server = await start()
  log(`server pid ${server.pid} listening on ${server.url} (Postgres ${db.version}, ${db.name})`)
  agent = keepAliveAgent(CONCURRENCY * 2)
  const admin = () => adminClient(server.url, token)
  await importCatalog(admin())
  const funded = new Map()
  for (const plan of ACCOUNT_PLAN) {
    const created = await createAccount(admin(), {
      name: plan.name,
      funds: plan.funds,
      limits: HIGH_LIMITS,
      note: "crash"
    })
    accounts.push({ ...plan, ...created })
    funded.set(created.id, pesewas(plan.funds))
  }
  await startCommissions(admin(), accounts.map((a) => a.id))
  const bundles = await activeBundles(apiClient(server.url, accounts[0].apiKey))
  orderBundles = bundles.slice(0, 8)
  for (const b of bundles) bundlePrice.set(b.id, pesewas(b.price))
  log(
    `accounts ${accounts.map((a) => `${a.id} (GHS ${a.funds})`).join(", ")}; bundles ${
      orderBundles.map((b) => `${b.id} (GHS ${b.price})`).join(", ")
    }`
  )

  const pendingSeen = new Map() // order number → cycle in which it was pending with the server dead
  let lastRestart = Date.now()
  for (let cycle = 1; cycle <= CYCLES && !runState.interrupted && !serverDied; cycle++) {
    console.log("")
    const loadMs = (MIN_LOAD + rand() * (MAX_LOAD - MIN_LOAD)) * 1000
    log(`cycle ${cycle}: order load for ${(loadMs / 1000).toFixed(1)} s, then kill -9`)
    const before = { requests: figures.requests, fresh: figures.fresh }
    stopLoad = false
    const workers = Promise.all(Array.from({ length: CONCURRENCY }, () => worker(cycle)))
    await sleep(loadMs)
    // The kill: whatever is in flight now may or may not have been committed.
    const atKill = [...inflight]
    stopLoad = true
    const killedPid = server.pid
    const exit = await server.kill()
    await workers
    if (runState.interrupted) return 130
    const c = {
      cycle,
      loadSeconds: loadMs / 1000,
      requests: figures.requests - before.requests,
      acknowledged: figures.fresh - before.fresh,
      inflightAtKill: atKill.length,
      noAnswer: 0,
      committed: 0,
      notCommitted: 0,
      pendingAtCrash: 0,
      unsettledByCrash: 0,
      retried: 0,
      replayed: 0,
      placedNew: 0,
      refused: 0,
      restartMs: 0
    }
    cycles.push(c)
    log(`  killed pid ${killedPid} (${exit.signal}) with ${atKill.length} orders in flight`)
    if (exit.signal !== "SIGKILL") problem(`the server did not die of SIGKILL: ${JSON.stringify(exit)}`)

    // The database as the crash left it.
    if (!(await waitForSessionsGone())) problem("Postgres still had sessions of the killed process after 10 s")
    const rows = await fetchOrders(pg, db.name)
    const committed = new Map(
      rows.filter((r) => r.reference !== null).map((r) => [`${r.account_id}:${r.reference}`, r])
    )
    const unknown = [...refs.values()].filter((e) => e.answer === "unknown")
    c.noAnswer = unknown.length
    for (const ref of atKill) {
      const e = refs.get(ref)
      if (committed.has(`${e.account.id}:${ref}`)) c.committed++
      else c.notCommitted++
    }
    for (const r of rows) {
      if (r.status === "pending") {
        c.pendingAtCrash++
        if (!pendingSeen.has(r.order_number)) {
          pendingSeen.set(r.order_number, cycle)
          // Not a number the simulator keeps pending: this crash came between the debit's commit and the settlement.
          if (!r.phone_number.endsWith("9999")) c.unsettledByCrash++
        }
      }
    }
    log(
      `  in the database: ${rows.length} orders, ${c.pendingAtCrash} pending (${c.unsettledByCrash} paid but left ` +
        `unsettled by the crash); of the ${atKill.length} in flight ` +
        `${c.committed} committed, ${c.notCommitted} not; ${unknown.length} requests in all got no answer`
    )

    // Restart on the same port and database.
    const restartAt = Date.now()
    server = await start()
    c.restartMs = Date.now() - restartAt
    lastRestart = Date.now()
    log(`  restarted: pid ${server.pid} listening after ${c.restartMs} ms`)

    // Retry every request whose answer was lost, with its reference: the order it made, or a new one.
    for (const e of unknown) {
      const key = `${e.account.id}:${e.order.reference}`
      const before = committed.get(key)
      figures.retries++
      c.retried++
      const res = await post(e.order, e.account)
      e.retried = res.status
      if (res.status === 200) {
        const replayed = res.headers["idempotent-replayed"] === "true"
        const o = acknowledge(e, res)
        if (o === undefined) continue
        if (before !== undefined) {
          c.replayed++
          if (!replayed || o.order_number !== before.order_number) {
            problem(
              `retry of ${e.order.reference}: the crash left order ${before.order_number}, the retry answered ` +
                `${o.order_number}${replayed ? "" : " as a NEW order (double debit?)"}`
            )
          }
        } else {
          c.placedNew++
          if (replayed) {
            problem(`retry of ${e.order.reference} was answered as a replay of an order the crash did not leave`)
          }
        }
      } else if (res.status === 400 && res.json?._tag === "InsufficientBalance" && before === undefined) {
        e.answer = "no"
        c.refused++
      } else {
        problem(`retry of ${e.order.reference} answered ${res.status}: ${res.text?.slice(0, 200) ?? res.error}`)
      }
    }
    log(
      `  retried ${c.retried}: ${c.replayed} returned the order the crash left, ${c.placedNew} placed anew, ${c.refused} refused`
    )
  }
  if (runState.interrupted) return 130

  // Recovery: the worker settles what the crashes left pending (30 s after placement at worst).
  console.log("")
  const deadline = lastRestart + RECOVERY_WAIT * 1000
  let pending = await pendingCount(pg, db.name)
  log(`recovery: ${pending} orders pending; waiting until none is (at most ${RECOVERY_WAIT} s after the last restart)`)
  let lastReport = Date.now()
  while (pending > 0 && Date.now() < deadline && !runState.interrupted && !serverDied) {
    await sleep(500)
    pending = await pendingCount(pg, db.name)
    if (Date.now() - lastReport >= 5_000) {
      log(`  ${pending} pending`)
      lastReport = Date.now()
    }
  }
  if (runState.interrupted) return 130
  const recoverySeconds = (Date.now() - lastRestart) / 1000
  log(`recovery: ${pending} pending ${recoverySeconds.toFixed(1)} s after the last restart`)
  if (pending > 0) problem(`${pending} orders still pending ${recoverySeconds.toFixed(0)} s after the last restart`)

  // ---- Checks
  console.log("")
  log("checks")
  const audit = await auditCheck(admin())
  const rows = await fetchOrders(pg, db.name)
  const rowOf = new Map(rows.map((r) => [r.order_number, r]))
  const byRef = new Map()
  for (const r of rows) {
    const key = `${r.account_id}:${r.reference}`
    byRef.set(key, (byRef.get(key) ?? 0) + 1)
  }
  let lost = 0
  let differing = 0
  for (const [number, a] of acked) {
    const row = rowOf.get(number)
    if (row === undefined) {
      lost++
      if (lost <= 5) {
        problem(`LOST ORDER: ${number} (reference ${a.reference}) was acknowledged but is not in the database`)
      }
    } else if (row.account_id !== a.accountId || row.reference !== a.reference || BigInt(row.amount) !== a.amount) {
      differing++
      if (differing <= 5) {
        problem(`order ${number} in the database differs from its acknowledgement: ${JSON.stringify(row)}`)
      }
    }
  }
  let unexplained = 0
  for (const r of rows) {
    if (acked.has(r.order_number)) continue
    unexplained++
    if (unexplained <= 5) problem(`order in the database that no 200 acknowledged: ${JSON.stringify(r)}`)
  }
  const stillUnknown = [...refs.values()].filter((e) => e.answer === "unknown")
  const refused = [...refs.values()].filter((e) => e.answer === "no")
  const rec = await reconcileOrders({
    total: rows.length,
    acknowledged: acked.size,
    unknown: stillUnknown.map((e) => `${e.account.id}:${e.order.reference}`),
    rejectedSample: refused.map((e) => `${e.account.id}:${e.order.reference}`),
    ackSample: [...acked.values()].map((a) => `${a.accountId}:${a.reference}`),
    count: async (key) => byRef.get(key) ?? 0
  })
  if (rec.ackMissing > 0) problem(`${rec.ackMissing} acknowledged references have no order`)
  if (rec.ackDuplicated > 0) problem(`${rec.ackDuplicated} acknowledged references have several orders`)
  if (rec.rejectedFound > 0) problem(`${rec.rejectedFound} refused references have an order`)
  if (!rec.match) {
    problem(`orders in the database (${rec.total}) ≠ acknowledged + committed without an answer (${rec.expected})`)
  }

  // What the crashes left pending was settled, as the simulator decides.
  let recovered = 0
  for (const [number] of pendingSeen) {
    const row = rowOf.get(number)
    const want = row?.phone_number.endsWith("0000") ? "failed" : "successful"
    if (row?.status === want) recovered++
    else problem(`order ${number}, pending at a crash, is ${row?.status ?? "gone"}; expected ${want}`)
  }
  let wrongFinal = 0
  for (const r of rows) {
    const want = r.phone_number.endsWith("0000") ? "failed" : "successful"
    if (r.status !== want && r.status !== "pending") {
      wrongFinal++
      if (wrongFinal <= 3) problem(`order ${r.order_number} for ${r.phone_number} ended ${r.status}, expected ${want}`)
    }
  }

  const money = await moneyChecks(pg, db.name, funded)
  for (const issue of money.issues) problem(`money: ${issue}`)
  const logs = await scanServerLogs(started)
  if (logs.status500 > 0) problem(`the server logs hold ${logs.status500} requests answered 500`)
  if (logs.errorLines > 0) problem(`the server logs hold ${logs.errorLines} ERROR lines`)
  if (unexpected.length > 0) {
    problem(`${unexpected.length} unexpected answers, e.g. ${unexpected[0].status}: ${unexpected[0].body}`)
  }

  // ---- Figures
  console.log("")
  console.log(
    `  requests           ${figures.requests} POST /orders (${figures.retries} of them retries after a restart)`
  )
  console.log(`  answers            ${byStatus.entries().map(([k, n]) => `${k} ×${n}`).join(", ")}`)
  console.log(`  acknowledged       ${acked.size} orders (${figures.insufficient} refused for insufficient balance)`)
  const columns = [
    ["cycle", (c) => c.cycle],
    ["load", (c) => `${c.loadSeconds.toFixed(1)}s`],
    ["requests", (c) => c.requests],
    ["acked", (c) => c.acknowledged],
    ["in flight at kill", (c) => c.inflightAtKill],
    ["committed", (c) => c.committed],
    ["not", (c) => c.notCommitted],
    ["no answer", (c) => c.noAnswer],
    ["pending", (c) => c.pendingAtCrash],
    ["unsettled", (c) => c.unsettledByCrash],
    ["retried", (c) => c.retried],
    ["replayed", (c) => c.replayed],
    ["new", (c) => c.placedNew],
    ["refused", (c) => c.refused],
    ["restart", (c) => `${c.restartMs}ms`]
  ]
  console.log(`  ${columns.map(([name]) => name).join("  ")}`)
  for (const c of cycles) {
    console.log(`  ${columns.map(([name, value]) => String(value(c)).padStart(name.length)).join("  ")}`)
  }
  console.log(
    `  recovered          ${recovered} of ${pendingSeen.size} orders pending at a crash were settled by the worker; ` +
      `${pending} pending at the end (${recoverySeconds.toFixed(1)} s after the last restart)`
  )
  console.log(
    `  reconciliation     ${rec.total} in database ${rec.match ? "=" : "≠"} ${rec.acknowledged} acknowledged + ` +
      `${rec.unknownFound} never answered → ${rec.match ? "MATCH" : "MISMATCH"}; ${lost} lost, ` +
      `${rec.ackDuplicated} duplicated, ${differing} differing, ${unexplained} unexplained, ` +
      `${rec.rejectedFound} of ${refused.length} refused stored`
  )
  console.log(
    `  ledger             ${money.invariants.ledger_entries} entries; ${
      money.issues.length === 0
        ? "every order debited once, every failed order refunded once, balances = ledger = funded − spent, none negative"
        : `${money.issues.length} issues`
    }`
  )
  console.log(
    `  500s               ${figures.status500} answered, ${logs.status500} logged; ${logs.errorLines} ERROR and ${logs.warnLines} WARN log lines`
  )
  for (const sample of logs.samples.slice(0, 4)) console.log(`    log: ${sample}`)
  console.log(`  audit              ok: ${audit.ok}`)

  if (opts.json) {
    fs.writeFileSync(
      opts.json,
      JSON.stringify(
        { seed: SEED, cycles, figures, byStatus: byStatus.toJSON(), reconciliation: rec, money, audit, problems },
        (_, v) => typeof v === "bigint" ? String(v) : v,
        2
      )
    )
    log(`wrote ${path.resolve(opts.json)}`)
  }
  printProblems()
  console.log(problems.length === 0 ? "\nCRASH TEST PASSED" : "\nCRASH TEST FAILED")
  return problems.length === 0 ? 0 : 1
}

await runMain("crash test", main)
