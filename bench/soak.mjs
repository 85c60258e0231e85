#!/usr/bin/env node
// Soak test: a bounded mixed load (valid orders, replays, duplicate races, bad input, over-limit
// bursts) against TWO server processes on one fresh Postgres database, then an audit: every
// acknowledged order exists once, every wallet equals its ledger and what was funded minus what
// was spent, no overdraft, no 500, replays returned the original orders, and the rate limits
// held across both processes.
//
//   node bench/soak.mjs                 # 60 s, 16 steady requests in flight, bursts of 30
//   node bench/soak.mjs --seconds 20 --seed 7
//
// See bench/README.md. Only 127.0.0.1 is ever targeted; the run is bounded by --seconds plus
// the drain, the wait for pending orders and the checks (about 20 s).
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  adminClient,
  allBundles,
  apiClient,
  auditCheck,
  buildServer,
  checkBinary,
  createAccount,
  DEFAULT_PG,
  fetchOrders,
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

const USAGE = `Usage: node bench/soak.mjs [options]

Starts two server processes on one fresh Postgres database (dropped afterwards), runs a mixed
load against both for --seconds, waits for pending orders to settle, then audits everything.

  --seconds N          length of the load (default 60)
  --concurrency N      steady requests in flight (default 16; a duplicate race puts two in flight)
  --burst N            requests a limited account fires at once in an over-limit burst (default 30)
  --burst-every N      seconds between bursts (default 6)
  --pending-seconds N  how long the simulator keeps a ...9999 order pending (default 2)
  --timeout N          per-request timeout in seconds (default 10)
  --seed N             seed of the random choices (default: random; printed)
  --pg URL             Postgres server (default ${DEFAULT_PG})
  --build              rebuild packages/server/dist/bin.mjs first
  --keep               keep the database and the server logs (paths are printed)
  --json FILE          also write the figures as JSON
  --help

Exit status: 0 when every check passed, 1 when one failed, 2 usage error, 130 interrupted.`

const opts = parseOptions(USAGE, {
  seconds: { type: "string", default: "60" },
  concurrency: { type: "string", default: "16" },
  burst: { type: "string", default: "30" },
  "burst-every": { type: "string", default: "6" },
  "pending-seconds": { type: "string", default: "2" },
  timeout: { type: "string", default: "10" },
  seed: { type: "string" },
  pg: { type: "string", default: DEFAULT_PG },
  build: { type: "boolean", default: false },
  keep: { type: "boolean", default: false },
  json: { type: "string" }
})
const SECONDS = intOption(opts, "seconds", 1, 3600)
const CONCURRENCY = intOption(opts, "concurrency", 1, 256)
const BURST = intOption(opts, "burst", 1, 200)
const BURST_EVERY = intOption(opts, "burst-every", 1, 600)
const PENDING_SECONDS = intOption(opts, "pending-seconds", 1, 60)
const TIMEOUT_MS = intOption(opts, "timeout", 1, 120) * 1000
if (opts.seed === undefined) opts.seed = String(randomBytes(4).readUInt32BE(0) % 1_000_000)
const SEED = intOption(opts, "seed", 0, 2 ** 32 - 1)
requireLoopbackPg(opts.pg)

/** The server-wide default limits (BUNDLES_RATE_LIMITS), the spec's. */
const DEFAULT_LIMITS = { all: 60, orders: 10, balance: 30 }
const HIGH_LIMITS = { all: 1_000_000, orders: 1_000_000, balance: 1_000_000 }
/** Unauthenticated requests (wrong or missing key) count per address against DEFAULT_LIMITS.all. */
const UNAUTH_EVERY_MS = 2_500
const TOP_UP_EVERY_MS = 4_000

/**
 * The accounts. Bulk ones carry the steady valid traffic; "tight" has high limits but little
 * money (topped up every few seconds), so concurrent orders race for the last cedis; the
 * limited ones keep default-ish limits and only ever see deliberate bursts.
 */
const ACCOUNT_PLAN = [
  { role: "bulk", name: "soak bulk 1", funds: 1_000_000, limits: HIGH_LIMITS },
  { role: "bulk", name: "soak bulk 2", funds: 1_000_000, limits: HIGH_LIMITS },
  { role: "bulk", name: "soak bulk 3", funds: 1_000_000, limits: HIGH_LIMITS },
  { role: "tight", name: "soak tight", funds: 30, limits: HIGH_LIMITS, topUp: 15 },
  { role: "limited", name: "soak limited A", funds: 20, limits: undefined, effective: DEFAULT_LIMITS },
  {
    role: "limited",
    name: "soak limited B",
    funds: 5_000,
    limits: { all: 60, orders: 15, balance: 20 },
    effective: { all: 60, orders: 15, balance: 20 }
  }
]

const rand = seededRandom(SEED)
const runId = randomBytes(3).toString("hex")

// ---------------------------------------------------------------------------------------------
// What the load generator saw

const byEndpoint = tally() // "POST /orders 200"
const byServer = tally() // "A", "B"
const byKind = tally() // "bad-phone 422 ValidationError"
const unexpected = [] // { kind, status, body }
const networkErrors = [] // { kind, error }
const figures = {
  requests: 0,
  fresh: 0,
  freshByStatus: tally(),
  replays: 0,
  replaysOk: 0,
  races: 0,
  racesOk: 0,
  conflicts: 0,
  lookups: 0,
  status429: tally(), // by account name
  status500: 0,
  insufficient: tally(), // by account name
  freshLatencies: []
}

/** reference → what was sent and what came back. */
const refs = new Map()
/** order number → the acknowledged order. */
const acked = new Map()
/** Acknowledged orders with a reference, for replays and lookups (bulk and tight accounts only). */
const replayPool = []
/** Requests without a reference whose outcome is unknown, per account id. */
const unknownNoRef = new Map()
/** Limited accounts' requests: { accountId, scope, sent, received, admitted }. */
const limitedLog = []
/** Burst results. */
const bursts = []

let stopAt = Infinity
let serverDied = false
const stopping = () => runState.interrupted || serverDied || Date.now() >= stopAt

/** A number in `0` + 9 digits form (sometimes `233` + 9), ending as asked, never 0000/9999 otherwise. */
const phone = (ending = "normal") => {
  let digits
  for (;;) {
    digits = String(rand.int(100_000_000)).padStart(8, "0")
    if (ending === "fail") digits = digits.slice(0, 4) + "0000"
    else if (ending === "pending") digits = digits.slice(0, 4) + "9999"
    else if (digits.endsWith("0000") || digits.endsWith("9999")) continue
    break
  }
  return rand() < 0.1 ? `2332${digits}` : `02${digits}`
}
const otherForm = (p) => p.startsWith("233") ? `0${p.slice(3)}` : `233${p.slice(1)}`
const national = (p) => p.slice(-9)

let refCount = 0
const newRef = (prefix = "s") => `${prefix}-${runId}-${++refCount}`

// ---------------------------------------------------------------------------------------------
// Sending

let servers = []
let agents = []
let rr = 0
/** The next server, alternating. */
const nextServer = () => rr++ % 2

function send(kind, { server, method = "GET", path: pathname, headers = {}, body, account }) {
  const index = server ?? nextServer()
  const target = servers[index]
  figures.requests++
  byServer.inc(target.label)
  const sent = Date.now()
  return httpCall({
    agent: agents[index],
    url: target.url,
    method,
    path: pathname,
    headers: {
      ...(account === undefined ? {} : { "x-api-key": account.apiKey }),
      ...headers
    },
    body,
    timeoutMs: TIMEOUT_MS
  }).then((res) => {
    res.sent = sent
    res.received = Date.now()
    res.server = target.label
    const endpoint = endpointOf(method, pathname)
    if (res.status === 0) {
      byEndpoint.inc(`${endpoint} no answer (${res.error})`)
      networkErrors.push({ kind, error: res.error })
    } else {
      byEndpoint.inc(`${endpoint} ${res.status}`)
      byKind.inc(`${kind.padEnd(18)} ${res.status} ${res.json?._tag ?? (res.status < 300 ? "ok" : "")}`.trimEnd())
      if (res.status >= 500) {
        figures.status500++
        problem(
          `${kind}: ${method} ${pathname} on server ${target.label} answered ${res.status}: ${res.text.slice(0, 300)}`
        )
      }
      if (res.status === 429) {
        const retryAfter = Number(res.headers["retry-after"])
        if (!Number.isInteger(retryAfter) || retryAfter < 1) {
          problem(`${kind}: a 429 without a valid Retry-After (${res.headers["retry-after"]})`)
        }
      }
    }
    return res
  })
}

const endpointOf = (method, pathname) => {
  const p = pathname.split("?")[0]
  if (p === "/api/v1/orders") return `${method} /orders`
  if (p.startsWith("/api/v1/orders/")) return `${method} /orders/{number}`
  if (p === "/api/v1/balance") return `${method} /balance`
  if (p === "/api/v1/networks") return `${method} /networks`
  if (/^\/api\/v1\/networks\/[^/]+\/bundles$/.test(p)) return `${method} /networks/{id}/bundles`
  return `${method} (other path)`
}

/** Records an answer that is not one of `allowed` statuses (500s are already problems). */
const expectStatus = (kind, res, allowed) => {
  if (res.status === 0 || res.status >= 500) return false
  if (allowed.includes(res.status)) return true
  unexpected.push({ kind, status: res.status, body: res.text.slice(0, 300) })
  return false
}

// ---------------------------------------------------------------------------------------------
// Orders

const orderBody = (o) =>
  JSON.stringify({
    bundle_id: o.bundleId,
    phone_number: o.phone,
    ...(o.reference === undefined ? {} : { reference: o.reference })
  })

/** Registers a reference before it is first sent. */
const track = (account, order, kind) => {
  const entry = {
    accountId: account.id,
    account: account.name,
    bundleId: order.bundleId,
    phone: order.phone,
    kind,
    orderNumber: undefined,
    fresh: 0,
    acked: false,
    unknown: false,
    definiteNo: 0
  }
  refs.set(order.reference, entry)
  return entry
}

/**
 * Handles the answer to a POST /orders with a valid body: an acknowledgement (fresh or
 * replayed), a refusal, or no answer. `replay` says the reference was acknowledged before.
 */
function onOrderAnswer(kind, account, order, res, { replay = false } = {}) {
  const entry = order.reference === undefined ? undefined : refs.get(order.reference)
  if (res.status === 0) {
    if (entry !== undefined) {
      if (!entry.acked) entry.unknown = true
    } else {
      unknownNoRef.set(account.id, (unknownNoRef.get(account.id) ?? 0) + 1)
    }
    return undefined
  }
  if (res.status === 200) {
    const o = res.json?.order
    const replayed = res.headers["idempotent-replayed"] === "true"
    if (o === undefined || typeof o.order_number !== "string") {
      unexpected.push({ kind, status: 200, body: res.text.slice(0, 300) })
      return undefined
    }
    if (replay && !replayed) problem(`${kind}: reference ${order.reference} answered 200 without Idempotent-Replayed`)
    if (entry !== undefined) {
      if (entry.orderNumber !== undefined && entry.orderNumber !== o.order_number) {
        problem(
          `${kind}: reference ${order.reference} answered order ${o.order_number}, but it was acknowledged as ` +
            `${entry.orderNumber} before (double placement?)`
        )
      }
      entry.orderNumber ??= o.order_number
      entry.acked = true
      if (!replayed) entry.fresh++
      if (entry.fresh > 1) problem(`reference ${order.reference} was placed fresh ${entry.fresh} times`)
    }
    if (!replayed) {
      figures.fresh++
      figures.freshByStatus.inc(o.status)
      figures.freshLatencies.push(res.ms)
      const suffix = order.phone.slice(-4)
      const want = suffix === "0000" ? ["failed"] : suffix === "9999" ? ["pending", "successful"] : ["successful"]
      if (!want.includes(o.status)) {
        problem(`${kind}: order ${o.order_number} for …${suffix} came back ${o.status}, expected ${want.join(" or ")}`)
      }
    }
    if (o.reference !== (order.reference ?? null)) {
      problem(`${kind}: order ${o.order_number} came back with reference ${o.reference}, sent ${order.reference}`)
    }
    if (national(o.phone_number) !== national(order.phone)) {
      problem(`${kind}: order ${o.order_number} came back for ${o.phone_number}, sent ${order.phone}`)
    }
    const price = bundleById.get(order.bundleId).pesewas
    if (pesewas(o.amount_paid) !== price) {
      problem(`${kind}: order ${o.order_number} paid ${o.amount_paid}, the bundle costs ${Number(price) / 100}`)
    }
    const known = acked.get(o.order_number)
    if (known === undefined) {
      acked.set(o.order_number, {
        accountId: account.id,
        reference: order.reference ?? null,
        amount: price,
        status: o.status,
        phone: order.phone
      })
      if (
        order.reference !== undefined && account.role !== "limited" && replayPool.length < 50_000
      ) {
        replayPool.push({ account, order: { ...order }, orderNumber: o.order_number })
      }
    } else if (known.accountId !== account.id) {
      problem(`order ${o.order_number} was acknowledged to two accounts`)
    }
    return { orderNumber: o.order_number, replayed, status: o.status }
  }
  if (entry !== undefined) entry.definiteNo++
  if (res.status === 400 && res.json?._tag === "InsufficientBalance") {
    figures.insufficient.inc(account.name)
    if (account.role === "bulk") problem(`${kind}: insufficient balance on bulk account ${account.name}`)
    return undefined
  }
  if (res.status === 429) {
    figures.status429.inc(account.name)
    if (account.role !== "limited") unexpected.push({ kind, status: 429, body: res.text.slice(0, 300) })
    return undefined
  }
  unexpected.push({ kind, status: res.status, body: res.text.slice(0, 300) })
  return undefined
}

const newOrder = (account, { reference = true, ending } = {}) => {
  const roll = rand()
  const end = ending ?? (roll < 0.05 ? "fail" : roll < 0.1 ? "pending" : "normal")
  return {
    bundleId: rand.pick(orderBundles).id,
    phone: phone(end),
    reference: reference ? newRef() : undefined
  }
}

const placeOrder = async (kind, account, order, options = {}) => {
  if (order.reference !== undefined && !refs.has(order.reference)) track(account, order, kind)
  const res = await send(kind, {
    server: options.server,
    method: "POST",
    path: "/api/v1/orders",
    headers: { "content-type": "application/json" },
    body: orderBody(order),
    account
  })
  return { res, result: onOrderAnswer(kind, account, order, res, options) }
}

// ---------------------------------------------------------------------------------------------
// The steady actions (bulk and tight accounts)

let accounts = []
let bulk = []
let tight
let limited = []
let orderBundles = []
let inactiveBundle
const bundleById = new Map()
let unauthTokens = 2
let unauthRefill

const steadyAccount = () => rand() < 0.12 ? tight : rand.pick(bulk)

const actions = {
  async order() {
    const account = steadyAccount()
    await placeOrder("order", account, newOrder(account))
  },
  async orderNoRef() {
    const account = rand.pick(bulk)
    await placeOrder("order (no ref)", account, newOrder(account, { reference: false }))
  },
  async replay() {
    if (replayPool.length === 0) return actions.order()
    const { account, order, orderNumber } = rand.pick(replayPool)
    // To the other process than the last one, sometimes in the other phone form.
    const again = { ...order, phone: rand() < 0.3 ? otherForm(order.phone) : order.phone }
    figures.replays++
    const { result } = await placeOrder("replay", account, again, { replay: true })
    if (result !== undefined) {
      if (result.orderNumber === orderNumber && result.replayed) figures.replaysOk++
      else if (result.orderNumber !== orderNumber) {
        problem(`replay of ${order.reference} returned ${result.orderNumber}, the original is ${orderNumber}`)
      }
    }
  },
  async race() {
    // The same new reference to both processes at once: one order, one replay.
    const account = rand.pick(bulk)
    const order = newOrder(account)
    track(account, order, "race")
    figures.races++
    const [a, b] = await Promise.all([
      placeOrder("race", account, order, { server: 0 }),
      placeOrder("race", account, order, { server: 1 })
    ])
    if (a.result !== undefined && b.result !== undefined) {
      const fresh = [a.result, b.result].filter((r) => !r.replayed).length
      if (a.result.orderNumber !== b.result.orderNumber) {
        problem(`race on ${order.reference}: two order numbers ${a.result.orderNumber} and ${b.result.orderNumber}`)
      } else if (fresh !== 1) {
        problem(`race on ${order.reference}: ${fresh} fresh answers for one order (expected 1 fresh, 1 replayed)`)
      } else {
        figures.racesOk++
      }
    } else if (a.res.status !== 0 && b.res.status !== 0) {
      problem(`race on ${order.reference}: answered ${a.res.status} and ${b.res.status}`)
    }
  },
  async conflict() {
    // An acknowledged reference with another number: a 422, and no second order.
    if (replayPool.length === 0) return actions.order()
    const { account, order } = rand.pick(replayPool)
    const other = { ...order, phone: phone("normal") }
    figures.conflicts++
    const res = await send("reference conflict", {
      method: "POST",
      path: "/api/v1/orders",
      headers: { "content-type": "application/json" },
      body: orderBody(other),
      account
    })
    if (expectStatus("reference conflict", res, [422]) && res.json?.errors?.reference === undefined) {
      unexpected.push({ kind: "reference conflict", status: 422, body: res.text.slice(0, 300) })
    }
  },
  async read() {
    const account = rand.pick(bulk)
    const roll = rand.int(5)
    if (roll === 0) {
      expectStatus("balance", await send("balance", { path: "/api/v1/balance", account }), [200])
    } else if (roll === 1) {
      expectStatus("networks", await send("networks", { path: "/api/v1/networks", account }), [200])
    } else if (roll === 2) {
      const b = rand.pick(orderBundles)
      const res = await send("bundles", { path: `/api/v1/networks/${b.networkId}/bundles`, account })
      expectStatus("bundles", res, [200])
    } else {
      if (replayPool.length === 0) return
      // Read-your-writes through the other process: the order is there, once, as acknowledged.
      const { account: owner, order, orderNumber } = rand.pick(replayPool)
      figures.lookups++
      const byRef = roll === 3
      const res = await send(byRef ? "lookup by reference" : "lookup by number", {
        path: byRef ? `/api/v1/orders?reference=${order.reference}` : `/api/v1/orders/${orderNumber}`,
        account: owner
      })
      if (!expectStatus("lookup", res, [200])) return
      const found = byRef ? res.json?.orders : [res.json?.order]
      if (byRef && res.json?.pagination?.total !== 1) {
        problem(`GET /orders?reference=${order.reference} found ${res.json?.pagination?.total} orders, expected 1`)
      } else if (found?.[0]?.order_number !== orderNumber) {
        problem(`lookup of ${order.reference} found ${found?.[0]?.order_number}, acknowledged as ${orderNumber}`)
      } else {
        const before = acked.get(orderNumber)?.status
        if ((before === "failed" || before === "successful") && found[0].status !== before) {
          problem(`order ${orderNumber} was ${before} and is now ${found[0].status}`)
        }
      }
    }
  },
  async bad() {
    const account = rand.pick(bulk)
    const kinds = Object.keys(badInputs)
    let kind = rand.pick(kinds)
    if (badInputs[kind].unauthenticated) {
      if (unauthTokens < 1) kind = "bad-json"
      else unauthTokens--
    }
    const { request, expect, rejectedRef } = badInputs[kind](account)
    const res = await send(kind, { account: request.noKey ? undefined : account, ...request })
    if (rejectedRef !== undefined) {
      const entry = refs.get(rejectedRef)
      if (res.status !== 0 && res.status !== 200) entry.definiteNo++
      else if (res.status === 0) entry.unknown = true
    }
    if (expectStatus(kind, res, [expect.status]) && expect.tag && res.json?._tag !== expect.tag) {
      unexpected.push({ kind, status: res.status, body: res.text.slice(0, 300) })
    }
  }
}

const WEIGHTS = { order: 44, orderNoRef: 3, replay: 12, race: 4, conflict: 3, read: 12, bad: 22 }

/** A body for POST /orders with a reference that must never become an order. */
const rejectedOrder = (account, fields, kind) => {
  const reference = newRef("bad")
  track(account, { bundleId: fields.bundle_id, phone: String(fields.phone_number), reference }, kind)
  return { body: JSON.stringify({ ...fields, reference }), reference }
}

/** A POST /orders; `contentType` null sends no Content-Type at all. */
const post = (body, contentType = "application/json") => ({
  method: "POST",
  path: "/api/v1/orders",
  headers: contentType === null ? {} : { "content-type": contentType },
  body
})

const badInputs = {
  "bad-json": () => ({
    request: post("{\"bundle_id\": 1, \"phone_number\": "),
    expect: { status: 400, tag: "BadRequest" }
  }),
  "wrong-content-type": (account) => {
    const { body, reference } = rejectedOrder(
      account,
      { bundle_id: orderBundles[0].id, phone_number: phone() },
      "wrong-content-type"
    )
    return {
      request: post(body, rand() < 0.5 ? "text/plain" : null),
      expect: { status: 400, tag: "BadRequest" },
      rejectedRef: reference
    }
  },
  "bad-phone": (account) => {
    const bad = rand.pick(["12345", "024123456", "+233241234567", "02412345678", "0241234abc", ""])
    const { body, reference } = rejectedOrder(
      account,
      { bundle_id: orderBundles[0].id, phone_number: bad },
      "bad-phone"
    )
    return { request: post(body), expect: { status: 422, tag: "ValidationError" }, rejectedRef: reference }
  },
  "unknown-bundle": (account) => {
    const { body, reference } = rejectedOrder(account, { bundle_id: 999_999, phone_number: phone() }, "unknown-bundle")
    return { request: post(body), expect: { status: 422, tag: "ValidationError" }, rejectedRef: reference }
  },
  "inactive-bundle": (account) => {
    const { body, reference } = rejectedOrder(
      account,
      { bundle_id: inactiveBundle.id, phone_number: phone() },
      "inactive-bundle"
    )
    return { request: post(body), expect: { status: 400, tag: "BundleUnavailable" }, rejectedRef: reference }
  },
  "bad-reference": () => ({
    request: post(JSON.stringify({
      bundle_id: orderBundles[0].id,
      phone_number: phone(),
      reference: rand.pick(["has space", "x".repeat(65), "", "semi;colon", "ünïcode"])
    })),
    expect: { status: 422, tag: "ValidationError" }
  }),
  "missing-field": (account) => {
    const { body, reference } = rejectedOrder(account, { phone_number: phone() }, "missing-field")
    return { request: post(body), expect: { status: 422, tag: "ValidationError" }, rejectedRef: reference }
  },
  "not-an-object": () => ({
    request: post(rand.pick(["[1,2]", "\"order\"", "42", "null", ""])),
    expect: { status: 422, tag: "ValidationError" }
  }),
  "oversize-body": () => ({
    request: post(JSON.stringify({ bundle_id: orderBundles[0].id, phone_number: phone(), pad: "x".repeat(70_000) })),
    expect: { status: 413, tag: "PayloadTooLarge" }
  }),
  "too-deep": () => ({
    request: post(`${"[".repeat(40)}${"]".repeat(40)}`),
    expect: { status: 400, tag: "BadRequest" }
  }),
  "bad-query": () => ({
    request: {
      path: `/api/v1/orders?${
        rand.pick([
          "per_page=0",
          "per_page=51",
          "page=abc",
          "page=0",
          "status=bogus",
          "from=2026-02-30",
          "to=yesterday",
          "phone_number=123",
          "reference=has%20space"
        ])
      }`
    },
    expect: { status: 422, tag: "ValidationError" }
  }),
  "unknown-order": () => ({
    request: { path: `/api/v1/orders/ORD-${"Z".repeat(12)}` },
    expect: { status: 404, tag: "OrderNotFound" }
  }),
  "bad-path": () => ({
    request: { path: rand.pick(["/api/v1/nope", "/api/v1/networks/abc/bundles", "/api/v2/orders"]) },
    expect: { status: 404 }
  }),
  "wrong-method": () => ({
    request: { method: rand.pick(["DELETE", "PUT", "PATCH"]), path: "/api/v1/orders" },
    expect: { status: 405, tag: "MethodNotAllowed" }
  }),
  "wrong-key": Object.assign(() => ({
    request: {
      path: "/api/v1/balance",
      noKey: true,
      headers: {
        "x-api-key": rand() < 0.5 ? `dbk_${randomBytes(20).toString("hex")}` : "not-a-key"
      }
    },
    expect: { status: 401, tag: "Unauthorized" }
  }), { unauthenticated: true }),
  "no-key": Object.assign(() => ({
    request: { path: "/api/v1/balance", noKey: true },
    expect: { status: 401, tag: "Unauthorized" }
  }), { unauthenticated: true })
}

async function steadyWorker() {
  while (!stopping()) {
    await actions[rand.weighted(WEIGHTS)]()
  }
}

// ---------------------------------------------------------------------------------------------
// Over-limit bursts (limited accounts only)

async function burst(account, scope) {
  const started = Date.now()
  const before = (s) =>
    limitedLog.filter((r) => r.accountId === account.id && r.admitted && (s === "all" || r.scope === s)).length
  const firstAdmitted = limitedLog.find((r) => r.accountId === account.id && r.admitted)?.sent
  const prior = { scope: before(scope), all: before("all") }
  const answers = await Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      const server = i % 2
      let res
      if (scope === "orders") {
        const order = newOrder(account)
        ;({ res } = await placeOrder("burst order", account, order, { server }))
      } else {
        res = await send("burst balance", { server, path: "/api/v1/balance", account })
        if (res.status === 429) figures.status429.inc(account.name)
        else expectStatus("burst balance", res, [200])
      }
      if (res.status !== 0) {
        limitedLog.push({
          accountId: account.id,
          scope,
          sent: res.sent,
          received: res.received,
          admitted: res.status !== 429
        })
      }
      return res
    })
  )
  const admitted = answers.filter((r) => r.status !== 0 && r.status !== 429).length
  const limits = account.effective
  // While everything this account had admitted is within the last minute, the admitted count is exact.
  const exactExpected = firstAdmitted === undefined || started - firstAdmitted < 55_000
    ? Math.max(0, Math.min(BURST, limits[scope] - prior.scope, limits.all - prior.all))
    : undefined
  const b = {
    account: account.name,
    scope,
    at: Math.round((started - loadStarted) / 1000),
    statuses: tally(),
    admitted,
    expected: exactExpected
  }
  for (const r of answers) b.statuses.inc(r.status === 0 ? `no answer (${r.error})` : String(r.status))
  bursts.push(b)
  if (exactExpected !== undefined && admitted !== exactExpected) {
    problem(
      `burst of ${BURST} ${scope} on ${account.name} at ${b.at} s: ${admitted} admitted, expected exactly ${exactExpected} ` +
        `(limit ${limits[scope]} ${scope}, ${limits.all} all, shared by both processes)`
    )
  }
}

let loadStarted = 0
let loadDone = Promise.resolve()
async function burstScheduler() {
  const plan = [[limited[0], "orders"], [limited[1], "orders"], [limited[0], "balance"], [limited[1], "balance"]]
  let i = 0
  let next = Date.now() + Math.min(2_000, BURST_EVERY * 1000)
  while (!stopping()) {
    while (Date.now() < next && !stopping()) await sleep(Math.min(200, next - Date.now()))
    if (stopping()) break
    const [account, scope] = plan[i++ % plan.length]
    await burst(account, scope)
    next += BURST_EVERY * 1000
  }
}

/**
 * No 60-second window may hold more admitted requests of a scope than its limit, across both
 * processes. A request was decided somewhere between its send and its answer, so a set of
 * admitted requests all sent at or after t and answered before t + 60 s were all decided in
 * [t, t + 60 s): more of them than the limit is a proven breach.
 */
function windowBreaches() {
  const breaches = []
  for (const account of limited) {
    for (const scope of ["orders", "balance", "all"]) {
      const rows = limitedLog
        .filter((r) => r.accountId === account.id && r.admitted && (scope === "all" || r.scope === scope))
        .sort((a, b) => a.sent - b.sent)
      const limit = account.effective[scope]
      let worst = 0
      for (const start of rows) {
        const inside = rows.filter((r) => r.sent >= start.sent && r.received < start.sent + 60_000).length
        worst = Math.max(worst, inside)
      }
      if (worst > limit) breaches.push(`${account.name} ${scope}: ${worst} admitted within 60 s, limit ${limit}`)
      account.worstWindow ??= {}
      account.worstWindow[scope] = worst
    }
  }
  return breaches
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  console.log("Data bundle reseller server: soak test (two processes, one Postgres database)")
  console.log(
    `seed ${SEED}, ${SECONDS} s, ${CONCURRENCY} steady in flight, bursts of ${BURST} every ${BURST_EVERY} s, ` +
      `pending orders settle after ${PENDING_SECONDS} s`
  )
  if (opts.build) buildServer()
  checkBinary()

  const pg = postgres(opts.pg)
  const tmp = makeTempDir({ keep: opts.keep, prefix: "bundles-soak-" })
  const db = await pg.createDatabase({ keep: opts.keep })
  const token = newAdminToken()
  const env = {
    BUNDLES_RATE_LIMIT_STORE: "database",
    BUNDLES_RATE_LIMITS: `all=${DEFAULT_LIMITS.all},orders=${DEFAULT_LIMITS.orders},balance=${DEFAULT_LIMITS.balance}`,
    BUNDLES_SIMULATOR_PENDING_SECONDS: PENDING_SECONDS,
    // Deliberate wrong keys must not lock 127.0.0.1 out of everything for a minute.
    BUNDLES_AUTH_FAILURE_LIMIT: 1000,
    BUNDLES_WORKERS: 1,
    BUNDLES_POLL_SECONDS: undefined,
    BUNDLES_AUTH_CACHE_SECONDS: undefined,
    BUNDLES_CATALOG_CACHE_SECONDS: undefined,
    BUNDLES_TRUSTED_PROXIES: undefined
  }
  const onUnexpectedExit = () => {
    serverDied = true
  }
  // The first process applies the migrations; the second starts on a migrated database.
  const a = await startServer({ tmp, token, databaseUrl: db.url, name: "server A", env, onUnexpectedExit })
  const b = await startServer({ tmp, token, databaseUrl: db.url, name: "server B", env, onUnexpectedExit })
  a.label = "A"
  b.label = "B"
  servers = [a, b]
  log(`server A pid ${a.pid} on ${a.url}, server B pid ${b.pid} on ${b.url} (Postgres ${db.version}, ${db.name})`)
  agents = servers.map(() => keepAliveAgent(CONCURRENCY * 2 + BURST))

  // Seeding through server A
  const admins = servers.map((s) => adminClient(s.url, token))
  const admin = admins[0]
  const imported = await importCatalog(admin)
  log(`imported examples/catalog.json: bundles ${JSON.stringify(imported.bundles)}`)
  const funded = new Map()
  for (const plan of ACCOUNT_PLAN) {
    const created = await createAccount(admin, {
      name: plan.name,
      funds: plan.funds,
      limits: plan.limits,
      note: "soak"
    })
    const account = { ...plan, ...created }
    accounts.push(account)
    funded.set(account.id, pesewas(plan.funds))
  }
  bulk = accounts.filter((x) => x.role === "bulk")
  tight = accounts.find((x) => x.role === "tight")
  limited = accounts.filter((x) => x.role === "limited")
  // Commissions on: every order of the bulk and tight accounts earns an agent and a referrer.
  await startCommissions(admin, [...bulk, tight].map((x) => x.id))
  const bundles = await allBundles(apiClient(a.url, bulk[0].apiKey))
  for (const bundle of bundles) bundleById.set(bundle.id, { ...bundle, pesewas: pesewas(bundle.price) })
  orderBundles = bundles.filter((x) => x.is_active).slice(0, 8)
  inactiveBundle = bundles.find((x) => !x.is_active)
  if (orderBundles.length === 0 || inactiveBundle === undefined) {
    throw new Error("the catalogue lacks active or inactive bundles")
  }
  for (const x of accounts) {
    log(
      `account ${x.id} ${x.name.padEnd(15)} ${x.role.padEnd(7)} GHS ${String(x.funds).padStart(9)}, limits ${
        JSON.stringify(x.effective ?? x.limits)
      }${x.topUp ? `, +GHS ${x.topUp} every ${TOP_UP_EVERY_MS / 1000} s` : ""}`
    )
  }
  log(
    `ordering bundles ${orderBundles.map((x) => `${x.id} (GHS ${x.price})`).join(", ")}; inactive ${inactiveBundle.id}`
  )

  // The load
  onInterrupt(async () => {
    stopAt = 0
    await Promise.race([loadDone, sleep(2_500)])
  })
  console.log("")
  log(`load: ${SECONDS} s`)
  loadStarted = Date.now()
  stopAt = loadStarted + SECONDS * 1000
  unauthRefill = setInterval(() => (unauthTokens = Math.min(2, unauthTokens + 1)), UNAUTH_EVERY_MS)
  let topUps = 0
  let topUpFailures = 0
  const topUp = setInterval(() => {
    if (stopping()) return
    // Funding races the orders on the same wallet row; alternate the process that does it.
    admins[topUps % 2]("POST", `/accounts/${tight.id}/wallet/fund`, { amount: tight.topUp, note: "soak top-up" })
      .then(() => funded.set(tight.id, funded.get(tight.id) + pesewas(tight.topUp)))
      .catch((error) => {
        topUpFailures++
        problem(`top-up of ${tight.name} failed: ${error.message}`)
      })
    topUps++
  }, TOP_UP_EVERY_MS)
  const progress = setInterval(() => {
    log(
      `  ${figures.requests} requests, ${figures.fresh} orders, ${figures.replaysOk} replays, ` +
        `${figures.status429.total()} × 429, ${problems.length} problems`
    )
  }, 10_000)
  loadDone = Promise.all([
    ...Array.from({ length: CONCURRENCY }, steadyWorker),
    burstScheduler()
  ])
  try {
    await loadDone
  } finally {
    clearInterval(unauthRefill)
    clearInterval(topUp)
    clearInterval(progress)
  }
  await sleep(300) // a top-up answer still on its way
  const loadSeconds = (Date.now() - loadStarted) / 1000
  if (runState.interrupted) return 130
  log(`load done after ${loadSeconds.toFixed(1)} s: ${figures.requests} requests`)
  if (serverDied) problem("a server process died during the load")

  // Pending orders settle (the worker of either process)
  const waitUntil = Date.now() + (PENDING_SECONDS + 10) * 1000
  let pending = await pendingCount(pg, db.name)
  const pendingAtEnd = pending
  while (pending > 0 && Date.now() < waitUntil && !runState.interrupted) {
    await sleep(500)
    pending = await pendingCount(pg, db.name)
  }
  if (runState.interrupted) return 130
  log(`pending orders: ${pendingAtEnd} when the load stopped, ${pending} now`)
  if (pending > 0) problem(`${pending} orders still pending ${PENDING_SECONDS + 10} s after the load`)

  // ---- Checks
  console.log("")
  log("checks")
  // Through a process still running (server B, unless only A is left).
  const live = servers.findIndex((s, i) => i > 0 && !s.exited)
  const alive = live >= 0 ? live : servers.findIndex((s) => !s.exited)
  const audit = alive >= 0 ? await auditCheck(admins[alive]) : { ok: false }
  if (alive < 0) problem("no server left running to audit")

  const rows = await fetchOrders(pg, db.name)
  const byNumber = new Map()
  const byRef = new Map()
  for (const row of rows) {
    byNumber.set(row.order_number, (byNumber.get(row.order_number) ?? 0) + 1)
    if (row.reference !== null) {
      const key = `${row.account_id}:${row.reference}`
      byRef.set(key, [...(byRef.get(key) ?? []), row])
    }
  }
  // Every acknowledged order: there once, as acknowledged
  let lost = 0
  let mismatched = 0
  const rowOf = new Map(rows.map((r) => [r.order_number, r]))
  for (const [number, ack] of acked) {
    const row = rowOf.get(number)
    if (row === undefined) {
      lost++
      if (lost <= 5) {
        problem(
          `LOST ORDER: ${number} (account ${ack.accountId}, reference ${ack.reference}) was acknowledged but is not in the database`
        )
      }
      continue
    }
    if (
      row.account_id !== ack.accountId || row.reference !== ack.reference || BigInt(row.amount) !== ack.amount ||
      national(row.phone_number) !== national(ack.phone)
    ) {
      mismatched++
      if (mismatched <= 5) {
        problem(`order ${number} in the database differs from its acknowledgement: ${JSON.stringify(row)}`)
      }
    }
  }
  if (lost > 5) problem(`${lost} acknowledged orders are missing from the database in all`)
  // Every order in the database: acknowledged, or sent without an answer
  let unexplained = 0
  let committedUnknown = 0
  const noRefAllowance = new Map(unknownNoRef)
  for (const row of rows) {
    if (acked.has(row.order_number)) continue
    const entry = row.reference === null ? undefined : refs.get(row.reference)
    if (entry !== undefined && entry.unknown && entry.accountId === row.account_id) {
      committedUnknown++
      continue
    }
    if (row.reference === null && (noRefAllowance.get(row.account_id) ?? 0) > 0) {
      noRefAllowance.set(row.account_id, noRefAllowance.get(row.account_id) - 1)
      committedUnknown++
      continue
    }
    unexplained++
    if (unexplained <= 5) problem(`order in the database that no 200 acknowledged: ${JSON.stringify(row)}`)
  }
  // Final statuses: ...0000 failed, everything else delivered
  let wrongFinal = 0
  for (const row of rows) {
    const want = row.phone_number.endsWith("0000") ? "failed" : "successful"
    if (row.status !== want && row.status !== "pending") {
      wrongFinal++
      if (wrongFinal <= 3) {
        problem(`order ${row.order_number} for ${row.phone_number} ended ${row.status}, expected ${want}`)
      }
    }
  }
  const unknownKeys = [
    ...[...refs].filter(([, e]) => e.unknown && !e.acked).map(([ref, e]) => `r:${e.accountId}:${ref}`),
    ...[...unknownNoRef].flatMap(([id, n]) => Array.from({ length: n }, () => `none:${id}`))
  ]
  const rejectedKeys = [...refs].filter(([, e]) => !e.acked && !e.unknown && e.definiteNo > 0)
    .map(([ref, e]) => `r:${e.accountId}:${ref}`)
  const noRefCommitted = new Map()
  const rec = await reconcileOrders({
    total: rows.length,
    acknowledged: acked.size,
    unknown: unknownKeys,
    rejectedSample: rejectedKeys,
    ackSample: [...acked.keys()].map((n) => `n:${n}`),
    count: async (key) => {
      if (key.startsWith("n:")) return byNumber.get(key.slice(2)) ?? 0
      if (key.startsWith("r:")) {
        const [, id, ...rest] = key.split(":")
        return byRef.get(`${id}:${rest.join(":")}`)?.length ?? 0
      }
      // An unknown outcome without a reference: count the unacknowledged orders of that account, once each.
      const id = Number(key.slice(5))
      const used = noRefCommitted.get(id) ?? 0
      const available = rows.filter((r) => r.account_id === id && r.reference === null && !acked.has(r.order_number))
        .length
      if (used < available) {
        noRefCommitted.set(id, used + 1)
        return 1
      }
      return 0
    }
  })
  if (rec.ackMissing > 0) problem(`${rec.ackMissing} acknowledged orders are not in the database`)
  if (rec.ackDuplicated > 0) problem(`${rec.ackDuplicated} acknowledged orders are in the database more than once`)
  if (rec.rejectedFound > 0) {
    problem(
      `${rec.rejectedFound} references answered only with 4xx/429 exist as orders: ${rec.rejectedFoundKeys.slice(0, 5)}`
    )
  }
  if (!rec.match) {
    problem(`orders in the database (${rec.total}) ≠ acknowledged + committed without an answer (${rec.expected})`)
  }

  const money = await moneyChecks(pg, db.name, funded)
  for (const issue of money.issues) problem(`money: ${issue}`)

  const logs = await scanServerLogs(servers)
  if (logs.status500 > 0) problem(`the server logs hold ${logs.status500} requests answered 500`)
  if (logs.errorLines > 0) problem(`the server logs hold ${logs.errorLines} ERROR lines`)
  if (figures.status500 > 0) problem(`${figures.status500} responses with status ≥ 500`)
  if (networkErrors.length > 0) {
    problem(
      `${networkErrors.length} requests got no answer: ${
        [...new Set(networkErrors.map((e) => `${e.kind}: ${e.error}`))].slice(0, 5).join("; ")
      }`
    )
  }
  if (unexpected.length > 0) {
    const kinds = tally()
    for (const u of unexpected) kinds.inc(`${u.kind} → ${u.status}`)
    problem(`${unexpected.length} unexpected answers: ${kinds.entries().map(([k, n]) => `${k} ×${n}`).join(", ")}`)
    for (const u of unexpected.slice(0, 3)) console.log(`     e.g. ${u.kind} ${u.status}: ${u.body}`)
  }
  for (const breach of windowBreaches()) problem(`rate limit breached: ${breach}`)
  for (const account of limited) {
    if (figures.status429.get(account.name) === 0) problem(`the bursts on ${account.name} never met a 429`)
  }
  if (figures.replays > 0 && figures.replaysOk === 0) problem("no replay succeeded")
  if (figures.insufficient.total() === 0) {
    problem("no order met an insufficient balance (the tight wallets never ran dry)")
  }
  if (topUpFailures > 0) problem(`${topUpFailures} top-ups failed`)
  for (const s of servers) {
    if (s.exited) problem(`${s.name} is no longer running (${JSON.stringify(s.exited)})`)
  }

  // ---- Figures
  const lat = [...figures.freshLatencies].sort((x, y) => x - y)
  const pct = (p) =>
    lat.length === 0 ? "n/a" : `${Math.round(lat[Math.min(lat.length - 1, Math.floor(p * lat.length))])} ms`
  console.log("")
  console.log(
    `  requests           ${figures.requests} in ${loadSeconds.toFixed(1)} s (${
      (figures.requests / loadSeconds).toFixed(0)
    }/s), server A ${byServer.get("A")}, server B ${byServer.get("B")}`
  )
  console.log("  by endpoint and status:")
  for (const [key, n] of byEndpoint.entries()) console.log(`    ${key.padEnd(44)} ${n}`)
  console.log("  by kind and answer:")
  for (const [key, n] of byKind.entries()) console.log(`    ${key.padEnd(44)} ${n}`)
  console.log(
    `  orders placed      ${figures.fresh} acknowledged fresh (${
      figures.freshByStatus.entries().map(([k, n]) => `${k} ${n}`).join(", ")
    }); ` +
      `latency p50 ${pct(0.5)}, p99 ${pct(0.99)}`
  )
  console.log(
    `  replays            ${figures.replaysOk} of ${figures.replays} returned the original order, flagged replayed`
  )
  console.log(
    `  duplicate races    ${figures.racesOk} of ${figures.races} gave one order and one replay across the two processes`
  )
  console.log(`  reference reuse    ${figures.conflicts} answered 422, no order`)
  console.log(`  lookups            ${figures.lookups} read back through either process`)
  console.log(
    `  insufficient       ${figures.insufficient.entries().map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`
  )
  console.log(`  429s               ${figures.status429.entries().map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`)
  console.log("  bursts:")
  for (const x of bursts) {
    console.log(
      `    ${String(x.at).padStart(3)} s ${x.account.padEnd(15)} ${x.scope.padEnd(8)} ${x.admitted} admitted${
        x.expected === undefined ? "" : ` (expected ${x.expected})`
      }: ${x.statuses.entries().map(([k, n]) => `${k}×${n}`).join(", ")}`
    )
  }
  for (const account of limited) {
    console.log(
      `  busiest minute     ${account.name}: ${
        Object.entries(account.worstWindow ?? {}).map(([s, n]) => `${s} ${n}/${account.effective[s]}`).join(", ")
      }`
    )
  }
  console.log(`  top-ups            ${topUps} of GHS ${tight.topUp} on ${tight.name}`)
  console.log(
    `  500s               ${figures.status500} answered, ${logs.status500} logged; ${logs.errorLines} ERROR and ${logs.warnLines} WARN log lines`
  )
  for (const sample of logs.samples.slice(0, 4)) console.log(`    log: ${sample}`)
  console.log(`  no answer          ${networkErrors.length}`)
  console.log(`  unexpected answers ${unexpected.length}`)
  console.log(`  pending            ${pendingAtEnd} at the end of the load, ${pending} after waiting`)
  console.log(
    `  reconciliation     ${rec.total} in database ${rec.match ? "=" : "≠"} ${rec.acknowledged} acknowledged + ` +
      `${rec.unknownFound} committed without an answer (${committedUnknown} by row) → ${
        rec.match ? "MATCH" : "MISMATCH"
      }; ` +
      `${lost} lost, ${rec.ackDuplicated} duplicated, ${mismatched} differing, ${unexplained} unexplained, ` +
      `${rec.rejectedFound} of ${rejectedKeys.length} refused references stored`
  )
  console.log("  money (GHS)        account            funded      spent    balance  orders failed")
  for (const x of money.accounts) {
    const account = accounts.find((y) => y.id === x.account_id)
    const ghs = (p) => (Number(BigInt(p)) / 100).toFixed(2).padStart(10)
    console.log(
      `                     ${String(account?.name ?? x.account_id).padEnd(15)} ${ghs(x.funded)} ${ghs(x.spent)} ${
        ghs(x.balance)
      } ${String(x.orders).padStart(7)} ${String(x.failed).padStart(6)}`
    )
  }
  console.log(
    `  ledger             ${money.invariants.ledger_entries} entries; ${
      money.issues.length === 0
        ? "every order debited once, every failed order refunded once, balances = ledger = funded − spent, none negative"
        : `${money.issues.length} issues`
    }`
  )
  console.log(`  audit              ok: ${audit.ok}`)

  if (opts.json) {
    fs.writeFileSync(
      opts.json,
      JSON.stringify(
        {
          seed: SEED,
          seconds: SECONDS,
          requests: figures.requests,
          byEndpoint: byEndpoint.toJSON(),
          byKind: byKind.toJSON(),
          fresh: figures.fresh,
          replays: { sent: figures.replays, ok: figures.replaysOk },
          races: { sent: figures.races, ok: figures.racesOk },
          status429: figures.status429.toJSON(),
          status500: { answered: figures.status500, logged: logs.status500 },
          bursts: bursts.map((x) => ({ ...x, statuses: x.statuses.toJSON() })),
          reconciliation: rec,
          money,
          audit,
          problems
        },
        (_, v) => typeof v === "bigint" ? String(v) : v,
        2
      )
    )
    log(`wrote ${path.resolve(opts.json)}`)
  }
  printProblems()
  console.log(problems.length === 0 ? "\nSOAK PASSED" : "\nSOAK FAILED")
  return problems.length === 0 ? 0 : 1
}

await runMain("soak test", main)
