/**
 * The findings of the security review, each as it was reproduced: other spellings of a path
 * that slipped past the limits, bodies never meant to be read, lax input, secrets cached.
 * Each test failed before the one route decision and the contract's input rules.
 */
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { ADMIN_TOKEN, adminClient, bundlesByName, newAccount, raw, serverLayer } from "./Harness.js"
import * as Wire from "./Wire.js"

const quiet = <A, E, R>(self: Layer.Layer<A, E, R>) => self.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Error)))

/** Spellings of `/api/v1/orders` that are not it. */
const ORDER_SPELLINGS = [
  "/API/V1/ORDERS",
  "/Api/v1/orders",
  "/api/v1/Orders",
  "/api/v1/%6Frders",
  "/api/v1/%6forders",
  "/api%2Fv1/orders",
  "/api/v1//orders",
  "//api/v1/orders",
  "/api/v1/orders/",
  "/api/v1/./orders",
  "/api/v1/x/../orders",
  "/api/v1/orders;x"
]

const expect404 = (res: Wire.WireResponse | { status: number; json: any }, what: string) => {
  assert.strictEqual(res.status, 404, `${what}: ${JSON.stringify(res.json)}`)
  assert.strictEqual(res.json?.success, false, what)
  assert.strictEqual(res.json?._tag, "NotFound", what)
}

for (const target of targets) {
  describe(`hostile requests on ${target.name}`, () => {
    layer(quiet(serverLayer(target)), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("other spellings of a path name nothing: 404, no order, and they count toward no limit", () =>
        Effect.gen(function*() {
          const port = yield* Wire.port
          const bundles = yield* bundlesByName
          const account = yield* newAccount(100_000n)
          const body = JSON.stringify({
            bundle_id: bundles.get("AirtelTigo iShare 500MB")!.id,
            phone_number: "0241234567"
          })
          const headers = { "x-api-key": account.key, "content-type": "application/json" }
          for (const spelling of ORDER_SPELLINGS) {
            expect404(yield* Wire.exchange(port, { method: "POST", target: spelling, headers, body }), spelling)
            expect404(yield* Wire.exchange(port, { method: "GET", target: spelling, headers }), `GET ${spelling}`)
          }
          // None of them placed an order; the ten orders a minute are all still there.
          const statuses: Array<number> = []
          for (let i = 0; i < 11; i++) {
            statuses.push(
              (yield* Wire.exchange(port, { method: "POST", target: "/api/v1/orders", headers, body })).status
            )
          }
          assert.deepStrictEqual(statuses, [...Array(10).fill(200), 429])
          const admin = yield* adminClient
          const shown = yield* admin.accounts.show({ path: { account_id: account.id } })
          assert.strictEqual(shown.balance.main, 100_000n - 10n * 250n)
        }))

      it.effect("the admin API answers only its own spelling, and a wrong token sent elsewhere reaches nothing", () =>
        Effect.gen(function*() {
          const port = yield* Wire.port
          for (
            const spelling of [
              "/ADMIN/v1/accounts",
              "/admin/V1/accounts",
              "/admin/v1/%61ccounts",
              "/admin/v1/accounts/"
            ]
          ) {
            const good = yield* Wire.exchange(port, {
              method: "GET",
              target: spelling,
              headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
            })
            expect404(good, spelling)
          }
          const canonical = yield* raw("GET", "/admin/v1/accounts", { bearer: ADMIN_TOKEN })
          assert.strictEqual(canonical.status, 200)
        }))

      it.effect("a body past the limit is never read: to another spelling, an unknown path, an endpoint without a payload, or past 64 KiB", () =>
        Effect.gen(function*() {
          const port = yield* Wire.port
          const account = yield* newAccount(0n)
          const headers = { "x-api-key": account.key, "content-type": "application/json" }
          const max = 64 * 1024 * 1024
          for (
            const [method, target, status] of [
              ["POST", "/API/V1/ORDERS", 404],
              ["POST", "/api/v1/nowhere", 404],
              ["POST", "/nowhere", 404],
              ["GET", "/api/v1/balance", 200],
              ["PUT", "/api/v1/orders", 405],
              ["POST", "/api/v1/orders", 413],
              ["PATCH", "/admin/v1/accounts/1", 413]
            ] as const
          ) {
            const res = yield* Wire.exchange(port, { method, target, headers, endless: { chunk: 16 * 1024, max } })
            assert.strictEqual(res.status, status, `${method} ${target}: ${res.text}`)
            assert.strictEqual(res.headers["connection"], "close", `${method} ${target}`)
            assert.isBelow(res.bytesSent, max / 4, `${method} ${target} read ${res.bytesSent} bytes`)
          }
        }))

      it.effect("lax input is refused with the field named, and nothing changes", () =>
        Effect.gen(function*() {
          const admin = yield* adminClient
          const before = (yield* admin.accounts.list({ urlParams: {} })).pagination.total
          const names = ["Bad\u0085Name", "Evil\u202Egnp.exe", "\u200B\u200B", "Tab\tName", " \u00AD "]
          for (const name of names) {
            const res = yield* raw("POST", "/admin/v1/accounts", { bearer: ADMIN_TOKEN, body: { name } })
            assert.strictEqual(res.status, 422, `${JSON.stringify(name)}: ${res.text}`)
            assert.match(res.json.message, /^name /)
          }
          const surrogate = yield* raw("POST", "/admin/v1/accounts", {
            bearer: ADMIN_TOKEN,
            body: "{\"name\":\"A\\ud800B\"}"
          })
          assert.strictEqual(surrogate.status, 422, surrogate.text)
          assert.deepStrictEqual(Object.keys(surrogate.json.errors), ["name"])
          const notUtf8 = yield* raw("POST", "/admin/v1/accounts", {
            bearer: ADMIN_TOKEN,
            body: new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])
          })
          assert.strictEqual(notUtf8.status, 400, notUtf8.text)
          assert.strictEqual((yield* admin.accounts.list({ urlParams: {} })).pagination.total, before)

          const account = yield* newAccount(1000n)
          for (const amount of ["5.5000000000000001", "1e1", "5.501", "5.123", "-0.001"]) {
            const res = yield* raw("POST", `/admin/v1/accounts/${account.id}/wallet/fund`, {
              bearer: ADMIN_TOKEN,
              body: `{"amount": ${amount}, "wallet": "main"}`
            })
            assert.strictEqual(res.status, 422, `${amount}: ${res.text}`)
            assert.deepStrictEqual(Object.keys(res.json.errors), ["amount"], amount)
          }
          const shown = yield* admin.accounts.show({ path: { account_id: account.id } })
          assert.strictEqual(shown.balance.main, 1000n)

          for (const id of ["1e0", "0x1", "1.0", "%201", "01", "+1"]) {
            const res = yield* raw("GET", `/admin/v1/accounts/${id.replace("1", String(account.id))}`, {
              bearer: ADMIN_TOKEN
            })
            assert.strictEqual(res.status, 404, `${id}: ${res.text}`)
          }
          for (const page of ["1e0", "0x2", "1.0", "%202", "02"]) {
            const res = yield* raw("GET", `/api/v1/orders?page=${page}`, { key: account.key })
            assert.strictEqual(res.status, 422, `${page}: ${res.text}`)
            assert.strictEqual(res.json.message, "page must be an integer from 1 to 1000000")
          }
          const status = yield* raw("GET", "/api/v1/orders?status=bogus", { key: account.key })
          assert.strictEqual(status.json.message, "status must be one of pending, successful, failed")
          const twice = yield* raw("GET", "/api/v1/orders?page=1&page=2", { key: account.key })
          assert.strictEqual(twice.status, 422)
          assert.strictEqual(twice.json.message, "page must be given once")
        }))

      it.effect("responses carrying a secret are not to be cached; others are left alone", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(0n)
          const created = yield* raw("POST", `/admin/v1/accounts/${account.id}/keys`, { bearer: ADMIN_TOKEN })
          assert.strictEqual(created.status, 201)
          assert.strictEqual(created.headers["cache-control"], "no-store")
          const shown = yield* raw("GET", `/admin/v1/accounts/${account.id}`, { bearer: ADMIN_TOKEN })
          assert.strictEqual(shown.headers["cache-control"], "no-store")
          const fresh = yield* raw("POST", "/admin/v1/accounts", { bearer: ADMIN_TOKEN, body: { name: "Secretive" } })
          assert.strictEqual(fresh.status, 201)
          assert.strictEqual(fresh.headers["cache-control"], "no-store")
          const balance = yield* raw("GET", "/api/v1/balance", { key: account.key })
          assert.isUndefined(balance.headers["cache-control"])
        }))
    })

    // The second review's findings: credentials where none are looked at, bodies with two
    // meanings, anonymous admin requests and IPv6 addresses outside the per-address limits.
    layer(
      quiet(serverLayer(target, {
        BUNDLES_TRUSTED_PROXIES: "127.0.0.1,::1",
        BUNDLES_AUTH_FAILURE_LIMIT: "4",
        BUNDLES_RATE_LIMITS: "all=10,orders=10,balance=30"
      })),
      { timeout: 120_000, excludeTestServices: true }
    )((it) => {
      const from = (address: string) => ({ "x-forwarded-for": address })

      it.effect("a body naming a member twice has two meanings: 422 on that member, nothing changes", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(1000n)
          const twice = yield* raw("POST", `/admin/v1/accounts/${account.id}/wallet/fund`, {
            bearer: ADMIN_TOKEN,
            body: "{\"amount\": 1, \"wallet\": \"main\", \"amount\": 1000}"
          })
          assert.strictEqual(twice.status, 422, twice.text)
          assert.deepStrictEqual(twice.json.errors, { amount: ["amount is given more than once"] })
          // Escaped spellings of one key are one key; nested objects are checked too.
          const escaped = yield* raw("POST", "/api/v1/orders", {
            key: account.key,
            body: "{\"bundle_id\": 1, \"phone_number\": \"0241234567\", \"bundle_\\u0069d\": 2}"
          })
          assert.strictEqual(escaped.status, 422, escaped.text)
          assert.deepStrictEqual(Object.keys(escaped.json.errors), ["bundle_id"])
          const nested = yield* raw("PATCH", `/admin/v1/accounts/${account.id}`, {
            bearer: ADMIN_TOKEN,
            body: "{\"limits\": {\"orders\": 5, \"orders\": 500}}"
          })
          assert.strictEqual(nested.status, 422, nested.text)
          assert.deepStrictEqual(Object.keys(nested.json.errors), ["limits.orders"])
          // The same name in two objects is no repetition.
          const fine = yield* raw("PATCH", `/admin/v1/accounts/${account.id}`, {
            bearer: ADMIN_TOKEN,
            body: "{\"limits\": {\"all\": 7}, \"all\": 1}"
          })
          assert.strictEqual(fine.status, 200, fine.text)
          const shown = yield* (yield* adminClient).accounts.show({ path: { account_id: account.id } })
          assert.strictEqual(shown.balance.main, 1000n)
          assert.deepStrictEqual(shown.limits, { all: 7 })
        }))

      it.effect("anonymous admin requests and the admin OpenAPI document count per address; the operator's never", () =>
        Effect.gen(function*() {
          const address = from("198.51.100.20")
          const statuses: Array<number> = []
          for (let i = 0; i < 6; i++) {
            statuses.push((yield* raw("GET", "/admin/v1/accounts", { headers: address })).status)
          }
          for (let i = 0; i < 6; i++) {
            statuses.push((yield* raw("GET", "/admin/v1/openapi.json", { headers: address })).status)
          }
          assert.deepStrictEqual(statuses, [401, 401, 401, 401, 401, 401, 200, 200, 200, 200, 429, 429])
          const refused = yield* raw("GET", "/admin/v1/openapi.json", { headers: address })
          assert.strictEqual(refused.json.code, "rate_limited")
          assert.isString(refused.headers["retry-after"])
          // The admin token from that address: served, and not counted at all.
          for (let i = 0; i < 12; i++) {
            const served = yield* raw("GET", "/admin/v1/accounts?per_page=1", { bearer: ADMIN_TOKEN, headers: address })
            assert.strictEqual(served.status, 200, served.text)
            assert.isUndefined(served.headers["x-ratelimit-limit"])
          }
          // Another address has its own count.
          assert.strictEqual(
            (yield* raw("GET", "/admin/v1/openapi.json", { headers: from("198.51.100.21") })).status,
            200
          )
        }))

      it.effect("an IPv6 /64 counts as one address; /healthz never looks at credentials", () =>
        Effect.gen(function*() {
          const guesses: Array<number> = []
          for (let i = 1; i <= 6; i++) {
            const guess = yield* raw("GET", "/api/v1/balance", {
              key: `dbk_${String(i).padEnd(40, "q")}`,
              headers: from(`2001:db8:7:9::${i.toString(16)}`)
            })
            guesses.push(guess.status)
          }
          assert.deepStrictEqual(guesses, [401, 401, 401, 401, 429, 429], "one /64, one count")
          const neighbour = yield* raw("GET", "/api/v1/balance", {
            key: `dbk_${"r".repeat(40)}`,
            headers: from("2001:db8:7:a::1")
          })
          assert.strictEqual(neighbour.status, 401, "the next /64 is another address")
          // From that /64, past its limit, a probe sending credentials is still answered, and counts nothing.
          for (const path of ["/healthz", "/readyz"]) {
            for (let i = 0; i < 6; i++) {
              const probe = yield* raw("GET", path, {
                bearer: "a-wrong-token",
                headers: from("2001:db8:7:9:ffff::1")
              })
              assert.strictEqual(probe.status, 200, `${path}: ${probe.text}`)
            }
          }
          const metrics = yield* raw("GET", "/metrics", { bearer: "a-wrong-token", headers: from("2001:db8:7:9::77") })
          assert.strictEqual(metrics.status, 429, "the scrape takes the admin token, and counts its failures")
        }))
    })
  })
}
