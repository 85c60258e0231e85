/**
 * The catalogue's reads answered before the router (`Gateway.make`'s `early`): the same
 * answer as the router's, header for header and byte for byte; the same counting of rate
 * limits, the same view of revoked keys, suspended accounts, price groups and catalogue
 * changes; the same log lines and metrics; and every request it cannot answer from memory
 * left to the router, with its usual answer. A spy around the early answers tells which
 * requests took which way.
 */
import { targets } from "@databundle/core/testing"
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as Http from "../src/Http.js"
import * as Logging from "../src/Logging.js"
import * as RequestContext from "../src/RequestContext.js"
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

/** The ids of the requests answered before the router. */
const early = new Set<string>()
/** The request log's lines, as the server writes them. */
const lines: Array<string> = []

const spied = Layer.effect(
  RequestContext.EarlyAnswer,
  Effect.map(RequestContext.EarlyAnswer, (answer) => (request, info) => {
    const response = answer(request, info)
    if (response !== undefined) early.add(info.id)
    return response
  })
)

/** The server on a free port, its early answers seen by the spy, its request lines kept in `lines`. */
const server = (target: (typeof targets)[number], extra: Record<string, string> = {}) =>
  HttpApiBuilder.serve(Http.middleware).pipe(
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
const wasEarly = (res: RawResponse) => early.has(idOf(res))

/** Headers that differ from one request to the next whichever way it is answered. */
const PER_REQUEST = new Set(["x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "date"])

/** The router's answer and the early one are the same: status, every header (per-request ones present on both), body. */
const assertSameAnswer = (routed: RawResponse, answered: RawResponse) => {
  assert.isFalse(wasEarly(routed), "the first answer should be the router's")
  assert.isTrue(wasEarly(answered), "the second answer should be early")
  assert.strictEqual(answered.status, routed.status)
  const names = (res: RawResponse) => Object.keys(res.headers).sort()
  assert.deepStrictEqual(names(answered), names(routed))
  for (const name of names(routed)) {
    if (!PER_REQUEST.has(name)) assert.strictEqual(answered.headers[name], routed.headers[name], name)
  }
  assert.strictEqual(answered.text, routed.text)
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

      it.effect("requests not answerable from memory go to the router, with their usual answers", () =>
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
            ["an escaped network id", `/networks/%3${network}/bundles`, {}, 200],
            ["no such network", "/networks/999999/bundles", {}, 404],
            ["a network id that is no number", "/networks/abc/bundles", {}, 404]
          ]
          for (const [name, path, options, status] of cases) {
            const res = yield* api(path, key, options)
            assert.strictEqual(res.status, status, `${name}: ${res.text}`)
            assert.isFalse(wasEarly(res), name)
            if (status === 200) assert.strictEqual(res.headers["x-ratelimit-limit"], "60", name)
          }
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

  describe(`early reads with the rate limits in the database on ${target.name}`, () => {
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
