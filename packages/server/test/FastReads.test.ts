/**
 * The road's shortcuts: the catalogue's reads answered from the cache, and the requests
 * admitted from memory (an order, the balance, one order: the key cached, the counts in this
 * process), against the same requests admitted by a lookup and answered by the handler (the
 * first of a new key): the same answer, header for header and byte for byte, errors
 * included; the same counting of rate limits, the same view of revoked keys, suspended
 * accounts, price groups and catalogue changes; the same log lines and metrics; and every
 * request the cache cannot answer left to the handler, with its usual answer. A spy on the
 * admission (`Admission.Shortcuts`) tells which requests took which way ("early" below).
 */
import { EndpointPolicy } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, beforeAll, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as Admission from "../src/Admission.js"
import * as Http from "../src/Http.js"
import * as Logging from "../src/Logging.js"
import { parseExposition, sample } from "./Exposition.js"
import {
  ADMIN_TOKEN,
  adminClient,
  newAccount,
  raw,
  type RawOptions,
  type RawResponse,
  seedCatalog,
  testConfig
} from "./Harness.js"

/** The ids of the requests admitted from memory alone, and of those also answered from the catalogue's cache. */
const shortcuts = { memory: new Set<string>(), cache: new Set<string>() }
/** Which of the two ways the current group of tests looks for. */
let way: "memory" | "cache" = "cache"
/** The request log's lines, as the server writes them. */
const lines: Array<string> = []

const spied = Layer.succeed(Admission.Shortcuts, (info, taken) => {
  shortcuts[taken].add(info.id)
})

/** The server on a free port, its shortcuts seen by the spy, its request lines kept in `lines`. */
const server = (target: (typeof targets)[number], extra: Record<string, string> = {}) =>
  Http.serve.pipe(
    Layer.provide(spied),
    Layer.provideMerge(Http.AppLive),
    Layer.provideMerge(target.layer),
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(Layer.locallyScoped(Logging.requestLines, (line) => lines.push(line))),
    Layer.provide(testConfig(extra)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** A request to the public API with `key`. */
const api = (path: string, key: string | undefined, options: Omit<RawOptions, "key"> & { method?: string } = {}) =>
  raw((options.method ?? "GET") as Method, `/api/v1${path}`, { ...options, key })

const idOf = (res: RawResponse) => res.headers["x-request-id"]!
const wasEarly = (res: RawResponse) => shortcuts[way].has(idOf(res))

/** Headers that differ from one request to the next whichever way it is answered. */
const PER_REQUEST = new Set(["x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "date"])

/** The bodies are the same bytes. */
const sameText = (routed: RawResponse, answered: RawResponse) => assert.strictEqual(answered.text, routed.text)

/** The bodies are the same error but for the request id each names (its own `X-Request-Id`). */
const sameError = (routed: RawResponse, answered: RawResponse) => {
  assert.strictEqual(routed.json.request_id, idOf(routed))
  assert.strictEqual(answered.json.request_id, idOf(answered))
  assert.strictEqual(answered.text.replace(idOf(answered), ""), routed.text.replace(idOf(routed), ""))
}

/** The router's answer and the early one are the same: status, every header (per-request ones present on both), body. */
const assertSameAnswer = (
  routed: RawResponse,
  answered: RawResponse,
  sameBody = sameText,
  varying: ReadonlySet<string> = PER_REQUEST
) => {
  assert.isFalse(wasEarly(routed), "the first answer should be the router's")
  assert.isTrue(wasEarly(answered), "the second answer should be early")
  assert.strictEqual(answered.status, routed.status)
  const names = (res: RawResponse) => Object.keys(res.headers).sort()
  assert.deepStrictEqual(names(answered), names(routed))
  for (const name of names(routed)) {
    if (!varying.has(name)) assert.strictEqual(answered.headers[name], routed.headers[name], name)
  }
  sameBody(routed, answered)
  assert.strictEqual(
    Number(answered.headers["x-ratelimit-remaining"]),
    Number(routed.headers["x-ratelimit-remaining"]) - 1
  )
}

const scrape = Effect.map(raw("GET", "/metrics", { bearer: ADMIN_TOKEN }), (res) => parseExposition(res.text))

/** The ids of the active networks of the demo catalogue (imported once per server). */
const networkIds = Effect.gen(function*() {
  yield* seedCatalog
  const { networks } = yield* (yield* adminClient).catalogAdmin.networks()
  return networks.filter((network) => network.active).map((network) => network.id)
})

for (const target of targets) {
  describe(`early reads on ${target.name}`, () => {
    beforeAll(() => {
      way = "cache"
    })
    layer(server(target), { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("GET /networks and GET /networks/{id}/bundles answered early are the router's answers", () =>
        Effect.gen(function*() {
          const [network] = yield* networkIds
          for (const path of ["/networks", `/networks/${network}/bundles`]) {
            // A new key is not cached: the router answers its first request, and caches it.
            const { key } = yield* newAccount(0n)
            const routed = yield* api(path, key)
            assert.strictEqual(routed.status, 200, routed.text)
            assertSameAnswer(routed, yield* api(path, key))
          }
          // An account with a price group sees its own prices either way.
          const agent = yield* newAccount(0n, { priceGroup: "agent" })
          const path = `/networks/${network}/bundles`
          const routed = yield* api(path, agent.key)
          const answered = yield* api(path, agent.key)
          assertSameAnswer(routed, answered)
          const { key } = yield* newAccount(0n)
          yield* api(path, key)
          const base = yield* api(path, key)
          assert.isTrue(wasEarly(base))
          assert.notStrictEqual(base.text, answered.text, "agent prices differ from the base prices")
        }))

      it.effect("rate limits count each request once: N requests consume N, the 429 is the router's", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const account = yield* newAccount(0n)
          const admin = yield* adminClient
          yield* admin.accounts.update({ path: { account_id: account.id }, payload: { limits: { all: 5 } } })
          const before = yield* scrape
          const answers = []
          for (let i = 0; i < 7; i++) answers.push(yield* api("/networks", account.key))
          assert.deepStrictEqual(answers.map((res) => res.status), [200, 200, 200, 200, 200, 429, 429])
          assert.deepStrictEqual(answers.map((res) => res.headers["x-ratelimit-remaining"]), [
            "4",
            "3",
            "2",
            "1",
            "0",
            "0",
            "0"
          ])
          assert.deepStrictEqual(answers.map(wasEarly), [false, true, true, true, true, false, false])
          for (const refused of answers.slice(5)) {
            assert.strictEqual(refused.json.code, "rate_limited", refused.text)
            assert.strictEqual(refused.json.request_id, idOf(refused))
            assert.match(
              refused.json.message,
              /^Rate limit exceeded \(5 per minute for all requests\); retry in \d+ s$/
            )
            assert.strictEqual(refused.headers["retry-after"], String(refused.json.retry_after))
            assert.strictEqual(refused.headers["x-ratelimit-limit"], "5")
          }
          const after = yield* scrape
          assert.strictEqual(
            sample(after, "bundles_rate_limited_total", { scope: "all" }) -
              sample(before, "bundles_rate_limited_total", { scope: "all" }),
            2
          )
        }))

      it.effect("a revoked key, a suspended account and a new price group are seen at once, as by the router", () =>
        Effect.gen(function*() {
          const [network] = yield* networkIds
          const admin = yield* adminClient
          const revoked = yield* newAccount(0n)
          yield* api("/networks", revoked.key)
          assert.isTrue(wasEarly(yield* api("/networks", revoked.key)))
          yield* admin.apiKeys.revoke({ path: { account_id: revoked.id, key_id: revoked.keyId } })
          const refused = yield* api("/networks", revoked.key)
          assert.strictEqual(refused.status, 401, refused.text)
          assert.isFalse(wasEarly(refused))

          const suspended = yield* newAccount(0n)
          yield* api("/networks", suspended.key)
          assert.isTrue(wasEarly(yield* api("/networks", suspended.key)))
          yield* admin.accounts.update({ path: { account_id: suspended.id }, payload: { status: "suspended" } })
          const off = yield* api("/networks", suspended.key)
          assert.strictEqual(off.status, 401, off.text)
          assert.isFalse(wasEarly(off))
          yield* admin.accounts.update({ path: { account_id: suspended.id }, payload: { status: "active" } })
          assert.strictEqual((yield* api("/networks", suspended.key)).status, 200)

          const moved = yield* newAccount(0n)
          const path = `/networks/${network}/bundles`
          yield* api(path, moved.key)
          const base = yield* api(path, moved.key)
          assert.isTrue(wasEarly(base))
          yield* admin.accounts.update({ path: { account_id: moved.id }, payload: { price_group: "agent" as any } })
          const agent = yield* newAccount(0n, { priceGroup: "agent" })
          yield* api(path, agent.key)
          const expected = yield* api(path, agent.key)
          const routed = yield* api(path, moved.key)
          assert.isFalse(wasEarly(routed))
          assert.strictEqual(routed.text, expected.text)
          const answered = yield* api(path, moved.key)
          assert.isTrue(wasEarly(answered))
          assert.strictEqual(answered.text, expected.text)
          assert.notStrictEqual(answered.text, base.text)
        }))

      it.effect("a catalogue change through the admin API shows in the next read, early or not", () =>
        Effect.gen(function*() {
          const [network] = yield* networkIds
          const { key } = yield* newAccount(0n)
          const path = `/networks/${network}/bundles`
          yield* api(path, key)
          const before = yield* api(path, key)
          assert.isTrue(wasEarly(before))
          const bundle = before.json.bundles[0]
          const change = (price: number) =>
            raw("PATCH", `/admin/v1/bundles/${bundle.id}`, { bearer: ADMIN_TOKEN, body: { price } })
          const changed = yield* change(bundle.price + 1)
          assert.strictEqual(changed.status, 200, changed.text)
          const routed = yield* api(path, key)
          assert.isFalse(wasEarly(routed), "the change forgot the cached listing")
          assert.strictEqual(routed.json.bundles[0].price, bundle.price + 1)
          const answered = yield* api(path, key)
          assert.isTrue(wasEarly(answered))
          assert.strictEqual(answered.text, routed.text)
          assert.strictEqual((yield* change(bundle.price)).status, 200)
          assert.strictEqual((yield* api(path, key)).json.bundles[0].price, bundle.price)
        }))

      it.effect("early answers have their request log line and their route's metrics", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const account = yield* newAccount(0n)
          const labels = { method: "GET", route: "/api/v1/networks", status: "200" }
          const before = sample(yield* scrape, "bundles_http_request_duration_seconds_count", labels)
          const answers = []
          for (let i = 0; i < 3; i++) answers.push(yield* api("/networks", account.key))
          const after = sample(yield* scrape, "bundles_http_request_duration_seconds_count", labels)
          assert.strictEqual(after - before, 3)
          const answered = answers[2]!
          assert.isTrue(wasEarly(answered))
          const line = lines.map((text) => JSON.parse(text)).find((entry) =>
            entry.annotations.request_id === idOf(answered)
          )
          assert.isDefined(line, "no log line for the early answer")
          assert.strictEqual(line.message, "request")
          assert.strictEqual(line.logLevel, "INFO")
          const { duration_ms, ...annotations } = line.annotations
          assert.isNumber(duration_ms)
          assert.deepStrictEqual(annotations, {
            request_id: idOf(answered),
            method: "GET",
            path: "/api/v1/networks",
            status: 200,
            account_id: account.id
          })
        }))

      it.effect("requests not answerable from the cache go to the handler, with their usual answers", () =>
        Effect.gen(function*() {
          const [network] = yield* networkIds
          const { key } = yield* newAccount(0n)
          // The key and the reads are cached: what follows goes on for its own shape.
          yield* api("/networks", key)
          yield* api(`/networks/${network}/bundles`, key)
          assert.isTrue(wasEarly(yield* api("/networks", key)))
          assert.isTrue(wasEarly(yield* api(`/networks/${network}/bundles`, key)))
          const cases: Array<[string, string, Omit<RawOptions, "key"> & { method?: string }, number]> = [
            ["HEAD", "/networks", { method: "HEAD" }, 405],
            ["POST", "/networks", { method: "POST", body: {} }, 405],
            ["a query string", "/networks?page=1", {}, 200],
            ["a body", "/networks", { body: "{}" }, 200],
            ["a doubled slash", "//networks", {}, 404],
            ["capitals", "/NETWORKS", {}, 404],
            ["a trailing slash", "/networks/", {}, 404],
            ["an escaped letter", "/%6Eetworks", {}, 404],
            ["no such network", "/networks/999999/bundles", {}, 404],
            ["a network id that is no number", "/networks/abc/bundles", {}, 404]
          ]
          for (const [name, path, options, status] of cases) {
            const res = yield* api(path, key, options)
            assert.strictEqual(res.status, status, `${name}: ${res.text}`)
            assert.isFalse(wasEarly(res), name)
            if (status === 200) assert.strictEqual(res.headers["x-ratelimit-limit"], "60", name)
          }
          // A path parameter is decoded as the handler has it: an escaped id is the same read, from the cache.
          const escaped = yield* api(
            `/networks/%3${String(network).slice(0, 1)}${String(network).slice(1)}/bundles`,
            key
          )
          assert.strictEqual(escaped.status, 200, escaped.text)
          assert.isTrue(wasEarly(escaped), "an escaped network id")
          assert.strictEqual(escaped.text, (yield* api(`/networks/${network}/bundles`, key)).text)
          const credentials: Array<[string, string | undefined, Record<string, string>]> = [
            ["no key", undefined, {}],
            ["an empty key", "", {}],
            ["an unknown key", "bk_live_0123456789abcdef0123456789abcdef", {}],
            ["a malformed key", "not a key", {}],
            ["the admin token", undefined, { authorization: `Bearer ${ADMIN_TOKEN}` }]
          ]
          for (const [name, given, headers] of credentials) {
            const res = yield* api("/networks", given, { headers })
            assert.strictEqual(res.status, 401, `${name}: ${res.text}`)
            assert.isFalse(wasEarly(res), name)
          }
        }))
    })
  })

  describe(`early orders, balances and order reads on ${target.name}`, () => {
    beforeAll(() => {
      way = "memory"
    })
    layer(server(target), { timeout: 60_000, excludeTestServices: true })((it) => {
      /** An active and an inactive bundle of the demo catalogue, read with a key of their own. */
      const bundles = Effect.gen(function*() {
        const [network] = yield* networkIds
        const { key } = yield* newAccount(0n)
        const listed = (yield* api(`/networks/${network}/bundles`, key)).json.bundles as Array<
          { id: number; is_active: boolean }
        >
        return { active: listed.find((b) => b.is_active)!.id, inactive: listed.find((b) => !b.is_active)?.id }
      })
      const order = (key: string, body: unknown, options: Omit<RawOptions, "key" | "body"> = {}) =>
        api("/orders", key, { ...options, method: "POST", body })

      it.effect("POST /orders, GET /balance and GET /orders/{order_number} answered early are the router's answers", () =>
        Effect.gen(function*() {
          const { active } = yield* bundles
          const account = yield* newAccount(100_000n)
          // A new key is not cached: the router places the first order; the second is placed early.
          const routed = yield* order(account.key, { bundle_id: active, phone_number: "0241110001" })
          assert.strictEqual(routed.status, 200, routed.text)
          const answered = yield* order(account.key, { bundle_id: active, phone_number: "0241110002" })
          // Two orders: the same answer but for what is the order's own (and so the body's length).
          assertSameAnswer(routed, answered, (first, second) => {
            const own = ({ json }: RawResponse) => ({
              ...json,
              order: { ...json.order, order_number: "", phone_number: "", created_at: "" },
              wallet_balance: 0
            })
            assert.deepStrictEqual(own(second), own(first))
            assert.deepStrictEqual(Object.keys(second.json.order), Object.keys(first.json.order))
            assert.strictEqual(second.json.wallet_balance, first.json.wallet_balance - first.json.order.amount_paid)
          }, new Set([...PER_REQUEST, "content-length"]))
          const balance = yield* api("/balance", account.key)
          assert.isTrue(wasEarly(balance))
          assert.strictEqual(balance.json.balance.main, answered.json.wallet_balance)
          const read = yield* api(`/orders/${answered.json.order.order_number}`, account.key)
          assert.isTrue(wasEarly(read))
          assert.strictEqual(read.json.order.order_number, answered.json.order.order_number)
          // The same reads through the router, for a key seen for the first time.
          const other = yield* newAccount(100_000n)
          const first = yield* api("/balance", other.key)
          assertSameAnswer(first, yield* api("/balance", other.key))
          const placed = yield* order(other.key, { bundle_id: active, phone_number: "0241110003" })
          const path = `/orders/${placed.json.order.order_number}`
          const third = yield* newAccount(0n)
          // Another account's order is not found, early as by the router.
          assertSameAnswer(yield* api(path, third.key), yield* api(path, third.key), sameError)
          const line = lines.map((text) => JSON.parse(text)).find((entry) =>
            entry.annotations.request_id === idOf(answered)
          )
          assert.deepInclude(line.annotations, {
            method: "POST",
            path: "/api/v1/orders",
            status: 200,
            account_id: account.id
          })
        }))

      it.effect("the failures of an order answered early are the router's, and change nothing", () =>
        Effect.gen(function*() {
          const { active, inactive } = yield* bundles
          const cases: Array<[string, number, (key: string) => Effect.Effect<RawResponse, unknown, any>]> = [
            ["an invalid body", 422, (key) => order(key, { bundle_id: "x", phone_number: "123", extra: 1 })],
            ["malformed JSON", 400, (key) => order(key, "{\"bundle_id\": 1,")],
            ["a duplicate field", 422, (key) => order(key, `{"bundle_id":${active},"bundle_id":${active}}`)],
            ["a short wallet", 400, (key) => order(key, { bundle_id: active, phone_number: "0241110004" })],
            ["an unknown bundle", 422, (key) => order(key, { bundle_id: 999999, phone_number: "0241110005" })],
            ["an unknown order", 404, (key) => api("/orders/ORD-000000000000", key)],
            ...(inactive === undefined ? [] : [[
              "an inactive bundle",
              400,
              (key: string) => order(key, { bundle_id: inactive, phone_number: "0241110006" })
            ] as [string, number, (key: string) => Effect.Effect<RawResponse, unknown, any>]])
          ]
          for (const [name, status, send] of cases) {
            const account = yield* newAccount(100n)
            const routed = yield* send(account.key)
            assert.strictEqual(routed.status, status, `${name}: ${routed.text}`)
            assertSameAnswer(routed, yield* send(account.key), sameError)
            assert.strictEqual((yield* api("/balance", account.key)).json.balance.main, 1, name)
          }
        }))

      it.effect("a replay answered early is the router's, header included, and a reused reference its 422", () =>
        Effect.gen(function*() {
          const { active } = yield* bundles
          const account = yield* newAccount(100_000n)
          const body = { bundle_id: active, phone_number: "0241110007", reference: "early-replay" }
          const placed = yield* order(account.key, body)
          assert.isFalse(wasEarly(placed))
          const replayed = yield* order(account.key, body)
          assert.isTrue(wasEarly(replayed))
          assert.strictEqual(replayed.status, 200, replayed.text)
          assert.strictEqual(replayed.headers["idempotent-replayed"], "true")
          assert.strictEqual(replayed.json.order.order_number, placed.json.order.order_number)
          assert.strictEqual(replayed.json.message, "Order already placed with this reference")
          const conflict = yield* order(account.key, { ...body, phone_number: "0241110008" })
          assert.isTrue(wasEarly(conflict))
          assert.strictEqual(conflict.status, 422, conflict.text)
          const { json } = yield* api("/balance", account.key)
          assert.strictEqual(json.balance.main, 1000 - placed.json.order.amount_paid)
        }))

      it.effect("orders count toward the limits once: the 429 is the router's", () =>
        Effect.gen(function*() {
          const { active } = yield* bundles
          const account = yield* newAccount(100_000n)
          const admin = yield* adminClient
          yield* admin.accounts.update({ path: { account_id: account.id }, payload: { limits: { orders: 3 } } })
          const answers = []
          for (let i = 0; i < 5; i++) {
            answers.push(yield* order(account.key, { bundle_id: active, phone_number: `024111002${i}` }))
          }
          assert.deepStrictEqual(answers.map((res) => res.status), [200, 200, 200, 429, 429])
          assert.deepStrictEqual(answers.map((res) => res.headers["x-ratelimit-remaining"]), ["2", "1", "0", "0", "0"])
          assert.deepStrictEqual(answers.map(wasEarly), [false, true, true, false, false])
          const { json } = yield* api("/orders", account.key)
          assert.strictEqual(json.pagination.total, 3)
        }))

      it.effect("orders whose bodies are refused after an admission from memory get their usual answers and change nothing", () =>
        Effect.gen(function*() {
          const { active } = yield* bundles
          const account = yield* newAccount(100_000n)
          const body = { bundle_id: active, phone_number: "0241110030" }
          yield* api("/balance", account.key)
          assert.isTrue(wasEarly(yield* api("/balance", account.key)))
          const cases: Array<[string, string, Omit<RawOptions, "key"> & { method?: string }, number]> = [
            ["no content type", "/orders", { method: "POST", body, contentType: null }, 400],
            ["a text body", "/orders", { method: "POST", body, contentType: "text/plain" }, 400],
            [
              "a body over the limit",
              "/orders",
              { method: "POST", body: "x".repeat(EndpointPolicy.DEFAULT_BODY_LIMIT + 1) },
              413
            ],
            ["a query string", "/orders?x=1", { method: "POST", body: "{}" }, 422]
          ]
          for (const [name, path, options, status] of cases) {
            const res = yield* api(path, account.key, options)
            assert.strictEqual(res.status, status, `${name}: ${res.text}`)
            assert.isTrue(wasEarly(res), name)
          }
          const withBody = yield* api("/balance", account.key, { body: "{}" })
          assert.strictEqual(withBody.status, 200, withBody.text)
          // The body is never read: the connection closes after the answer.
          assert.strictEqual(withBody.headers.connection, "close")
          assert.strictEqual((yield* api("/balance", account.key)).json.balance.main, 1000)
        }))
    })
  })

  describe(`early reads with the rate limits in the database on ${target.name}`, () => {
    beforeAll(() => {
      way = "cache"
    })
    layer(server(target, { BUNDLES_RATE_LIMIT_STORE: "database" }), { timeout: 60_000, excludeTestServices: true })(
      (it) => {
        it.effect("every read goes to the router, which counts it in the database", () =>
          Effect.gen(function*() {
            const [network] = yield* networkIds
            const { key } = yield* newAccount(0n)
            const answers = []
            for (let i = 0; i < 3; i++) {
              answers.push(yield* api("/networks", key), yield* api(`/networks/${network}/bundles`, key))
            }
            assert.deepStrictEqual(answers.map((res) => res.status), [200, 200, 200, 200, 200, 200])
            assert.deepStrictEqual(answers.map((res) => res.headers["x-ratelimit-remaining"]), [
              "59",
              "58",
              "57",
              "56",
              "55",
              "54"
            ])
            assert.isFalse(answers.some(wasEarly))
          }))
      }
    )
  })
}
