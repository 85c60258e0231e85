/**
 * What the typed client cannot send, over raw HTTP: malformed and oversized bodies, wrong
 * content types, unknown paths, wrong methods; the JSON envelope, `X-Request-Id` and the
 * rate-limit headers on every response; and the rate limits themselves (on a server of their
 * own, so the counters start fresh).
 */
import { ApiError, RateLimit } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Stream } from "effect"
import {
  adminClient,
  bundlesByName,
  newAccount,
  raw,
  type RawOptions,
  type RawResponse,
  resellerClient,
  serverLayer
} from "./Harness.js"

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** A request to the public API. */
const api = (method: Method, path: string, key: string | undefined, options: Omit<RawOptions, "key"> = {}) =>
  raw(method, `/api/v1${path}`, { ...options, key })

/** The error envelope: the status, `success: false`, a string message, its code, a request id. */
const expectEnvelope = (res: RawResponse, status: number) => {
  assert.strictEqual(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`)
  assert.match(res.headers["content-type"] ?? "", /^application\/json/, "Content-Type")
  assert.isObject(res.json, `body is not a JSON object: ${res.text}`)
  assert.strictEqual(res.json.success, false, res.text)
  assert.isString(res.json.message, res.text)
  assert.isAbove(res.json.message.length, 0)
  assert.notProperty(res.json, "stack")
  assert.isString(res.headers["x-request-id"], "X-Request-Id header")
  assert.isAbove(res.headers["x-request-id"]!.length, 0)
  // Extensions beyond the spec: the error's stable snake_case code, and the request id.
  assert.strictEqual(res.json.code, res.json._tag.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase(), res.text)
  assert.strictEqual(res.json.request_id, res.headers["x-request-id"], res.text)
}

/** The three rate-limit headers, as numbers. */
const rateHeaders = (res: RawResponse) => {
  const read = (name: string) => {
    const value = res.headers[name]
    assert.isString(value, `${name} header on ${res.status} ${res.text}`)
    assert.match(value!, /^\d+$/, `${name}: ${value}`)
    return Number(value)
  }
  const limit = read("x-ratelimit-limit")
  const remaining = read("x-ratelimit-remaining")
  const reset = read("x-ratelimit-reset")
  assert.isAtMost(remaining, limit)
  assert.isAtMost(reset, 61)
  return { limit, remaining, reset }
}

const quiet = <A, E, R>(self: Layer.Layer<A, E, R>) =>
  self.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

/** A funded account with the demo catalogue, its typed client, and its balance through the admin API. */
const setup = (main: bigint) =>
  Effect.gen(function*() {
    const bundles = yield* bundlesByName
    const account = yield* newAccount(main)
    const admin = yield* adminClient
    const client = yield* resellerClient(account.key)
    const bundle = (name: string) => bundles.get(name)!.id
    const network = (name: string) => bundles.get(name)!.network_id
    const mainBalance = Effect.map(admin.accounts.show({ path: { account_id: account.id } }), (d) => d.balance.main)
    const setLimits = (limits: RateLimit.RateLimitsPatch) =>
      admin.accounts.update({ path: { account_id: account.id }, payload: { limits } })
    return { ...account, admin, client, bundle, network, mainBalance, setLimits }
  })

/** A JSON order body padded with spaces to exactly `size` bytes. */
const paddedOrder = (bundleId: number, size: number) => {
  const json = JSON.stringify({ bundle_id: bundleId, phone_number: "0241234567" })
  return json.slice(0, -1) + " ".repeat(size - json.length) + "}"
}

for (const target of targets) {
  describe(`envelope on ${target.name}`, () => {
    layer(quiet(serverLayer(target)), { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("400: malformed JSON bodies; nothing is debited", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const id = t.bundle("MTN 1GB")
          const bodies = [`{"bundle_id": ${id},`, `{bundle_id: ${id}}`, "not json", `{"bundle_id":${id}}}`, "{'a':1}"]
          const statuses: Array<[string, number]> = []
          for (const body of bodies) statuses.push([body, (yield* api("POST", "/orders", t.key, { body })).status])
          assert.deepStrictEqual(statuses, bodies.map((b) => [b, 400]))
          for (const body of bodies) {
            const res = yield* api("POST", "/orders", t.key, { body })
            expectEnvelope(res, 400)
            rateHeaders(res)
          }
          assert.strictEqual(yield* t.mainBalance, 10_000n)
        }))

      it.effect("400: a POST whose Content-Type is not application/json", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          yield* t.setLimits({ orders: 100 })
          const body = JSON.stringify({ bundle_id: t.bundle("AirtelTigo iShare 500MB"), phone_number: "0241234567" })
          const refused: Array<string | null> = [
            "text/plain",
            null,
            "application/x-www-form-urlencoded",
            "application/jsonp",
            "text/json"
          ]
          const statuses: Array<[string | null, number]> = []
          for (const contentType of refused) {
            statuses.push([contentType, (yield* api("POST", "/orders", t.key, { body, contentType })).status])
          }
          assert.deepStrictEqual(statuses, refused.map((c) => [c, 400]))
          for (const contentType of refused) {
            expectEnvelope(yield* api("POST", "/orders", t.key, { body, contentType }), 400)
          }
          assert.strictEqual(yield* t.mainBalance, 10_000n)
          // Parameters and the case of the media type do not matter.
          for (const contentType of ["application/json; charset=utf-8", "Application/JSON"]) {
            const res = yield* api("POST", "/orders", t.key, { body, contentType })
            assert.strictEqual(res.status, 200, `${contentType}: ${res.text}`)
          }
          assert.strictEqual(yield* t.mainBalance, 10_000n - 2n * 250n)
        }))

      it.effect("404: unknown routes, inside and outside /api/v1, as JSON", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          const paths: Array<[Method, string]> = [
            ["GET", "/api/v1/nope"],
            ["GET", "/nope"],
            // (`/` and the dashboard's other page paths are the web app: packages/dashboard/test.)
            ["GET", "/api/v1"],
            ["GET", "/api/v2/balance"],
            ["GET", "/api/balance"],
            ["GET", "/balance"],
            ["GET", "/api/v1/orders/ORD-000000000000/extra"],
            ["GET", "/api/v1/networks/1/bundles/1"],
            ["POST", "/api/v1/nope"],
            ["DELETE", "/nope"]
          ]
          const statuses: Array<[string, number]> = []
          for (const [method, path] of paths) {
            const res = yield* raw(method, path, { key: t.key, ...(method === "POST" ? { body: {} } : {}) })
            statuses.push([`${method} ${path}`, res.status])
          }
          assert.deepStrictEqual(statuses, paths.map(([method, path]) => [`${method} ${path}`, 404]))
          for (const [method, path] of paths) {
            const res = yield* raw(method, path, { key: t.key, ...(method === "POST" ? { body: {} } : {}) })
            expectEnvelope(res, 404)
          }
          // Under /api/v1 the rate-limit headers come along.
          rateHeaders(yield* api("GET", "/nope", t.key))
        }))

      it.effect("405: a wrong method on a known path, with Allow", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const cases: Array<[Method, string, Array<string>]> = [
            ["DELETE", "/balance", ["GET"]],
            ["POST", "/balance", ["GET"]],
            ["PUT", "/orders", ["GET", "POST"]],
            ["DELETE", "/orders", ["GET", "POST"]],
            ["DELETE", "/orders/ORD-000000000000", ["GET"]],
            ["PATCH", "/networks", ["GET"]],
            ["POST", "/networks/1/bundles", ["GET"]]
          ]
          const observed: Array<[string, number, Array<string>]> = []
          for (const [method, path] of cases) {
            const res = yield* api(method, path, t.key, method === "GET" ? {} : { body: {} })
            const allow = (res.headers["allow"] ?? "").split(",").map((m) => m.trim()).filter((m) => m.length > 0)
            observed.push([`${method} ${path}`, res.status, allow.sort()])
          }
          assert.deepStrictEqual(observed, cases.map(([method, path, allow]) => [`${method} ${path}`, 405, allow]))
          for (const [method, path] of cases) {
            const res = yield* api(method, path, t.key, { body: {} })
            expectEnvelope(res, 405)
            rateHeaders(res)
          }
          assert.strictEqual(yield* t.mainBalance, 10_000n)
        }))

      it.effect("413: a body over 64 KiB is refused with the envelope; one of exactly 64 KiB is served", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const id = t.bundle("AirtelTigo iShare 500MB")
          const over = yield* api("POST", "/orders", t.key, { body: paddedOrder(id, 64 * 1024 + 1) })
          expectEnvelope(over, 413)
          rateHeaders(over)
          expectEnvelope(yield* api("POST", "/orders", t.key, { body: paddedOrder(id, 1024 * 1024) }), 413)
          assert.strictEqual(yield* t.mainBalance, 10_000n)
          const at = yield* api("POST", "/orders", t.key, { body: paddedOrder(id, 64 * 1024) })
          assert.strictEqual(at.status, 200, at.text)
          assert.strictEqual(yield* t.mainBalance, 9_750n)
        }))

      it.effect("413: a chunked body (no Content-Length) over 64 KiB is refused too", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const client = yield* HttpClient.HttpClient
          const text = paddedOrder(t.bundle("AirtelTigo iShare 500MB"), 100 * 1024)
          const chunks = Array.from({ length: 10 }, (_, i) =>
            new TextEncoder().encode(text.slice(i * 10240, (i + 1) * 10240)))
          const request = HttpClientRequest.post("/api/v1/orders").pipe(
            HttpClientRequest.setHeaders({ "x-api-key": t.key, accept: "application/json" }),
            HttpClientRequest.bodyStream(Stream.fromIterable(chunks), { contentType: "application/json" })
          )
          const response = yield* client.execute(request)
          const body = yield* response.text
          const res: RawResponse = {
            status: response.status,
            headers: response.headers,
            text: body,
            json: (() => {
              try {
                return JSON.parse(body)
              } catch {
                return undefined
              }
            })()
          }
          expectEnvelope(res, 413)
          assert.strictEqual(yield* t.mainBalance, 10_000n)
        }))

      it.effect("401 as JSON, with a request id and rate-limit headers", () =>
        Effect.gen(function*() {
          const res = yield* api("GET", "/balance", undefined)
          expectEnvelope(res, 401)
          rateHeaders(res)
        }))

      it.effect("every /api/v1 response carries X-Request-Id (unique) and the X-RateLimit headers", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const id = t.bundle("AirtelTigo iShare 500MB")
          const responses = [
            yield* api("GET", "/balance", t.key),
            yield* api("GET", "/networks", t.key),
            yield* api("GET", `/networks/${t.network("MTN 1GB")}/bundles`, t.key),
            yield* api("POST", "/orders", t.key, { body: { bundle_id: id, phone_number: "0241234567" } }),
            yield* api("GET", "/orders", t.key),
            yield* api("GET", "/orders/ORD-000000000000", t.key),
            yield* api("POST", "/orders", t.key, { body: "{" }),
            yield* api("POST", "/orders", t.key, { body: { bundle_id: id } }),
            yield* api("GET", "/networks/999999/bundles", t.key),
            yield* api("GET", "/nope", t.key),
            yield* api("DELETE", "/balance", t.key),
            yield* api("GET", "/balance", "bad-key")
          ]
          assert.deepStrictEqual(responses.map((r) => r.status), [
            200,
            200,
            200,
            200,
            200,
            404,
            400,
            422,
            404,
            404,
            405,
            401
          ])
          const ids = new Set<string>()
          for (const res of responses) {
            assert.isObject(res.json, res.text)
            assert.isBoolean(res.json.success)
            assert.match(res.headers["content-type"] ?? "", /^application\/json/)
            assert.isString(res.headers["x-request-id"])
            ids.add(res.headers["x-request-id"]!)
            rateHeaders(res)
          }
          assert.strictEqual(ids.size, responses.length)
        }))

      it.effect("the OpenAPI document of the public API is JSON with every endpoint", () =>
        Effect.gen(function*() {
          const res = yield* raw("GET", "/api/v1/openapi.json")
          assert.strictEqual(res.status, 200, res.text)
          assert.isString(res.json.openapi)
          assert.match(res.json.openapi, /^3\./)
          assert.includeMembers(Object.keys(res.json.paths), [
            "/api/v1/balance",
            "/api/v1/networks",
            "/api/v1/networks/{network_id}/bundles",
            "/api/v1/orders",
            "/api/v1/orders/{order_number}"
          ])
          assert.includeMembers(Object.keys(res.json.paths["/api/v1/orders"]), ["get", "post"])
        }))
    })
  })

  describe(`rate limits on ${target.name}`, () => {
    layer(quiet(serverLayer(target)), { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("headers report the tightest scope of each request", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const id = t.bundle("AirtelTigo iShare 500MB")
          const seen = []
          for (
            const [method, path, body] of [
              ["GET", "/networks"],
              ["GET", "/networks"],
              ["GET", "/balance"],
              ["POST", "/orders", { bundle_id: id, phone_number: "0241234567" }],
              ["GET", "/orders"],
              ["GET", "/balance"]
            ] as Array<[Method, string, unknown?]>
          ) {
            const res = yield* api(method, path, t.key, body === undefined ? {} : { body })
            assert.strictEqual(res.status, 200, res.text)
            const { limit, remaining, reset } = rateHeaders(res)
            assert.isAtLeast(reset, 1)
            seen.push([`${method} ${path}`, limit, remaining])
          }
          assert.deepStrictEqual(seen, [
            ["GET /networks", 60, 59],
            ["GET /networks", 60, 58],
            ["GET /balance", 30, 29],
            ["POST /orders", 10, 9],
            ["GET /orders", 60, 55],
            ["GET /balance", 30, 28]
          ])
        }))

      it.effect("POST /orders: 10 a minute; the 11th is 429 with Retry-After and retry_after, and consumes nothing", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const id = t.bundle("AirtelTigo iShare 500MB")
          const remaining: Array<number> = []
          for (let i = 0; i < 10; i++) {
            const res = yield* api("POST", "/orders", t.key, { body: { bundle_id: id, phone_number: `024123450${i}` } })
            assert.strictEqual(res.status, 200, res.text)
            const headers = rateHeaders(res)
            assert.strictEqual(headers.limit, 10)
            remaining.push(headers.remaining)
          }
          assert.deepStrictEqual(remaining, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
          for (let i = 0; i < 2; i++) {
            const res = yield* api("POST", "/orders", t.key, { body: { bundle_id: id, phone_number: "0241234599" } })
            expectEnvelope(res, 429)
            assert.isNumber(res.json.retry_after)
            assert.isTrue(Number.isInteger(res.json.retry_after))
            assert.isAtLeast(res.json.retry_after, 1)
            assert.isAtMost(res.json.retry_after, 61)
            assert.strictEqual(res.headers["retry-after"], String(res.json.retry_after))
            const headers = rateHeaders(res)
            assert.strictEqual(headers.limit, 10)
            assert.strictEqual(headers.remaining, 0)
          }
          const typed = yield* Effect.flip(t.client.orders.place({
            payload: { bundle_id: id, phone_number: "0241234599" }
          }))
          assert.instanceOf(typed, ApiError.RateLimited)
          // Nothing was debited or placed, and the refused requests left the other scopes alone.
          assert.strictEqual(yield* t.mainBalance, 10_000n - 10n * 250n)
          const list = yield* api("GET", "/orders", t.key)
          assert.strictEqual(list.json.pagination.total, 10)
          assert.deepStrictEqual([rateHeaders(list).limit, rateHeaders(list).remaining], [60, 49])
          const balance = yield* api("GET", "/balance", t.key)
          assert.deepStrictEqual([rateHeaders(balance).limit, rateHeaders(balance).remaining], [30, 29])
          // Another account is not affected.
          const other = yield* setup(10_000n)
          assert.strictEqual(
            (yield* api("POST", "/orders", other.key, { body: { bundle_id: id, phone_number: "0241234567" } })).status,
            200
          )
        }))

      it.effect("GET /balance: 30 a minute; other endpoints still served", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          for (let i = 0; i < 30; i++) {
            const res = yield* api("GET", "/balance", t.key)
            assert.strictEqual(res.status, 200, `request ${i + 1}: ${res.text}`)
            assert.deepStrictEqual([rateHeaders(res).limit, rateHeaders(res).remaining], [30, 29 - i])
          }
          const refused = yield* api("GET", "/balance", t.key)
          expectEnvelope(refused, 429)
          assert.strictEqual(refused.headers["retry-after"], String(refused.json.retry_after))
          assert.strictEqual(rateHeaders(refused).limit, 30)
          const networks = yield* api("GET", "/networks", t.key)
          assert.strictEqual(networks.status, 200)
          assert.deepStrictEqual([rateHeaders(networks).limit, rateHeaders(networks).remaining], [60, 29])
        }))

      it.effect("all endpoints: 60 a minute per account", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          for (let i = 0; i < 60; i++) {
            const res = yield* api("GET", "/networks", t.key)
            assert.strictEqual(res.status, 200, `request ${i + 1}: ${res.text}`)
            assert.strictEqual(rateHeaders(res).remaining, 59 - i)
          }
          for (const [method, path] of [["GET", "/networks"], ["GET", "/balance"], ["GET", "/orders"]] as const) {
            const res = yield* api(method, path, t.key)
            expectEnvelope(res, 429)
            assert.strictEqual(rateHeaders(res).limit, 60)
            assert.isString(res.headers["retry-after"])
          }
          const order = yield* api("POST", "/orders", t.key, {
            body: { bundle_id: t.bundle("MTN 1GB"), phone_number: "0241234567" }
          })
          expectEnvelope(order, 429)
          assert.strictEqual(yield* t.mainBalance, 10_000n)
        }))

      it.effect("two keys of one account share the limits", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const second = yield* t.admin.apiKeys.create({ path: { account_id: t.id }, urlParams: {} })
          const remaining: Array<number> = []
          for (const key of [t.key, second.api_key, t.key]) {
            remaining.push(rateHeaders(yield* api("GET", "/balance", key)).remaining)
          }
          assert.deepStrictEqual(remaining, [29, 28, 27])
          yield* t.setLimits({ orders: 2 })
          const id = t.bundle("AirtelTigo iShare 500MB")
          const statuses: Array<number> = []
          for (const key of [t.key, second.api_key, t.key, second.api_key]) {
            const res = yield* api("POST", "/orders", key, { body: { bundle_id: id, phone_number: "0241234567" } })
            statuses.push(res.status)
          }
          assert.deepStrictEqual(statuses, [200, 200, 429, 429])
          assert.strictEqual(yield* t.mainBalance, 10_000n - 2n * 250n)
        }))

      it.effect("per-account overrides set by the operator apply at once, and can be removed", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          yield* api("GET", "/balance", t.key)
          yield* t.setLimits({ balance: 2 })
          const second = yield* api("GET", "/balance", t.key)
          assert.deepStrictEqual([rateHeaders(second).limit, rateHeaders(second).remaining], [2, 0])
          expectEnvelope(yield* api("GET", "/balance", t.key), 429)
          yield* t.setLimits({ balance: null })
          const back = yield* api("GET", "/balance", t.key)
          assert.strictEqual(back.status, 200)
          assert.deepStrictEqual([rateHeaders(back).limit, rateHeaders(back).remaining], [30, 27])
        }))

      // Last in this block: it uses up the address's quota for a minute.
      it.effect("unauthenticated requests are limited per client address, apart from any account", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          const first = yield* api("GET", "/networks", undefined)
          expectEnvelope(first, 401)
          const start = rateHeaders(first)
          assert.strictEqual(start.limit, 60)
          // An authenticated request does not count for the address; an unknown key does.
          assert.strictEqual((yield* api("GET", "/networks", t.key)).status, 200)
          const second = yield* api("GET", "/networks", undefined)
          assert.strictEqual(rateHeaders(second).remaining, start.remaining - 1)
          const third = yield* api("GET", "/networks", `dbk_${"C".repeat(40)}`)
          expectEnvelope(third, 401)
          assert.strictEqual(rateHeaders(third).remaining, start.remaining - 2)
          for (let i = 0; i < start.remaining - 2; i++) {
            assert.strictEqual((yield* api("GET", "/networks", undefined)).status, 401)
          }
          const refused = yield* api("GET", "/networks", undefined)
          expectEnvelope(refused, 429)
          assert.isString(refused.headers["retry-after"])
          assert.isNumber(refused.json.retry_after)
          // The account's own quota is untouched.
          const own = yield* api("GET", "/networks", t.key)
          assert.strictEqual(own.status, 200)
          assert.strictEqual(rateHeaders(own).remaining, 58)
        }))
    })
  })
}
