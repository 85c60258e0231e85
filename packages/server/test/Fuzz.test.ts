/**
 * Property-based fuzzing of both APIs (fast-check): generated bad requests at every endpoint of
 * the public and the admin API, sent over raw HTTP so that any method, request-target, header
 * and body bytes can be sent. Every request is bad by construction and names its fault and the
 * statuses that fault allows.
 *
 * For every response: never a 5xx; the JSON envelope (`success: false`, a `message`, `errors`
 * on a 422, `retry_after` on a 429, `Allow` on a 405) with `X-Request-Id` and, under `/api/v1`,
 * the rate-limit headers; one of the statuses the fault allows; no stack trace, SQL, file path,
 * admin token or API key in the body. After every request the database's money-related state
 * (accounts, keys, wallets, ledger, orders, catalogue) is exactly as before it; after each property
 * it is the state after set-up, and after all of them so is the admin API's view of it (balances,
 * audit, ledger, orders, keys, catalogue).
 *
 * A failure prints fast-check's seed and path: replay it with `FUZZ_SEED=<seed> FUZZ_PATH=<path>`.
 */
import { AdminApi, type Bundle, Money, Order, Phone } from "@databundle/contract"
import { type Target, targets } from "@databundle/core/testing"
import { type HttpClient, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Arbitrary, Context, Effect, Either, FastCheck, Layer, Schema } from "effect"
import fc from "fast-check"
import * as http from "node:http"
import { ADMIN_TOKEN, adminClient, newAccount, resellerClient, seedCatalog, serverLayer } from "./Harness.js"

// ---------------------------------------------------------------------------------------------
// Probes: generated requests, and how they are sent
// ---------------------------------------------------------------------------------------------

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" | "TRACE" | "PROPFIND"

/** Every method the fuzzing uses; HEAD is left out, as its answers have no body to check. */
const METHODS: ReadonlyArray<Method> = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"]

type Headers = Readonly<Record<string, string | ReadonlyArray<string>>>

/** A generated request, bad by construction. */
interface Probe {
  /** What makes it bad. */
  readonly fault: string
  readonly method: Method
  /** The request-target exactly as sent (printable ASCII). */
  readonly target: string
  readonly headers: Headers
  readonly body: Buffer | undefined
  /** Sent with `Transfer-Encoding: chunked` rather than a Content-Length. */
  readonly chunked: boolean
  /** The statuses the fault allows; anything else fails. */
  readonly expect: ReadonlyArray<number>
  /** For a 405: the methods the path serves, which `Allow` must list. */
  readonly allow: ReadonlyArray<string> | undefined
  /** A 400 here is the insufficient-balance error, with `balance` and `required`. */
  readonly insufficient: boolean
}

const clip = (text: string, max = 200) => text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`

const describeProbe = (p: Probe) => {
  const headers = Object.fromEntries(
    Object.entries(p.headers).map(([k, v]) => [k, typeof v === "string" ? clip(v, 80) : v.map((x) => clip(x, 80))])
  )
  const body = p.body === undefined
    ? "no body"
    : `body ${JSON.stringify(clip(p.body.toString("utf8"), 240))} (${p.body.length} bytes${
      p.chunked ? ", chunked" : ""
    })`
  return `[${p.fault}] ${p.method} ${clip(p.target, 240)} headers ${JSON.stringify(headers)} ${body} → expected ${
    p.expect.join("|")
  }`
}

/** A probe that fast-check prints in one readable line (bodies and long values clipped). */
const probe = (
  fields: Omit<Probe, "allow" | "insufficient" | "chunked" | "body"> & Partial<Probe>
): Probe => {
  const p: Probe = { allow: undefined, insufficient: false, chunked: false, body: undefined, ...fields }
  return Object.assign(p, { [fc.toStringMethod]: () => describeProbe(p) })
}

interface Observed {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
}

/** Sends a probe on a fresh connection, byte for byte; fails only on a transport error. */
const send = (port: number, p: Probe) =>
  new Promise<Observed>((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {}
    for (const [name, value] of Object.entries(p.headers)) {
      headers[name] = typeof value === "string"
        ? value
        : [...value]
    }
    if (p.body !== undefined && p.chunked) headers["transfer-encoding"] = "chunked"
    const request = http.request({ host: "127.0.0.1", port, method: p.method, path: p.target, headers, agent: false })
    request.setTimeout(20_000, () => request.destroy(new Error("no response within 20 s")))
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8")
        }))
      response.on("error", reject)
    })
    request.on("error", reject)
    if (p.body === undefined) {
      request.end()
    } else if (p.chunked) {
      for (let i = 0; i < p.body.length; i += 16_384) request.write(p.body.subarray(i, i + 16_384))
      request.end()
    } else {
      request.end(p.body)
    }
  })

// ---------------------------------------------------------------------------------------------
// The world the fuzzing runs in, and its money-related state
// ---------------------------------------------------------------------------------------------

const PUBLIC = "/api/v1"
const ADMIN = "/admin/v1"
const WALLETS = ["main", "referral", "agent"] as const

interface Account {
  readonly id: number
  readonly key: string
  readonly keyId: number
}

interface PlacedOrder {
  readonly orderNumber: string
  readonly bundleId: number
  readonly phone: string
  readonly reference: string
}

/** What the generators draw on: the accounts, keys, catalogue and orders set up before fuzzing. */
interface World {
  readonly port: number
  readonly sql: SqlClient.SqlClient
  /** Funded in all three wallets; has a successful, a failed (refunded) and a pending order. */
  readonly rich: Account
  /** Another account with an order: its order must stay invisible to `rich`. */
  readonly other: Account
  /** An account with empty wallets. */
  readonly broke: Account
  /** A key of `rich`, revoked. */
  readonly revokedKey: string
  /** The key of a suspended account. */
  readonly suspendedKey: string
  readonly accountIds: ReadonlyArray<number>
  readonly keyIds: ReadonlyMap<number, ReadonlyArray<number>>
  readonly activeNetworks: ReadonlyArray<number>
  readonly inactiveNetworks: ReadonlyArray<number>
  /** Active bundles of active networks. */
  readonly buyable: ReadonlyArray<number>
  /** Inactive bundles, or bundles of an inactive network. */
  readonly unbuyable: ReadonlyArray<number>
  readonly maxBundleId: number
  readonly richOrders: ReadonlyArray<PlacedOrder>
  readonly otherOrders: ReadonlyArray<PlacedOrder>
  readonly pendingOrder: string
  readonly settledOrders: ReadonlyArray<string>
  /** Balances in pesewas by `${account}:${wallet}`. */
  readonly balances: ReadonlyMap<string, bigint>
  readonly priceGroups: ReadonlyArray<string>
  /** The catalogue export, as JSON. */
  readonly catalog: { readonly price_groups: ReadonlyArray<string>; readonly networks: ReadonlyArray<any> }
  /** Strings no response may contain. */
  readonly secrets: ReadonlyArray<string>
  /** The money-related state after set-up, in the database and through the admin API. */
  readonly baseline: Fingerprint
  readonly view: AdminView
  /** The state after the last request, to tell which request changed it. */
  readonly state: { last: Fingerprint }
}

class Fixture extends Context.Tag("test/Fuzz/Fixture")<Fixture, World>() {}

/** One `count:md5` per table (volatile columns left out), and the wallets out of line with their ledger. */
type Fingerprint = Readonly<Record<string, string>>

const digest = (table: string, columns: string, order: string) =>
  `(SELECT count(*) || ':' || md5(coalesce(string_agg(concat_ws(',', ${columns}), '|' ORDER BY ${order}), '')) ` +
  `FROM ${table} t) AS ${table}`

const FINGERPRINT = `SELECT ${
  [
    digest("price_groups", "t.*", "t.id"),
    digest("accounts", "t.*", "t.id"),
    // last_used_at moves with every authenticated request.
    digest("api_keys", "t.id, t.account_id, t.key_hash, t.prefix, t.created_at, t.revoked_at", "t.id"),
    digest("wallets", "t.*", "t.account_id, t.kind"),
    digest("networks", "t.*", "t.id"),
    digest("bundles", "t.*", "t.id"),
    digest("bundle_prices", "t.*", "t.bundle_id, t.price_group_id"),
    // The fulfilment worker's bookkeeping (next_check_at, checks) is not money.
    digest(
      "orders",
      "t.id, t.order_number, t.account_id, t.bundle_id, t.bundle_label, t.network_name, t.phone_number, " +
        "t.amount, t.status, t.reference, t.failure_reason, t.created_at, t.settled_at",
      "t.id"
    ),
    digest("ledger_entries", "t.*", "t.id"),
    digest("webhook_events", "t.id, t.account_id, t.type, t.body", "t.id"),
    `(SELECT count(*) || '' FROM wallets w WHERE w.balance <> coalesce((SELECT sum(l.amount) FROM ledger_entries l ` +
    `WHERE l.account_id = w.account_id AND l.wallet = w.kind), 0)) AS wallets_off_ledger`
  ].join(",\n")
}`

const fingerprint = (sql: SqlClient.SqlClient) =>
  Effect.map(sql.unsafe<Record<string, string>>(FINGERPRINT), (rows) => ({ ...rows[0]! }) as Fingerprint).pipe(
    Effect.orDie
  )

const changedTables = (before: Fingerprint, after: Fingerprint) =>
  Object.keys(before).filter((table) => before[table] !== after[table])

/** Everything money-related as the admin API shows it (key use times left out). */
const adminView: Effect.Effect<AdminView, unknown, HttpClient.HttpClient> = Effect.gen(function*() {
  const admin = yield* adminClient
  const { accounts, pagination } = yield* admin.accounts.list({ urlParams: { per_page: 100 } })
  assert.isAtMost(pagination.total, 100)
  const details = yield* Effect.forEach(
    accounts,
    (a) =>
      Effect.map(admin.accounts.show({ path: { account_id: a.id } }), (d) => ({
        ...d,
        keys: d.keys.map(({ last_used_at: _, ...key }) => key)
      }))
  )
  const ledgers = yield* Effect.forEach(
    accounts,
    (a) => admin.wallets.ledger({ path: { account_id: a.id }, urlParams: { per_page: 100 } })
  )
  const orders = yield* admin.ordersAdmin.list({ urlParams: { per_page: 100 } })
  const audit = yield* admin.wallets.audit()
  const catalog = yield* admin.catalogFile.export()
  return { accounts, details, ledgers, orders, audit, catalog }
})

interface AdminView {
  readonly accounts: ReadonlyArray<AdminApi.AccountSummary>
  readonly details: ReadonlyArray<unknown>
  readonly ledgers: ReadonlyArray<unknown>
  readonly orders: unknown
  readonly audit: { readonly ok: boolean }
  readonly catalog: unknown
}

const getJson = (port: number, path: string) =>
  Effect.promise(() =>
    send(
      port,
      probe({
        fault: "none",
        method: "GET",
        target: path,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        expect: [200]
      })
    )
  ).pipe(Effect.map((r) => JSON.parse(r.text)))

/** Seeds the catalogue, creates the accounts, keys and orders, and takes the baseline. */
const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const server = yield* HttpServer.HttpServer
  assert.strictEqual(server.address._tag, "TcpAddress")
  const port = (server.address as HttpServer.TcpAddress).port
  yield* seedCatalog
  const admin = yield* adminClient

  const rich = yield* newAccount(1_000_000n)
  yield* admin.wallets.fund({ path: { account_id: rich.id }, payload: { amount: 1_234n, wallet: "referral" } })
  yield* admin.wallets.fund({ path: { account_id: rich.id }, payload: { amount: 567n, wallet: "agent" } })
  const other = yield* newAccount(50_000n)
  const broke = yield* newAccount(0n)
  const suspended = yield* newAccount(10_000n)
  yield* admin.accounts.update({ path: { account_id: suspended.id }, payload: { status: "suspended" } })
  const revoked = yield* admin.apiKeys.create({ path: { account_id: rich.id } })
  yield* admin.apiKeys.revoke({ path: { account_id: rich.id, key_id: revoked.id } })

  const bundles = yield* sql<{ id: number; buyable: boolean }>`
    SELECT b.id, (b.active AND n.active) AS buyable FROM bundles b JOIN networks n ON n.id = b.network_id ORDER BY b.id
  `
  const networks = yield* sql<{ id: number; active: boolean }>`SELECT id, active FROM networks ORDER BY id`
  const buyable = bundles.filter((b) => b.buyable).map((b) => b.id)

  const place = (account: Account, bundleId: number, phone: string, reference: string) =>
    Effect.gen(function*() {
      const client = yield* resellerClient(account.key)
      const placed = yield* client.orders.place({
        payload: { bundle_id: bundleId as Bundle.BundleId, phone_number: phone, reference }
      })
      return { orderNumber: placed.order.order_number, bundleId, phone, reference, status: placed.order.status }
    })
  // The simulator settles ...0000 as failed (refunded) and keeps ...9999 pending (for an hour here).
  const richOrders = [
    yield* place(rich, buyable[0]!, "0241234567", "fuzz-ok-1"),
    yield* place(rich, buyable[1]!, "233241230000", "fuzz-failed-1"),
    yield* place(rich, buyable[2]!, "0241239999", "fuzz-pending-1")
  ]
  const otherOrders = [yield* place(other, buyable[0]!, "0201234567", "fuzz-other-1")]
  assert.deepStrictEqual(richOrders.map((o) => o.status), ["successful", "failed", "pending"])

  const keys = yield* sql<{ id: number; account_id: number }>`SELECT id, account_id FROM api_keys ORDER BY id`
  const keyIds = new Map<number, Array<number>>()
  for (const key of keys) keyIds.set(key.account_id, [...(keyIds.get(key.account_id) ?? []), key.id])

  const view = yield* adminView
  const balances = new Map<string, bigint>()
  for (const account of view.accounts) {
    for (const wallet of WALLETS) balances.set(`${account.id}:${wallet}`, account.balance[wallet])
  }
  // The SqlClient here must be the server's own database.
  const counted = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM accounts`
  assert.strictEqual(Number(counted[0]!.count), view.accounts.length)

  const catalog = yield* getJson(port, `${ADMIN}/catalog`)
  const baseline = yield* fingerprint(sql)
  const world: World = {
    port,
    sql,
    rich,
    other,
    broke,
    revokedKey: revoked.api_key,
    suspendedKey: suspended.key,
    accountIds: view.accounts.map((a) => a.id),
    keyIds,
    activeNetworks: networks.filter((n) => n.active).map((n) => n.id),
    inactiveNetworks: networks.filter((n) => !n.active).map((n) => n.id),
    buyable,
    unbuyable: bundles.filter((b) => !b.buyable).map((b) => b.id),
    maxBundleId: Math.max(...bundles.map((b) => b.id)),
    richOrders,
    otherOrders,
    pendingOrder: richOrders[2]!.orderNumber,
    settledOrders: [richOrders[0]!.orderNumber, richOrders[1]!.orderNumber, otherOrders[0]!.orderNumber],
    balances,
    priceGroups: catalog.price_groups,
    catalog: { price_groups: catalog.price_groups, networks: catalog.networks },
    secrets: [ADMIN_TOKEN, rich.key, other.key, broke.key, suspended.key, revoked.api_key],
    baseline,
    view,
    state: { last: baseline }
  }
  assert.isAbove(world.unbuyable.length, 0, "the demo catalogue has unbuyable bundles")
  assert.isAbove(world.inactiveNetworks.length, 0, "the demo catalogue has an inactive network")
  return world
})

/** The server on `target`, with the SqlClient of its own database and the world set up on it. */
const fuzzLayer = (target: Target, extra: Record<string, string>) =>
  Layer.effect(Fixture, setup).pipe(
    Layer.provideMerge(
      // One layer build shares `target.layer`: the SqlClient is the server's.
      Layer.merge(
        // Pending orders stay pending for the whole run: the fuzzing meets one, and no worker moves money meanwhile.
        serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "3600", ...extra }),
        target.layer
      )
    )
  )

// ---------------------------------------------------------------------------------------------
// Checking a response
// ---------------------------------------------------------------------------------------------

const LEAKS: ReadonlyArray<readonly [string, RegExp]> = [
  ["a stack trace", /(?:\n|\\n)\s*at [^\s]+ \(|\bat [^\s"]+ \([^)]*:\d+:\d+\)/],
  ["SQL", /\bSELECT\b|\bINSERT\b|SqlError/],
  ["SQL", /relation "|syntax error|violates .*constraint|out of range for type/i],
  ["a file path", /\/work\/|node_modules|\.ts:\d|\.js:\d|file:\/\//]
]

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const header = (r: Observed, name: string) => {
  const value = r.headers[name]
  return Array.isArray(value) ? value.join(", ") : value
}

/** The path the server routes on, when the target has one. */
const pathOf = (target: string) => {
  try {
    return new URL(target, "http://localhost").pathname
  } catch {
    return undefined
  }
}

/** Everything wrong with a response to a probe. */
const problemsOf = (w: World, p: Probe, r: Observed, allow429: boolean): Array<string> => {
  const problems: Array<string> = []
  const expect = allow429 ? [...p.expect, 429] : p.expect
  if (r.status >= 500) problems.push(`a ${r.status}`)
  else if (!expect.includes(r.status)) problems.push(`status ${r.status}, expected ${expect.join(" or ")}`)
  if (!header(r, "x-request-id")) problems.push("no X-Request-Id")
  if (!/^application\/json\b/i.test(header(r, "content-type") ?? "")) {
    problems.push(`Content-Type ${header(r, "content-type")}`)
  }
  let body: unknown = undefined
  try {
    body = JSON.parse(r.text)
  } catch {
    problems.push("the body is not JSON")
  }
  if (body !== undefined && !isObject(body)) problems.push("the body is not a JSON object")
  if (isObject(body)) {
    if (typeof body.success !== "boolean") problems.push("no boolean `success`")
    if (r.status >= 400) {
      if (body.success !== false) problems.push("`success` is not false")
      if (typeof body.message !== "string" || body.message.length === 0) problems.push("no string `message`")
    }
    if (r.status === 422) {
      const errors = body.errors
      const ok = isObject(errors) && Object.keys(errors).length > 0 &&
        Object.values(errors).every((list) =>
          Array.isArray(list) && list.length > 0 && list.every((m) => typeof m === "string")
        )
      if (!ok) problems.push("a 422 without `errors` as an object of string arrays")
    }
    if (r.status === 429) {
      const after = body.retry_after
      if (typeof after !== "number" || !Number.isInteger(after) || after < 1 || after > 61) {
        problems.push("a 429 without an integer `retry_after` of 1 to 61")
      } else if (header(r, "retry-after") !== String(after)) {
        problems.push("a 429 whose Retry-After differs from `retry_after`")
      }
    }
    if (r.status === 400 && p.insufficient) {
      if (typeof body.balance !== "number" || typeof body.required !== "number") {
        problems.push("an insufficient-balance 400 without numbers `balance` and `required`")
      }
    }
  }
  if (r.status === 405 && p.allow !== undefined) {
    const allow = (header(r, "allow") ?? "").split(",").map((m) => m.trim()).filter((m) => m.length > 0).sort()
    if (allow.join(",") !== [...p.allow].sort().join(",")) {
      problems.push(`Allow is "${header(r, "allow")}", expected ${p.allow.join(", ")}`)
    }
  }
  const path = pathOf(p.target)
  if (path !== undefined && (path === PUBLIC || path.startsWith(`${PUBLIC}/`))) {
    for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      if (!/^\d+$/.test(header(r, name) ?? "")) problems.push(`no ${name}`)
    }
  }
  for (const [what, pattern] of LEAKS) {
    if (pattern.test(r.text)) problems.push(`the body shows ${what}`)
  }
  for (const secret of w.secrets) {
    if (r.text.includes(secret)) problems.push("the body shows a secret (the admin token or an API key)")
  }
  return problems
}

/** Sends each probe; fails on any problem with the response or any change to the state. */
const requestsAreHarmless = (w: World, arbitrary: fc.Arbitrary<Probe>, allow429: boolean) =>
  fc.asyncProperty(arbitrary, async (p) => {
    const response = await send(w.port, p)
    const problems = problemsOf(w, p, response, allow429)
    const now = await Effect.runPromise(fingerprint(w.sql))
    const changed = changedTables(w.state.last, now)
    if (changed.length > 0) {
      problems.push(`it changed the state of ${changed.join(", ")}`)
      w.state.last = now
    }
    if (problems.length > 0) {
      const headers = ["allow", "retry-after", "x-request-id"].flatMap((name) =>
        header(response, name) === undefined ? [] : [`${name}: ${header(response, name)}`]
      )
      throw new Error(
        `${problems.join("; ")}\n    observed: ${response.status} ${clip(response.text, 600)}${
          headers.length > 0 ? `\n    headers: ${headers.join(", ")}` : ""
        }`
      )
    }
  })

const replay: Partial<fc.Parameters<unknown>> = process.env.FUZZ_SEED === undefined ? {} : {
  seed: Number(process.env.FUZZ_SEED),
  ...(process.env.FUZZ_PATH === undefined ? {} : { path: process.env.FUZZ_PATH })
}

/** Runs a property of `numRuns` probes, then checks the database against the baseline. */
const fuzz = (
  generator: (w: World) => fc.Arbitrary<Probe>,
  numRuns: number,
  options: { readonly allow429?: boolean } = {}
) =>
  Effect.gen(function*() {
    const w = yield* Fixture
    yield* Effect.promise(() =>
      fc.assert(requestsAreHarmless(w, generator(w), options.allow429 ?? false), { numRuns, ...replay })
    )
    assert.deepStrictEqual(yield* fingerprint(w.sql), w.baseline)
  })

// ---------------------------------------------------------------------------------------------
// Values: good ones to build on, bad ones that no schema of the contract accepts
// ---------------------------------------------------------------------------------------------

/** A JSON value written as it stands (numbers JSON.stringify cannot write: 1e400, -0). */
class RawJson {
  constructor(readonly text: string) {}
  [fc.toStringMethod]() {
    return this.text
  }
}

/** JSON text of a value that may hold `RawJson`. */
const toJson = (value: unknown): string => {
  if (value instanceof RawJson) return value.text
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`
  if (isObject(value)) {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const rejects = <A, I>(schema: Schema.Schema<A, I>) => (value: unknown) =>
  Either.isLeft(Schema.decodeUnknownEither(schema)(value))

/** Inputs that have broken servers before. */
const TRICKY = [
  " ",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-0",
  "0x10",
  "1e400",
  "1_000",
  "١٢٣",
  "１２３",
  "' OR '1'='1",
  "'; DROP TABLE ledger_entries; --",
  "\\",
  "\"",
  "${7*7}",
  "{{7*7}}",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "\u0000",
  "\uFEFF",
  "\u202E",
  "🙂",
  "ÿ",
  "\r\n",
  "$1",
  "%s%n"
]

const junk: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 200, maxLength: 3000 }) }
)

/** JSON values of the wrong type for a field of type `kind`. */
const wrongType = (kind: "string" | "number" | "boolean" | "object") =>
  fc.constantFrom<unknown>(
    ...[
      kind === "string" ? [] : ["", "1", "true", "x"],
      kind === "number" ? [] : [0, 1, -1, 1.5],
      kind === "boolean" ? [] : [true, false],
      kind === "object" ? [] : [{}, { a: 1 }],
      [null, [], [1], ["x"]]
    ].flat()
  )

/** Strings that `valid` refuses, from junk and from `near` misses. */
const badString = (valid: (s: string) => boolean, near: fc.Arbitrary<string> = fc.constant("")) =>
  fc.oneof(junk, near).filter((s) => !valid(s))

const ENUM_MISSES = (values: ReadonlyArray<string>) =>
  fc.oneof(
    fc.constantFrom(...values.flatMap((v) => [v.toUpperCase(), ` ${v}`, `${v} `, `${v}s`, v.slice(1)]), "", "all", "*"),
    junk
  ).filter((s) => !values.includes(s))

const badEnum = (values: ReadonlyArray<string>) => fc.oneof(ENUM_MISSES(values), wrongType("string"))

const isPhone = (s: string) => Phone.GHANA_PHONE.test(s)
const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max })
const badPhoneText = badString(
  isPhone,
  fc.oneof(
    digits(0, 15),
    digits(9, 9).map((d) => `+233${d}`),
    digits(9, 9).map((d) => `0${d.slice(0, 2)} ${d.slice(2)}`),
    digits(9, 9).map((d) => `00233${d}`),
    digits(9, 9).map((d) => `0${d}\n`),
    digits(9, 9).map((d) => `0${d}`.replace(/\d/g, (c) => String.fromCharCode(0xff10 + Number(c))))
  )
)
const goodPhone = fc.oneof(fc.stringMatching(/^0\d{9}$/), fc.stringMatching(/^233\d{9}$/))

const REFERENCE = /^[A-Za-z0-9_.:-]{1,64}$/
const goodReference = fc.stringMatching(/^fuzz-[A-Za-z0-9_.:-]{1,40}$/)
const badReferenceText = badString(
  (s) => REFERENCE.test(s),
  fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.:-]{65,100}$/), fc.stringMatching(/^[A-Za-z0-9]{1,10}[ /#?&é+,][a-z]{0,5}$/))
)

const existsAmong = (existing: ReadonlySet<number>) => (raw: string) => {
  const n = Number(raw)
  return raw.trim().length === 0 || existing.has(n)
}

/** True for an id the contract's identifiers accept (1 to 2^31 - 1). */
const inIdRange = (id: string | number) => {
  const n = Number(id)
  return Number.isInteger(n) && n >= 1 && n <= 2_147_483_647
}

/** An id that is not a positive integer at all, or one too large for the database. */
const badIdText = fc.oneof(
  { weight: 3, arbitrary: junk },
  {
    weight: 2,
    arbitrary: fc.constantFrom("0", "-1", "-0", "1.5", "0.999", "1e21", "1e308", "-2147483649", "NaN", "Infinity")
  },
  // Integers past the database's 32-bit ids.
  { weight: 2, arbitrary: fc.constantFrom("2147483648", "4294967296", "99999999999", "9007199254740991") },
  { weight: 1, arbitrary: fc.integer({ min: -2_147_483_648, max: 0 }).map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }).filter((x) => !Number.isInteger(x)).map(String) },
  { weight: 2, arbitrary: fc.bigInt({ min: 2n ** 31n, max: 10n ** 25n }).map(String) },
  { weight: 1, arbitrary: digits(101, 2000) }
)

/** Query-parameter text that is not an integer from `min` to `max`. */
const badIntText = (min: number, max: number) =>
  fc.oneof(
    badIdText,
    fc.integer({ min: max + 1, max: max + 1_000_000 }).map(String),
    fc.constantFrom(String(min - 1), String(max + 1), `${min}.5`, `${max}.0001`, "")
  ).filter((s) => {
    const n = Number(s)
    return !(Number.isInteger(n) && n >= min && n <= max)
  })

const badName = fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 400 }), wrongType("string"))
  .filter(rejects(AdminApi.CreateAccountPayload.fields.name))

const PRICE_GROUP = /^[a-z0-9][a-z0-9_-]{0,31}$/
const badPriceGroupText = (known: ReadonlyArray<string>) =>
  fc.oneof(
    badString((s) => PRICE_GROUP.test(s), fc.constantFrom("Retail", "-agent", "a b", "a".repeat(33))),
    // Well formed but unknown.
    fc.stringMatching(/^zz[a-z0-9_-]{1,20}$/)
  ).filter((s) => !known.includes(s))

const badNote = fc.oneof(fc.string({ minLength: 501, maxLength: 1500 }), wrongType("string").filter((v) => v !== null))

/** JSON values that `valid` refuses as an amount of cedis: wrong types, too many decimals, out of range. */
const badCedis = (valid: (value: unknown) => boolean) =>
  fc.oneof(
    wrongType("number"),
    fc.constantFrom<unknown>(
      1.234,
      0.001,
      10.005,
      0.1 + 0.2,
      1e12,
      -1e12,
      1e21,
      1e-7,
      new RawJson("1e400"),
      new RawJson("-1e400"),
      new RawJson("1.0e-400")
    ),
    fc.double({ noNaN: true, noDefaultInfinity: true })
  ).filter((v) => v instanceof RawJson || !valid(v))

const fundAmountOk = (v: unknown) => !rejects(AdminApi.FundWalletPayload.fields.amount)(v)
const adjustAmountOk = (v: unknown) => !rejects(AdminApi.AdjustWalletPayload.fields.amount)(v)
const badPositiveCedis = fc.oneof(badCedis(fundAmountOk), fc.constantFrom<unknown>(0, -0.01, -1, -1e6))
const badNonZeroCedis = fc.oneof(badCedis(adjustAmountOk), fc.constant<unknown>(0))

/** Valid payloads drawn from the contract's own schemas (Effect Schema's Arbitrary), as the base to break. */
const samplesOf = <A, I>(schema: Schema.Schema<A, I>): ReadonlyArray<I> =>
  FastCheck.sample(Arbitrary.make(schema), { numRuns: 40, seed: 20_261_121 }).map((a) => Schema.encodeSync(schema)(a))

const createBases = samplesOf(AdminApi.CreateAccountPayload) as ReadonlyArray<Record<string, unknown>>
const fundBases = samplesOf(AdminApi.FundWalletPayload) as ReadonlyArray<Record<string, unknown>>
const adjustBases = samplesOf(AdminApi.AdjustWalletPayload) as ReadonlyArray<Record<string, unknown>>
const resolveBases = samplesOf(Schema.Struct({ status: Schema.Literal("successful", "failed") })) as ReadonlyArray<
  Record<string, unknown>
>

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

/** A JSON body that is well formed but does not decode: what it breaks, and its text. */
interface BrokenBody {
  readonly fault: string
  readonly text: string
}

interface FieldSpec {
  readonly name: string
  readonly required: boolean
  readonly bad: fc.Arbitrary<unknown>
}

const hugeString = fc.tuple(fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.integer({ min: 5_000, max: 50_000 })).map((
  [unit, length]
) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length))

/** Unknown fields and a `__proto__`, added to bodies that are bad anyway. */
const extraFields = fc.record({
  fields: fc.dictionary(fc.stringMatching(/^x_[a-z]{1,8}$/), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
  proto: fc.boolean()
})

/** A base object with at least one field broken: given a bad value, or left out when required. */
const breakFields = (base: fc.Arbitrary<Record<string, unknown>>, fields: ReadonlyArray<FieldSpec>) =>
  fc.tuple(
    base,
    fc.uniqueArray(fc.constantFrom(...fields), { minLength: 1, maxLength: fields.length, selector: (f) => f.name }),
    fc.tuple(...fields.map((f) => f.bad)),
    fc.array(fc.boolean(), { minLength: fields.length, maxLength: fields.length }),
    // Now and then one broken field gets a huge string, which no field of the contract accepts.
    fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(fc.nat(), hugeString) }),
    extraFields
  ).map(([base, broken, bads, drop, huge, extra]): BrokenBody => {
    const body: Record<string, unknown> = { ...extra.fields, ...base }
    const faults: Array<string> = []
    const hugeField = huge === null ? undefined : broken[huge[0] % broken.length]
    fields.forEach((field, i) => {
      if (!broken.includes(field)) return
      const bad = field === hugeField ? huge![1] : bads[i]
      if (field.required && drop[i] && field !== hugeField) {
        delete body[field.name]
        faults.push(`${field.name} missing`)
      } else {
        body[field.name] = bad
        faults.push(`${field.name} = ${clip(toJson(bad), 40)}`)
      }
    })
    const text = toJson(body)
    return {
      fault: faults.join(", "),
      text: extra.proto ? text.replace(/^\{/, `{"__proto__":{"success":true,"admin":true},`).replace(/,}$/, "}") : text
    }
  })

/** A body that is not a JSON object at all. */
const notAnObject = fc.constantFrom("[]", "[{}]", "\"order\"", "42", "null", "true", "0").map((text): BrokenBody => ({
  fault: `the body is ${text}`,
  text
}))

const withNonObjects = (bodies: fc.Arbitrary<BrokenBody>) =>
  fc.oneof({ weight: 6, arbitrary: bodies }, { weight: 1, arbitrary: notAnObject })

const placeBody = (w: World) =>
  withNonObjects(breakFields(
    fc.record({ bundle_id: fc.constantFrom(...w.buyable), phone_number: goodPhone, reference: goodReference }, {
      requiredKeys: ["bundle_id", "phone_number"]
    }),
    [
      {
        name: "bundle_id",
        required: true,
        bad: fc.oneof(
          wrongType("number"),
          fc.constantFrom<unknown>(0, -1, 1.5, 1.234, 2_147_483_648, 1e20, new RawJson("1e400"), new RawJson("-0")),
          fc.integer({ min: -2_147_483_648, max: 0 }),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
          // Well formed but no such bundle.
          fc.integer({ min: w.maxBundleId + 1, max: 2_147_483_647 })
        )
      },
      { name: "phone_number", required: true, bad: fc.oneof(badPhoneText, wrongType("string")) },
      { name: "reference", required: false, bad: fc.oneof(badReferenceText, wrongType("string")) }
    ]
  ))

const createBody = (w: World) =>
  withNonObjects(breakFields(fc.constantFrom(...createBases), [
    { name: "name", required: true, bad: badName },
    {
      name: "price_group",
      required: false,
      bad: fc.oneof(badPriceGroupText(w.priceGroups), wrongType("string").filter((v) => v !== null))
    }
  ]))

const goodLimits = fc.record({
  all: fc.option(fc.integer({ min: 1, max: 1_000_000 })),
  orders: fc.option(fc.integer({ min: 1, max: 1_000_000 })),
  balance: fc.option(fc.integer({ min: 1, max: 1_000_000 }))
}, { requiredKeys: [] })

const badLimits = fc.oneof(
  fc.constantFrom<unknown>(null, "x", 1, [], true),
  fc.tuple(
    fc.constantFrom("all", "orders", "balance"),
    fc.constantFrom<unknown>(0, -1, 1.5, 1_000_001, "10", true, [], {}, new RawJson("1e400"))
  ).map(([scope, value]) => ({ [scope]: value }))
)

const updateBody = (w: World) =>
  withNonObjects(breakFields(
    fc.record({
      name: fc.string({ minLength: 1, maxLength: 100 }),
      price_group: fc.constantFrom(null, ...w.priceGroups),
      status: fc.constantFrom("active", "suspended"),
      webhook_url: fc.constantFrom(null, "https://example.com/hook", "http://127.0.0.1:9/x"),
      rotate_webhook_secret: fc.boolean(),
      limits: goodLimits
    }, { requiredKeys: [] }),
    [
      { name: "name", required: false, bad: badName },
      {
        name: "price_group",
        required: false,
        bad: fc.oneof(badPriceGroupText(w.priceGroups), wrongType("string").filter((v) => v !== null))
      },
      { name: "status", required: false, bad: badEnum(["active", "suspended"]) },
      {
        name: "webhook_url",
        required: false,
        bad: fc.oneof(
          fc.constantFrom("ftp://example.com", "javascript:alert(1)", "not a url", "", "//example.com", "http//x"),
          fc.string({ minLength: 2030, maxLength: 2100 }).map((s) => `https://example.com/${encodeURIComponent(s)}`),
          junk,
          wrongType("string").filter((v) => v !== null)
        ).filter(rejects(Schema.NullOr(AdminApi.WebhookUrl)))
      },
      { name: "rotate_webhook_secret", required: false, bad: wrongType("boolean") },
      { name: "limits", required: false, bad: badLimits }
    ]
  ))

const walletField = { name: "wallet", required: false, bad: badEnum(WALLETS) }

const fundBody = withNonObjects(breakFields(fc.constantFrom(...fundBases), [
  { name: "amount", required: true, bad: badPositiveCedis },
  walletField,
  { name: "note", required: false, bad: badNote }
]))

const adjustBody = withNonObjects(breakFields(fc.constantFrom(...adjustBases), [
  { name: "amount", required: true, bad: badNonZeroCedis },
  walletField,
  { name: "note", required: true, bad: fc.oneof(fc.constant(""), badNote) }
]))

const resolveBody = withNonObjects(breakFields(fc.constantFrom(...resolveBases), [
  { name: "status", required: true, bad: badEnum(["successful", "failed"]) }
]))

/** The catalogue export with one thing in it broken. */
const catalogBody = (w: World): fc.Arbitrary<BrokenBody> => {
  const networkFields: Record<string, fc.Arbitrary<unknown>> = {
    slug: fc.oneof(badString((s) => /^[a-z0-9][a-z0-9-]{0,31}$/.test(s)), wrongType("string")),
    name: fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 200 }), wrongType("string")),
    color: fc.oneof(
      badString((s) => /^#[0-9A-Fa-f]{6}$/.test(s), fc.constantFrom("red", "#FFF", "#GGGGGG")),
      wrongType("string")
    ),
    delivery: fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 200 })),
    active: wrongType("boolean"),
    bundles: fc.constantFrom<unknown>(null, "x", {}, 1)
  }
  const bundleFields: Record<string, fc.Arbitrary<unknown>> = {
    key: fc.oneof(
      badString((s) => /^[a-z0-9][a-z0-9_.-]{0,63}$/.test(s), fc.constantFrom("MTN-1GB", "a b")),
      wrongType("string")
    ),
    size: fc.oneof(fc.constant(""), fc.string({ minLength: 33, maxLength: 60 })),
    name: fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 200 })),
    badge: fc.oneof(fc.string({ minLength: 101, maxLength: 200 }), wrongType("string")),
    active: wrongType("boolean"),
    price: badPositiveCedis,
    prices: fc.oneof(
      fc.constantFrom<unknown>("x", [], 1),
      fc.tuple(badPriceGroupText([]).filter((s) => !PRICE_GROUP.test(s)), fc.constant(1)).map(([g, p]) => ({ [g]: p })),
      badPositiveCedis.map((p) => ({ [w.priceGroups[0]!]: p }))
    )
  }
  const clone = () => JSON.parse(JSON.stringify(w.catalog)) as { price_groups: Array<unknown>; networks: Array<any> }
  const top = fc.constantFrom<readonly [string, (c: any) => void]>(
    ...([
      ["networks missing", (c: any) => delete c.networks],
      ["networks is not an array", (c: any) => (c.networks = { mtn: c.networks[0] })],
      ["networks is null", (c: any) => (c.networks = null)],
      ["101 networks", (c: any) => (c.networks = Array.from({ length: 101 }, () => c.networks[0]))],
      ["price_groups is not an array", (c: any) => (c.price_groups = "retail")],
      ["a price group name is invalid", (c: any) => c.price_groups.push("Not A Group")],
      ["a network is not an object", (c: any) => c.networks.push("glo")],
      ["501 bundles", (c: any) => (c.networks[0].bundles = Array.from({ length: 501 }, () => c.networks[0].bundles[0]))]
    ] as Array<readonly [string, (c: any) => void]>)
  ).map(([fault, mutate]): BrokenBody => {
    const c = clone()
    mutate(c)
    return { fault, text: JSON.stringify(c) }
  })
  const network = fc.tuple(
    fc.nat(),
    fc.constantFrom(...Object.keys(networkFields)).chain((f) => fc.tuple(fc.constant(f), networkFields[f]!))
  ).map(([n, [field, value]]): BrokenBody => {
    const c = clone()
    const i = n % c.networks.length
    c.networks[i][field] = value
    return { fault: `networks[${i}].${field} = ${clip(toJson(value), 40)}`, text: toJson(c) }
  })
  const bundle = fc.tuple(
    fc.nat(),
    fc.nat(),
    fc.constantFrom(...Object.keys(bundleFields)).chain((f) => fc.tuple(fc.constant(f), bundleFields[f]!))
  ).map(([n, b, [field, value]]): BrokenBody => {
    const c = clone()
    const i = n % c.networks.length
    const j = b % c.networks[i].bundles.length
    c.networks[i].bundles[j][field] = value
    return { fault: `networks[${i}].bundles[${j}].${field} = ${clip(toJson(value), 40)}`, text: toJson(c) }
  })
  return withNonObjects(fc.oneof(top, network, bundle))
}

// ---------------------------------------------------------------------------------------------
// Endpoints, credentials, paths and queries
// ---------------------------------------------------------------------------------------------

type Api = "public" | "admin"

/** Path parameters as encoded segments, with what is wrong with them when they are bad. */
interface Params {
  readonly values: Readonly<Record<string, string>>
  readonly fault: string
}

interface QueryParam {
  readonly name: string
  readonly good: fc.Arbitrary<string>
  readonly bad: fc.Arbitrary<string>
  /** Well formed but odd values that may get a 200 (an unknown account), besides the 422. */
  readonly odd?: fc.Arbitrary<string>
}

interface Endpoint {
  readonly api: Api
  readonly method: Method
  /** The template, after the API prefix: `/networks/:network_id/bundles`. */
  readonly path: string
  /** Parameters that name existing things (never used without another fault). */
  readonly good: fc.Arbitrary<Params>
  /** Parameters that name nothing: 404. */
  readonly bad: fc.Arbitrary<Params>
  readonly body: fc.Arbitrary<BrokenBody> | undefined
  readonly query: ReadonlyArray<QueryParam> | undefined
}

const noParams: fc.Arbitrary<Params> = fc.constant({ values: {}, fault: "" })

/** Percent-encoding of any string (a lone surrogate becomes U+FFFD first). */
const encode = (raw: string) =>
  encodeURIComponent(raw.replace(/[\uD800-\uDFFF]/g, (c, i: number, s: string) => {
    const code = c.charCodeAt(0)
    const pair = code < 0xdc00 ? /[\uDC00-\uDFFF]/.test(s[i + 1] ?? "") : /[\uD800-\uDBFF]/.test(s[i - 1] ?? "")
    return pair ? c : "\uFFFD"
  }))

/** A path segment as sent: percent-encoded, except dot segments, which are sent as they are. */
const segment = (raw: string) => raw === "." || raw === ".." ? raw : encode(raw)

const badId = (existing: ReadonlyArray<number>) =>
  fc.oneof(
    { weight: 5, arbitrary: badIdText },
    { weight: 1, arbitrary: fc.constantFrom(".", "..") },
    // Well formed but unknown.
    { weight: 2, arbitrary: fc.integer({ min: Math.max(...existing) + 1, max: 2_147_483_647 }).map(String) }
  ).filter((s) => s.length > 0 && !existsAmong(new Set(existing))(s))

const badOrderNumber = (visible: ReadonlyArray<string>) =>
  fc.oneof(junk, fc.stringMatching(/^ORD-[0-9A-Z]{12}$/), junk.map((s) => `ORD-${s}`), fc.constantFrom(".", ".."))
    .filter((s) => s.length > 0 && !visible.includes(s) && !visible.includes(s.trim()))

const oneParam = (name: string, values: fc.Arbitrary<string>, what: string): fc.Arbitrary<Params> =>
  values.map((raw) => ({ values: { [name]: segment(raw) }, fault: `${what} ${JSON.stringify(clip(raw, 60))}` }))

const pageParams = (maxPerPage: number): ReadonlyArray<QueryParam> => [
  { name: "page", good: fc.integer({ min: 1, max: 3 }).map(String), bad: badIntText(1, 1_000_000) },
  { name: "per_page", good: fc.integer({ min: 1, max: maxPerPage }).map(String), bad: badIntText(1, maxPerPage) }
]

const enumParam = (name: string, values: ReadonlyArray<string>): QueryParam => ({
  name,
  good: fc.constantFrom(...values),
  bad: ENUM_MISSES(values)
})

const DATES = ["2026-02-30", "2026-13-01", "2026-00-10", "2026-1-1", "yesterday", "1700000000", "2026-11-01T08:00:00"]
const badDate = fc.oneof(
  fc.constantFrom(...DATES, "2026-11-01T25:00:00Z", "2026-11-01 08:00:00Z", "2026-11-01Z", "0000-00-00", "+2026-11-01"),
  junk
).filter(rejects(Order.DateBound))
const dateParam = (name: string): QueryParam => ({
  name,
  good: fc.constantFrom("2026-01-01", "2026-11-01T08:00:00Z", "2020-02-29"),
  bad: badDate
})

/** Every endpoint of both APIs, with good and bad parameters, bodies and queries. */
const endpointsOf = (w: World): ReadonlyArray<Endpoint> => {
  const accounts = [w.rich.id, w.other.id, w.broke.id]
  const allOrders = [...w.richOrders, ...w.otherOrders].map((o) => o.orderNumber)
  const account = (values: ReadonlyArray<number>) =>
    oneParam("account_id", fc.constantFrom(...values).map(String), "account")
  const badAccount = oneParam("account_id", badId(w.accountIds), "no account")
  const e = (
    api: Api,
    method: Method,
    path: string,
    fields: Partial<Omit<Endpoint, "api" | "method" | "path">> = {}
  ): Endpoint => ({
    api,
    method,
    path,
    good: noParams,
    bad: fc.constant({ values: {}, fault: "" }),
    body: undefined,
    query: undefined,
    ...fields
  })
  return [
    e("public", "GET", "/balance"),
    e("public", "GET", "/networks"),
    e("public", "GET", "/networks/:network_id/bundles", {
      good: oneParam("network_id", fc.constantFrom(...w.activeNetworks).map(String), "network"),
      bad: oneParam(
        "network_id",
        fc.oneof(badId(w.activeNetworks), fc.constantFrom(...w.inactiveNetworks).map(String)),
        "no active network"
      )
    }),
    e("public", "POST", "/orders", { body: placeBody(w) }),
    e("public", "GET", "/orders/:order_number", {
      good: oneParam("order_number", fc.constantFrom(...w.richOrders.map((o) => o.orderNumber)), "order"),
      bad: oneParam(
        "order_number",
        fc.oneof(
          badOrderNumber(w.richOrders.map((o) => o.orderNumber)),
          // Another account's order is not visible.
          fc.constantFrom(...w.otherOrders.map((o) => o.orderNumber))
        ),
        "no visible order"
      )
    }),
    e("public", "GET", "/orders", {
      query: [
        ...pageParams(Order.MAX_PER_PAGE),
        enumParam("status", ["pending", "successful", "failed"]),
        { name: "reference", good: goodReference, bad: badReferenceText },
        { name: "phone_number", good: goodPhone, bad: badPhoneText },
        dateParam("from"),
        dateParam("to")
      ]
    }),
    e("admin", "POST", "/accounts", { body: createBody(w) }),
    e("admin", "GET", "/accounts", { query: [...pageParams(100), enumParam("status", ["active", "suspended"])] }),
    e("admin", "GET", "/accounts/:account_id", { good: account(w.accountIds), bad: badAccount }),
    e("admin", "PATCH", "/accounts/:account_id", { good: account(accounts), bad: badAccount, body: updateBody(w) }),
    e("admin", "POST", "/accounts/:account_id/keys", { good: account(accounts), bad: badAccount }),
    e("admin", "DELETE", "/accounts/:account_id/keys/:key_id", {
      good: fc.constant({ values: { account_id: String(w.rich.id), key_id: String(w.rich.keyId) }, fault: "" }),
      bad: fc.oneof(
        fc.tuple(badAccount, fc.constantFrom(...w.keyIds.get(w.rich.id)!)).map(([a, key]) => ({
          values: { ...a.values, key_id: String(key) },
          fault: a.fault
        })),
        fc.tuple(
          fc.constantFrom(...accounts),
          fc.oneof(badIdText, fc.constantFrom(...[...w.keyIds.values()].flat().map(String)))
        )
          .filter(([a, key]) => key.length > 0 && !existsAmong(new Set(w.keyIds.get(a) ?? []))(key))
          .map(([a, key]) => ({
            values: { account_id: String(a), key_id: segment(key) },
            fault: `no key ${JSON.stringify(clip(key, 60))} on account ${a}`
          }))
      )
    }),
    e("admin", "POST", "/accounts/:account_id/wallet/fund", {
      good: account(accounts),
      bad: badAccount,
      body: fundBody
    }),
    e("admin", "POST", "/accounts/:account_id/wallet/adjust", {
      good: account(accounts),
      bad: badAccount,
      body: adjustBody
    }),
    e("admin", "GET", "/accounts/:account_id/ledger", {
      good: account(accounts),
      bad: badAccount,
      query: [...pageParams(100), enumParam("wallet", WALLETS)]
    }),
    e("admin", "GET", "/audit"),
    e("admin", "POST", "/catalog", { body: catalogBody(w) }),
    e("admin", "GET", "/catalog"),
    e("admin", "GET", "/orders", {
      query: [
        ...pageParams(100),
        enumParam("status", ["pending", "successful", "failed"]),
        {
          name: "account_id",
          good: fc.constantFrom(...w.accountIds).map(String),
          bad: badIntText(1, Number.MAX_SAFE_INTEGER),
          odd: fc.bigInt({ min: 2n ** 31n, max: 2n ** 53n - 1n }).map(String)
        }
      ]
    }),
    e("admin", "GET", "/orders/:order_number", {
      good: oneParam("order_number", fc.constantFrom(...allOrders), "order"),
      bad: oneParam("order_number", badOrderNumber(allOrders), "no order")
    }),
    e("admin", "POST", "/orders/:order_number/resolve", {
      good: oneParam("order_number", fc.constant(w.pendingOrder), "order"),
      bad: oneParam("order_number", badOrderNumber(allOrders), "no order"),
      body: resolveBody
    })
  ]
}

const prefixOf = (api: Api) => api === "public" ? PUBLIC : ADMIN

const fill = (endpoint: Endpoint, params: Params) =>
  prefixOf(endpoint.api) + endpoint.path.replace(/:(\w+)/g, (_, name: string) => params.values[name]!)

/** The methods served at an endpoint's path. */
const allowedAt = (endpoints: ReadonlyArray<Endpoint>, endpoint: Endpoint) =>
  endpoints.filter((other) => other.api === endpoint.api && other.path === endpoint.path).map((other) => other.method)

interface Credentials {
  readonly label: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string>>>
  /** Appended to the query string. */
  readonly query?: string
}

const credentials = (label: string, headers: Credentials["headers"], query?: string): Credentials =>
  query === undefined ? { label, headers } : { label, headers, query }

const validCredentials = (w: World, api: Api) =>
  api === "public"
    ? credentials("a valid key", { "x-api-key": w.rich.key })
    : credentials("the admin token", { authorization: `Bearer ${ADMIN_TOKEN}` })

const latin1 = fc.integer({ min: 0xa1, max: 0xff }).map((c) => String.fromCharCode(c))

const swapCase = (s: string) => [...s].map((c) => c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()).join("")

/** Keys that do not authenticate: missing, malformed, revoked, of a suspended account, mangled. */
const badKeys = (w: World): fc.Arbitrary<Credentials> => {
  const live = new Set([w.rich.key, w.other.key, w.broke.key])
  const key = (label: string) => (k: string) => credentials(`x-api-key ${label}`, { "x-api-key": k })
  return fc.oneof(
    fc.constant(credentials("no x-api-key", {})),
    fc.constantFrom("", "   ", "null", "dbk_", "Bearer").map((k) => key(JSON.stringify(k))(k)),
    fc.string({ minLength: 1, maxLength: 80 }).filter((k) => !live.has(k.trim())).map(key("random")),
    fc.stringMatching(/^dbk_[A-Za-z0-9_-]{40}$/).filter((k) => !live.has(k)).map(key("well formed, unknown")),
    fc.string({ minLength: 1000, maxLength: 10_000 }).map(key("very long")),
    fc.string({ unit: latin1, minLength: 1, maxLength: 60 }).map(key("non-ASCII")),
    fc.constant(credentials("a revoked key", { "x-api-key": w.revokedKey })),
    fc.constant(credentials("the key of a suspended account", { "x-api-key": w.suspendedKey })),
    fc.constant(credentials("the admin token as x-api-key", { "x-api-key": ADMIN_TOKEN })),
    fc.constantFrom(w.rich.key.slice(0, -1), `${w.rich.key}x`, swapCase(w.rich.key), w.rich.key.slice(4))
      .filter((k) => !live.has(k)).map(key("mangled")),
    fc.constant(credentials("x-api-key twice", { "x-api-key": [w.rich.key, w.rich.key] })),
    fc.constant(credentials("the key as a bearer token", { authorization: `Bearer ${w.rich.key}` })),
    fc.constant(credentials("the key in the query string", {}, `api_key=${w.rich.key}`)),
    fc.constant(credentials("the admin token as a bearer token", { authorization: `Bearer ${ADMIN_TOKEN}` }))
  )
}

/** Admin credentials that do not authenticate. */
const badTokens = (w: World): fc.Arbitrary<Credentials> => {
  const auth = (label: string) => (value: string) => credentials(`Authorization ${label}`, { authorization: value })
  return fc.oneof(
    fc.constant(credentials("no Authorization", {})),
    fc.constantFrom("", "Bearer", "Bearer ", "Basic", "Bearer null").map((v) => auth(JSON.stringify(v))(v)),
    fc.string({ minLength: 1, maxLength: 80 }).filter((t) => t.trim() !== ADMIN_TOKEN).map((t) =>
      auth("Bearer <random>")(`Bearer ${t}`)
    ),
    fc.string({ minLength: 1000, maxLength: 10_000 }).map((t) => auth("Bearer <very long>")(`Bearer ${t}`)),
    fc.string({ unit: latin1, minLength: 1, maxLength: 60 }).map((t) => auth("Bearer <non-ASCII>")(`Bearer ${t}`)),
    fc.constantFrom(
      ADMIN_TOKEN.slice(0, -1),
      `${ADMIN_TOKEN}x`,
      swapCase(ADMIN_TOKEN),
      `${ADMIN_TOKEN.slice(0, 10)}X${ADMIN_TOKEN.slice(11)}`
    ).map((t) => auth("Bearer <mangled token>")(`Bearer ${t}`)),
    fc.constantFrom(
      `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString("base64")}`,
      `Token ${ADMIN_TOKEN}`,
      ADMIN_TOKEN,
      `Bearer ${w.rich.key}`
    ).map((v) => auth("with the wrong scheme or secret")(v)),
    fc.constant(credentials("the token as x-api-key", { "x-api-key": ADMIN_TOKEN })),
    fc.constant(credentials("the token in the query string", {}, `token=${ADMIN_TOKEN}`))
  )
}

/** Headers a client may send that change nothing about the answer (406 aside, for an Accept without JSON). */
const noise = fc.record({
  accept: fc.constantFrom<string | undefined>(
    "application/json",
    "application/json",
    undefined,
    "*/*",
    "application/*",
    "application/json; charset=utf-8",
    "text/html",
    "application/xml",
    ""
  ),
  extra: fc.array(
    fc.oneof(
      fc.tuple(fc.constant("x-forwarded-for"), fc.oneof(fc.constantFrom("unknown", ", , ,", "::1", "999.1.1.1"), junk)),
      fc.tuple(fc.constant("x-request-id"), junk),
      fc.tuple(fc.constant("user-agent"), fc.string({ unit: latin1, maxLength: 200 })),
      fc.tuple(
        fc.constant("host"),
        fc.constantFrom("[::1", "evil.example", "localhost:0", "a".repeat(200), "%zz", "é")
      ),
      fc.tuple(fc.constant("cookie"), junk),
      fc.tuple(fc.stringMatching(/^x-fuzz-[a-z0-9-]{1,12}$/), fc.string({ unit: latin1, maxLength: 200 }))
    ),
    { maxLength: 3 }
  )
})

/** Adds noise headers to a probe: they never replace its credentials or body headers. */
const withNoise = (probes: fc.Arbitrary<Probe>) =>
  fc.tuple(probes, noise).map(([p, n]) => {
    const headers: Record<string, string | ReadonlyArray<string>> = {}
    for (const [name, value] of n.extra) {
      // Node refuses control characters in header values.
      if (/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) headers[name] = value
    }
    if (n.accept !== undefined) headers.accept = n.accept
    const acceptsJson = n.accept === undefined || n.accept === "" || /json|\*\/\*|application\/\*/.test(n.accept)
    return probe({
      ...p,
      headers: { ...headers, ...p.headers },
      expect: acceptsJson ? p.expect : [...p.expect, 406]
    })
  })

const JSON_TYPE = { "content-type": "application/json" }

/** A request to an endpoint: its path (with query), credentials and an optional body. */
const request = (
  endpoint: Endpoint,
  fields: {
    readonly fault: string
    readonly method?: Method
    readonly params: Params
    readonly credentials: Credentials
    readonly query?: string
    readonly body?: BrokenBody | undefined
    readonly expect: ReadonlyArray<number>
    readonly allow?: ReadonlyArray<string>
    readonly insufficient?: boolean
  }
): Probe => {
  const query = [fields.query, fields.credentials.query].filter((q) => q !== undefined && q.length > 0).join("&")
  return probe({
    fault: [fields.fault, fields.credentials.label].filter((f) => f.length > 0).join("; "),
    method: fields.method ?? endpoint.method,
    target: `${fill(endpoint, fields.params)}${query.length > 0 ? `?${query}` : ""}`,
    headers: { ...(fields.body === undefined ? {} : JSON_TYPE), ...fields.credentials.headers },
    body: fields.body === undefined ? undefined : Buffer.from(fields.body.text, "utf8"),
    expect: fields.expect,
    allow: fields.allow,
    insufficient: fields.insufficient ?? false
  })
}

// ---------------------------------------------------------------------------------------------
// The families of bad requests
// ---------------------------------------------------------------------------------------------

/** A method the path does not serve: 405 with Allow, whatever the credentials. */
const wrongMethod = (w: World, api: Api) => {
  const endpoints = endpointsOf(w)
  return fc.constantFrom(...endpoints.filter((e) => e.api === api)).chain((endpoint) => {
    const allow = allowedAt(endpoints, endpoint)
    const wrong = METHODS.filter((m) => !allow.includes(m))
    return fc.tuple(
      fc.constantFrom(...wrong),
      endpoint.good,
      fc.oneof(fc.constant(validCredentials(w, api)), api === "public" ? badKeys(w) : badTokens(w)),
      endpoint.body ?? placeBody(w)
    ).map(([method, params, creds, body]) =>
      request(endpoint, {
        fault: `${method} is not served there`,
        method,
        params,
        credentials: creds,
        body: ["POST", "PUT", "PATCH"].includes(method) ? body : undefined,
        expect: [405],
        allow
      })
    )
  })
}

/** Route shapes of both APIs (and the OpenAPI documents), to keep unknown paths unknown. */
const shapesOf = (w: World) => [
  ...endpointsOf(w).map((e) => `${prefixOf(e.api)}${e.path}`.split("/").filter((s) => s.length > 0)),
  ["api", "v1", "openapi.json"],
  ["admin", "v1", "openapi.json"]
]

/** True when some route could serve `path`, however the server normalises it (case, encoding, dots, slashes). */
const mayRoute = (shapes: ReadonlyArray<ReadonlyArray<string>>, path: string) => {
  const parts: Array<string> = []
  for (const raw of path.split("/")) {
    let part = raw
    try {
      part = decodeURIComponent(raw)
    } catch {
      // Left as it is.
    }
    if (part === "" || part === ".") continue
    if (part === "..") parts.pop()
    else parts.push(part.toLowerCase())
  }
  return shapes.some((shape) =>
    shape.length === parts.length && shape.every((s, i) => s.startsWith(":") || s.toLowerCase() === parts[i])
  )
}

const VOCABULARY = [
  "api",
  "v1",
  "v2",
  "admin",
  "balance",
  "networks",
  "bundles",
  "orders",
  "accounts",
  "keys",
  "wallet",
  "fund",
  "adjust",
  "ledger",
  "audit",
  "catalog",
  "resolve",
  "openapi.json",
  "1",
  "ORD-000000000000",
  "..",
  ".",
  "",
  "%2e%2e",
  "%2F",
  "Balance",
  "balance.json",
  "%00",
  "%zz",
  "%E0%A4%A",
  "%"
]

/** A path that no route serves: 404 for any method and credentials. */
const unknownPath = (w: World, api: Api) => {
  const shapes = shapesOf(w)
  const segments = fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...VOCABULARY) },
      { weight: 1, arbitrary: junk.map(segment) }
    ),
    { maxLength: 6 }
  )
  const path = fc.tuple(
    fc.constantFrom(PUBLIC, ADMIN, "", "/api", "/admin", "/api/v2", "/API/V1", "/admin/v2"),
    segments
  )
    .map(([prefix, parts]) => `${prefix}/${parts.join("/")}`)
    .filter((p) => !mayRoute(shapes, p))
  const target = fc.oneof(
    { weight: 6, arbitrary: path },
    // The absolute form, with hosts good and bad.
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom("evil.example", "localhost:1", "[::1", "[", "user:pass@host", "%zz", "[::1]:99999", "-"),
        path
      ).map(([host, p]) => `http://${host}${p}`)
    },
    { weight: 1, arbitrary: fc.constant("*") }
  )
  return fc.tuple(
    target,
    fc.constantFrom<Method>("GET", "POST", "DELETE", "PATCH", "PUT", "OPTIONS"),
    fc.oneof(fc.constant(validCredentials(w, api)), api === "public" ? badKeys(w) : badTokens(w)),
    placeBody(w)
  ).map(([target, method, creds, body]) =>
    probe({
      fault: `no route; ${creds.label}`,
      method,
      target,
      headers: { ...creds.headers, ...(["POST", "PUT", "PATCH"].includes(method) ? JSON_TYPE : {}) },
      body: ["POST", "PUT", "PATCH"].includes(method) ? Buffer.from(body.text) : undefined,
      expect: [404]
    })
  )
}

/** A path parameter that names nothing: 404 (or the body's 422 first, on a payload endpoint). */
const badParams = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api && e.path.includes(":"))).chain((endpoint) =>
    fc.tuple(endpoint.bad, endpoint.body ?? fc.constant(undefined)).map(([params, body]) =>
      request(endpoint, {
        fault: params.fault,
        params,
        credentials: validCredentials(w, api),
        body,
        expect: body === undefined ? [404] : [404, 422]
      })
    )
  )

/** Query parameters out of range, of the wrong type or unknown values: 422. */
const badQueries = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api && e.query !== undefined)).chain((endpoint) => {
    const params = endpoint.query!
    return fc.tuple(
      endpoint.good,
      fc.uniqueArray(fc.constantFrom(...params), { minLength: 1, maxLength: params.length, selector: (q) => q.name }),
      fc.tuple(...params.map((q) => fc.option(q.good))),
      fc.tuple(...params.map((q) => q.odd === undefined ? q.bad : fc.oneof(q.bad, q.odd))),
      fc.tuple(...params.map(() => fc.boolean())),
      fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,10}$/), junk), { maxLength: 2 })
    ).map(([pathParams, broken, goods, bads, twice, unknown]) => {
      const pairs: Array<readonly [string, string]> = []
      const faults: Array<string> = []
      let strict = false
      params.forEach((q, i) => {
        if (broken.includes(q)) {
          const value = bads[i]!
          pairs.push([q.name, value])
          if (twice[i]) pairs.push([q.name, value])
          faults.push(`${q.name}=${JSON.stringify(clip(value, 40))}${twice[i] ? " twice" : ""}`)
          const n = Number(value)
          if (!(q.odd !== undefined && Number.isInteger(n) && n > 0)) strict = true
        } else if (goods[i] !== null) {
          pairs.push([q.name, goods[i]!])
        }
      })
      for (const [name, value] of unknown) {
        if (!params.some((q) => q.name === name)) pairs.push([`x_${name}`, value])
      }
      return request(endpoint, {
        fault: faults.join(", "),
        params: pathParams,
        credentials: validCredentials(w, api),
        query: pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&"),
        // A well-formed unknown account alone may be an empty list.
        expect: strict ? [422] : [200, 422]
      })
    })
  })

/** Bodies that are well-formed JSON but do not decode: 422. */
const badBodies = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api && e.body !== undefined)).chain((endpoint) =>
    fc.tuple(
      endpoint.good,
      fc.oneof(
        { weight: 15, arbitrary: endpoint.body! },
        { weight: 1, arbitrary: fc.constant<BrokenBody>({ fault: "an empty body", text: "" }) }
      )
    ).map(([params, body]) =>
      request(endpoint, {
        fault: body.fault,
        params,
        credentials: validCredentials(w, api),
        body,
        // An empty body is either malformed JSON or not an object.
        expect: body.text === "" ? [400, 422] : [422]
      })
    )
  )

/** Requests that decode but that the state refuses: no such bundle, account, key or order; no money; settled. */
const refusedByState = (w: World, api: Api): fc.Arbitrary<Probe> => {
  const endpoints = endpointsOf(w)
  const at = (method: Method, path: string) =>
    endpoints.find((e) => e.api === api && e.method === method && e.path === path)!
  const values = (values: Record<string, string | number>) => ({
    values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, segment(String(v))])),
    fault: ""
  })
  const json = (fault: string, value: unknown): BrokenBody => ({ fault, text: JSON.stringify(value) })
  const unknownAccount = fc.oneof(
    fc.integer({ min: Math.max(...w.accountIds) + 1, max: 2_147_483_647 }),
    // Past the database's 32-bit ids.
    fc.constantFrom(2_147_483_648, 4_294_967_296, 99_999_999_999, Number.MAX_SAFE_INTEGER)
  )
  const unknownOrder = fc.stringMatching(/^ORD-[0-9A-Z]{12}$/).filter((n) =>
    ![...w.richOrders, ...w.otherOrders].some((o) => o.orderNumber === n)
  )
  const admin = validCredentials(w, "admin")
  if (api === "public") {
    const place = at("POST", "/orders")
    const key = (account: Account) => credentials("", { "x-api-key": account.key })
    return fc.oneof(
      fc.tuple(fc.constantFrom(...w.unbuyable), goodPhone).map(([bundle, phone]) =>
        request(place, {
          fault: `bundle ${bundle} cannot be bought`,
          params: values({}),
          credentials: key(w.rich),
          body: json("", { bundle_id: bundle, phone_number: phone }),
          expect: [400]
        })
      ),
      fc.tuple(fc.integer({ min: w.maxBundleId + 1, max: 2_147_483_647 }), goodPhone).map(([bundle, phone]) =>
        request(place, {
          fault: `no bundle ${bundle}`,
          params: values({}),
          credentials: key(w.rich),
          body: json("", { bundle_id: bundle, phone_number: phone }),
          expect: [422]
        })
      ),
      fc.tuple(fc.constantFrom(...w.buyable), goodPhone, fc.option(goodReference)).map(([bundle, phone, reference]) =>
        request(place, {
          fault: "an empty wallet",
          params: values({}),
          credentials: key(w.broke),
          body: json("", { bundle_id: bundle, phone_number: phone, ...(reference === null ? {} : { reference }) }),
          expect: [400],
          insufficient: true
        })
      ),
      fc.tuple(fc.constantFrom(...w.richOrders), fc.constantFrom(...w.buyable), goodPhone, fc.boolean())
        .filter(([o, bundle, phone, sameBundle]) =>
          // Both forms of one number are the same phone.
          sameBundle ? Phone.nationalDigits(o.phone) !== Phone.nationalDigits(phone) : o.bundleId !== bundle
        )
        .map(([o, bundle, phone, sameBundle]) =>
          request(place, {
            fault: `reference ${o.reference} reused with another ${sameBundle ? "phone number" : "bundle"}`,
            params: values({}),
            credentials: key(w.rich),
            body: json("", {
              bundle_id: sameBundle ? o.bundleId : bundle,
              phone_number: sameBundle ? phone : o.phone,
              reference: o.reference
            }),
            expect: [422]
          })
        )
    )
  }
  const overdraw = fc.tuple(
    fc.constantFrom(w.rich, w.other, w.broke),
    fc.constantFrom(...WALLETS),
    fc.bigInt({ min: 1n, max: 100_000n })
  ).map(([account, wallet, over]) => {
    const amount = -(w.balances.get(`${account.id}:${wallet}`)! + over)
    return request(at("POST", "/accounts/:account_id/wallet/adjust"), {
      fault: `an adjustment below 0 of the ${wallet} wallet`,
      params: values({ account_id: account.id }),
      credentials: admin,
      body: json("", { amount: Number(Money.formatCedis(amount)), wallet, note: "fuzz: more than there is" }),
      expect: [400],
      insufficient: true
    })
  })
  return fc.oneof(
    overdraw,
    fc.tuple(fc.constantFrom(...w.settledOrders), fc.constantFrom("successful", "failed")).map(([order, status]) =>
      request(at("POST", "/orders/:order_number/resolve"), {
        fault: "the order is already settled",
        params: values({ order_number: order }),
        credentials: admin,
        body: json("", { status }),
        expect: [409]
      })
    ),
    fc.tuple(unknownOrder, fc.constantFrom("successful", "failed")).map(([order, status]) =>
      request(at("POST", "/orders/:order_number/resolve"), {
        fault: "no such order",
        params: values({ order_number: order }),
        credentials: admin,
        body: json("", { status }),
        expect: [404]
      })
    ),
    fc.tuple(
      unknownAccount,
      // Any text: the contract refuses control characters (NUL included) with a 422 before the
      // account is looked up; other text, lone surrogates included, reaches the lookup: 404.
      fc.oneof(
        fc.string({ unit: "binary", minLength: 1, maxLength: 100 }),
        fc.constantFrom("\u0000", "fuzz\u0000note", "\uD800", "\r\n", "\u202E")
      ),
      fc.constantFrom<readonly [Method, string, ((text: string) => [unknown, number]) | undefined]>(
        ["POST", "/accounts/:account_id/wallet/fund", (text) => [{ amount: 10, wallet: "main", note: text }, 0]],
        ["POST", "/accounts/:account_id/wallet/adjust", (text) => [{ amount: 10, note: text }, 1]],
        ["PATCH", "/accounts/:account_id", (text) => [{ name: text.slice(0, 100) }, 1]],
        ["POST", "/accounts/:account_id/keys", undefined],
        ["GET", "/accounts/:account_id", undefined],
        ["GET", "/accounts/:account_id/ledger", undefined]
      )
    ).map(([account, text, [method, path, body]]) => {
      const [payload, minLength] = body === undefined ? [undefined, 0] : body(text)
      const field = payload === undefined ?
        "" :
        Object.values(payload as Record<string, unknown>).find((v) => typeof v === "string" && v !== "main") as string
      const acceptedText = field.length >= minLength && !/[\u0000-\u001F\u007F]/.test(field)
      return request(at(method, path), {
        fault: `no account ${account}`,
        params: values({ account_id: account }),
        credentials: admin,
        body: payload === undefined ? undefined : json("", payload),
        // A path parameter that does not decode (an id past the database's range) is a 404 before the body is read.
        expect: payload === undefined || acceptedText || !inIdRange(account) ? [404] : [422]
      })
    }),
    fc.constantFrom(...[...w.keyIds].flatMap(([owner, keys]) => keys.map((key) => [owner, key] as const)))
      .chain(([owner, key]) =>
        fc.constantFrom(...w.accountIds.filter((a) => a !== owner)).map((account) =>
          request(at("DELETE", "/accounts/:account_id/keys/:key_id"), {
            fault: `key ${key} belongs to account ${owner}, not ${account}`,
            params: values({ account_id: account, key_id: key }),
            credentials: admin,
            expect: [404]
          })
        )
      ),
    fc.tuple(unknownAccount, fc.option(fc.constantFrom("pending", "successful", "failed"))).map(([account, status]) =>
      request(at("GET", "/orders"), {
        fault: `orders of account ${account}, which does not exist`,
        params: values({}),
        credentials: admin,
        query: `account_id=${account}${status === null ? "" : `&status=${status}`}`,
        // An empty list, or a 422 for an id no account can have.
        expect: [200, 422]
      })
    ),
    fc.stringMatching(/^zz[a-z0-9]{1,20}$/).map((group) =>
      request(at("POST", "/accounts"), {
        fault: `no price group ${group}`,
        params: values({}),
        credentials: admin,
        body: json("", { name: "Fuzz", price_group: group }),
        expect: [422]
      })
    )
  )
}

/** Good requests but for their credentials: 401. */
const badCredentials = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api)).chain((endpoint) =>
    fc.tuple(
      endpoint.good,
      api === "public" ? badKeys(w) : badTokens(w),
      endpoint.body ?? fc.constant(undefined)
    ).map(([params, creds, body]) => request(endpoint, { fault: "", params, credentials: creds, body, expect: [401] }))
  )

/** Bodies the gateway refuses before anything else: wrong content type, malformed, too deep, too large. */
const badFraming = (w: World) => {
  const endpoints = endpointsOf(w).filter((e) => e.body !== undefined)
  return fc.constantFrom(...endpoints).chain((endpoint) => {
    const limit = endpoint.api === "public" ? 64 * 1024 : 1024 * 1024
    const creds = fc.oneof(
      fc.constant(validCredentials(w, endpoint.api)),
      endpoint.api === "public" ? badKeys(w) : badTokens(w)
    )
    const base = endpoint.body!
    const contentType = fc.tuple(
      base,
      fc.constantFrom<string | null>(
        null,
        "text/plain",
        "TEXT/PLAIN",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "text/json",
        "application/jsonp",
        "application/json-patch+json",
        "application/vnd.api+json",
        "json",
        "application",
        "*/*",
        "application/ json"
      )
    ).map(([body, type]) => ({
      fault: `Content-Type ${type ?? "missing"}`,
      body: Buffer.from(body.text),
      type,
      chunked: false,
      expect: [400]
    }))
    const malformed = fc.tuple(
      base,
      fc.oneof(
        fc.nat().map((n) => (t: string) => t.slice(0, n % Math.max(1, t.length - 1))),
        fc.constantFrom(
          (t: string) => `${t}}`,
          (t: string) => `${t},`,
          (t: string) => t.replace(/"/g, "'"),
          (t: string) => `\uFEFF${t}`,
          (t: string) => `${t} // comment`,
          (t: string) => t.replace(/^\{"/, "{"),
          (t: string) => `${t.slice(0, -1)},}`,
          () => "NaN",
          () => "{\"bundle_id\": NaN}",
          () => "{\"amount\": Infinity}",
          () => "undefined",
          () => "\"unterminated",
          () => "{\"a\":1}{\"b\":2}"
        )
      )
    ).map(([body, corrupt]) => corrupt(body.text)).filter((text) => {
      // An empty body is no body (a 422 for a missing object), tried with the bad bodies.
      if (text.trim().length === 0) return false
      try {
        JSON.parse(Buffer.from(text, "utf8").toString("utf8"))
        return false
      } catch {
        return true
      }
    }).map((text) => ({
      fault: "malformed JSON",
      body: Buffer.from(text),
      type: "application/json" as string | null,
      chunked: false,
      expect: [400]
    }))
    const invalidUtf8 = base.map((body) => ({
      fault: "bytes that are not UTF-8 outside strings",
      body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(body.text)]),
      type: "application/json" as string | null,
      chunked: false,
      expect: [400]
    }))
    const deep = fc.tuple(
      fc.oneof(fc.integer({ min: 33, max: 64 }), fc.integer({ min: 1000, max: Math.floor(limit / 6) - 10 })),
      fc.constantFrom("array", "object"),
      fc.boolean()
    ).map(([depth, kind, inField]) => {
      const open = kind === "array" ? "[" : "{\"a\":"
      const close = kind === "array" ? "]" : "}"
      const value = `${open.repeat(depth - (inField ? 1 : 0))}1${close.repeat(depth - (inField ? 1 : 0))}`
      return {
        fault: `JSON nested ${depth} deep`,
        body: Buffer.from(inField ? `{"bundle_id":${value}}` : value),
        type: "application/json" as string | null,
        chunked: false,
        expect: [400]
      }
    })
    const oversized = fc.tuple(base, fc.integer({ min: 1, max: limit / 4 }), fc.boolean()).map((
      [body, over, chunked]
    ) => ({
      fault: `a body ${over} bytes over ${limit / 1024} KiB`,
      body: Buffer.from(body.text.replace(/\}$|$/, `${" ".repeat(Math.max(0, limit + over - body.text.length))}$&`)),
      type: "application/json" as string | null,
      chunked,
      expect: [413]
    }))
    return fc.tuple(
      endpoint.good,
      creds,
      fc.oneof(contentType, malformed, invalidUtf8, deep, oversized)
    ).map(([params, creds, framing]) => {
      const p = request(endpoint, { fault: framing.fault, params, credentials: creds, expect: framing.expect })
      return probe({
        ...p,
        headers: { ...(framing.type === null ? {} : { "content-type": framing.type }), ...p.headers },
        body: framing.body,
        chunked: framing.chunked
      })
    })
  })
}

const publicWithKey = (w: World) =>
  fc.oneof(
    wrongMethod(w, "public"),
    unknownPath(w, "public"),
    badParams(w, "public"),
    badQueries(w, "public"),
    { weight: 2, arbitrary: badBodies(w, "public") },
    refusedByState(w, "public")
  )

const adminWithToken = (w: World) =>
  fc.oneof(
    wrongMethod(w, "admin"),
    unknownPath(w, "admin"),
    { weight: 2, arbitrary: badParams(w, "admin") },
    badQueries(w, "admin"),
    { weight: 3, arbitrary: badBodies(w, "admin") },
    { weight: 2, arbitrary: refusedByState(w, "admin") }
  )

const everything = (w: World) =>
  fc.oneof(
    publicWithKey(w),
    badCredentials(w, "public"),
    adminWithToken(w),
    badCredentials(w, "admin"),
    badFraming(w)
  )

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

const UNLIMITED = {
  BUNDLES_RATE_LIMITS: "all=1000000,orders=1000000,balance=1000000",
  BUNDLES_AUTH_FAILURE_LIMIT: "1000000"
}

const TIMEOUT = 180_000

for (const target of targets) {
  describe(`fuzzing on ${target.name}`, () => {
    layer(fuzzLayer(target, UNLIMITED), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect(
        "public API with a valid key: wrong methods, unknown paths, bad parameters, queries and bodies, refused orders",
        () => fuzz((w) => withNoise(publicWithKey(w)), 250),
        TIMEOUT
      )

      it.effect(
        "public API with a missing, malformed, revoked or suspended key: 401",
        () => fuzz((w) => withNoise(badCredentials(w, "public")), 120),
        TIMEOUT
      )

      it.effect(
        "admin API with the token: wrong methods, unknown paths, bad parameters, queries and bodies, refused changes",
        () => fuzz((w) => withNoise(adminWithToken(w)), 300),
        TIMEOUT
      )

      it.effect(
        "admin API with a missing or wrong token: 401",
        () => fuzz((w) => withNoise(badCredentials(w, "admin")), 120),
        TIMEOUT
      )

      it.effect(
        "every payload endpoint: wrong content types, malformed, too deep and oversized bodies",
        () => fuzz((w) => withNoise(badFraming(w)), 150),
        TIMEOUT
      )

      it.effect("after all of it, the admin API shows the same balances, audit, ledger, orders, keys and catalogue", () =>
        Effect.gen(function*() {
          const w = yield* Fixture
          const view = yield* adminView
          assert.isTrue(view.audit.ok, JSON.stringify(view.audit))
          assert.deepStrictEqual(view, w.view)
          assert.deepStrictEqual(yield* fingerprint(w.sql), w.baseline)
        }))
    })
  })

  describe(`fuzzing at the default rate limits on ${target.name}`, () => {
    layer(fuzzLayer(target, {}), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect(
        "every kind of bad request, with 429 a valid answer once a limit is reached",
        () => fuzz((w) => withNoise(everything(w)), 200, { allow429: true }),
        TIMEOUT
      )
    })
  })
}
