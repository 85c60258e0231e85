/**
 * The retry rules, against the real server behind the fault proxy: waits on 429 honour
 * Retry-After and stay within the budget; transient failures are retried for reads, and for
 * orders only when a reference makes the repeat a replay; timeouts and abort signals end a
 * call, waits included. The money is checked through the admin API: an order retried after
 * its response was lost debits once.
 */
import { ApiError } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  AbortError,
  BundlesClient,
  type ClientOptions,
  createClient,
  NetworkError,
  RateLimitedError,
  ServerError,
  TimeoutError
} from "../src/index.js"
import { parseRetryAfter } from "../src/Retry.js"
import { type Action, type FaultProxy, startProxy } from "./FaultProxy.js"
import { rejection } from "./Rejection.js"
import { startServer, type TestServer } from "./Server.js"

const json = { "content-type": "application/json" }

const rateLimited = (headers: Record<string, string>, retryAfter: number): Action => ({
  kind: "respond",
  status: 429,
  headers: { ...json, ...headers },
  body: JSON.stringify(
    Schema.encodeSync(ApiError.RateLimited)(new ApiError.RateLimited({ message: "Slow down", retry_after: retryAfter }))
  )
})

const serverError: Action = {
  kind: "respond",
  status: 500,
  headers: json,
  body: JSON.stringify(
    Schema.encodeSync(ApiError.ServerError)(
      new ApiError.ServerError({ message: "Internal server error", request_id: "req_injected" })
    )
  )
}

const unavailable: Action = { kind: "respond", status: 503, headers: { "content-type": "text/plain" }, body: "busy" }

const orderBody = (seen: { body: string }) => JSON.parse(seen.body) as { reference?: string }

describe("Retry-After", () => {
  it("reads delta-seconds and HTTP dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    assert.strictEqual(parseRetryAfter("3", now), 3000)
    assert.strictEqual(parseRetryAfter(" 0 ", now), 0)
    assert.strictEqual(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now), 5000)
    assert.strictEqual(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now), 0)
    assert.isUndefined(parseRetryAfter(undefined, now))
    assert.isUndefined(parseRetryAfter("soon", now))
    assert.isUndefined(parseRetryAfter("-1", now))
  })
})

for (const target of targets) {
  describe(`retries on ${target.name}`, () => {
    let server: TestServer
    let proxy: FaultProxy
    beforeAll(async () => {
      server = await startServer(target)
      proxy = await startProxy(server.origin)
    })
    afterAll(async () => {
      await proxy?.close()
      await server?.dispose()
    })
    beforeEach(() => proxy.reset())
    // Waits and aborts do not depend on the database: they run on the first target only.
    const timing = target === targets[0] ? it : it.skip

    /** A funded account with raised limits, and its client through the proxy. */
    const setup = async (options: Partial<ClientOptions> = {}) => {
      const account = await server.account({ funds: 100_000n, limits: { all: 1000, orders: 1000 } })
      const client = createClient({ apiKey: account.key, baseUrl: proxy.baseUrl, retry: { backoff: 10 }, ...options })
      return { ...account, client, options: { apiKey: account.key, baseUrl: proxy.baseUrl, ...options } }
    }

    // ---------------------------------------------------------------- 429

    timing("waits for Retry-After on a 429, then succeeds", async () => {
      const { client } = await setup()
      proxy.script("GET", "/api/v1/balance", rateLimited({ "retry-after": "1" }, 1))
      const started = Date.now()
      const balance = await client.balance()
      const elapsed = Date.now() - started
      assert.strictEqual(balance.main, 100_000n)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 2)
      assert.isAtLeast(elapsed, 1_000)
      assert.isAtLeast(proxy.seen[1]!.at - proxy.seen[0]!.at, 1_000)
    })

    timing("takes the body's retry_after when the header is missing", async () => {
      const { client } = await setup()
      proxy.script("GET", "/api/v1/networks", rateLimited({}, 1))
      const started = Date.now()
      await client.networks()
      assert.isAtLeast(Date.now() - started, 1_000)
      assert.strictEqual(proxy.count("GET", "/api/v1/networks"), 2)
    })

    it("retries a 429 even for an order without a reference: a refused request did nothing", async () => {
      const { client, id } = await setup({ autoReference: false })
      const bundle = server.bundle("MTN 1GB")
      proxy.script("POST", "/api/v1/orders", rateLimited({ "retry-after": "1" }, 1))
      const placed = await client.orders.create({ bundleId: bundle.id, phoneNumber: "0241234567" })
      assert.isNull(placed.order.reference)
      assert.strictEqual(proxy.count("POST", "/api/v1/orders"), 2)
      assert.strictEqual(await server.mainBalance(id), 100_000n - bundle.price)
    })

    timing("never starts a wait that does not fit the budget, nor one past the last attempt", async () => {
      const { client, options } = await setup({ retry: { maxWait: 1_500 } })
      proxy.script("GET", "/api/v1/balance", rateLimited({ "retry-after": "120" }, 120))
      let started = Date.now()
      const tooLong = await rejection(client.balance())
      assert.instanceOf(tooLong, RateLimitedError)
      assert.strictEqual((tooLong as RateLimitedError).retryAfter, 120)
      assert.isBelow(Date.now() - started, 2_000)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 1)

      // 1 s fits once in 1.5 s, not twice.
      proxy.reset()
      proxy.script("GET", "/api/v1/balance", ...Array(3).fill(rateLimited({ "retry-after": "1" }, 1)))
      started = Date.now()
      assert.instanceOf(await rejection(client.balance()), RateLimitedError)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 2)
      assert.isBelow(Date.now() - started, 1_950)

      // maxAttempts bounds the waits too.
      proxy.reset()
      proxy.script("GET", "/api/v1/balance", ...Array(3).fill(rateLimited({ "retry-after": "0" }, 0)))
      const twice = createClient({ ...options, retry: { maxAttempts: 2 } })
      assert.instanceOf(await rejection(twice.balance()), RateLimitedError)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 2)
    })

    timing("does not wait on a 429 when onRateLimit is off", async () => {
      const { options } = await setup()
      proxy.script("GET", "/api/v1/balance", rateLimited({ "retry-after": "1" }, 1))
      const client = createClient({ ...options, retry: { onRateLimit: false } })
      assert.instanceOf(await rejection(client.balance()), RateLimitedError)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 1)
    })

    // ---------------------------------------------------------------- transient failures of reads

    it("retries reads after 5xx and after a broken connection", async () => {
      const { client } = await setup()
      proxy.script("GET", "/api/v1/networks", unavailable, serverError)
      const networks = await client.networks()
      assert.isAbove(networks.length, 0)
      assert.strictEqual(proxy.count("GET", "/api/v1/networks"), 3)

      proxy.script("GET", "/api/v1/balance", { kind: "drop" }, { kind: "drop-after-forward" })
      assert.strictEqual((await client.balance()).main, 100_000n)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 3)
    })

    it("gives up after maxAttempts with the last error", async () => {
      const { client } = await setup()
      proxy.script("GET", "/api/v1/balance", unavailable, unavailable, unavailable, unavailable)
      const error = await rejection(client.balance())
      assert.instanceOf(error, ServerError)
      assert.strictEqual((error as ServerError).status, 503)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 3)
    })

    it("does not retry transient failures when onTransient is off", async () => {
      const { options } = await setup()
      proxy.script("GET", "/api/v1/balance", unavailable)
      const client = createClient({ ...options, retry: { onTransient: false } })
      assert.instanceOf(await rejection(client.balance()), ServerError)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 1)
    })

    // ---------------------------------------------------------------- orders

    it("never retries an order without a reference after a 5xx", async () => {
      const { client, id } = await setup({ autoReference: false })
      proxy.script("POST", "/api/v1/orders", serverError)
      const error = await rejection(
        client.orders.create({ bundleId: server.bundle("MTN 1GB").id, phoneNumber: "0241234567" })
      )
      assert.instanceOf(error, ServerError)
      assert.strictEqual(proxy.count("POST", "/api/v1/orders"), 1)
      assert.strictEqual(await server.mainBalance(id), 100_000n)
    })

    it("never retries an order without a reference after a lost response: it was bought, once", async () => {
      const { client, id } = await setup({ autoReference: false })
      const bundle = server.bundle("MTN 1GB")
      proxy.script("POST", "/api/v1/orders", { kind: "drop-after-forward" })
      const error = await rejection(client.orders.create({ bundleId: bundle.id, phoneNumber: "0241234567" }))
      assert.instanceOf(error, NetworkError)
      assert.strictEqual(proxy.count("POST", "/api/v1/orders"), 1)
      assert.strictEqual(await server.mainBalance(id), 100_000n - bundle.price)
    })

    it("a retried order with a reference debits once", async () => {
      const { client, id } = await setup()
      const bundle = server.bundle("MTN 1GB")
      proxy.script("POST", "/api/v1/orders", { kind: "drop-after-forward" }, serverError)
      const placed = await client.orders.create({
        bundleId: bundle.id,
        phoneNumber: "0241234567",
        reference: "inv-1001"
      })
      assert.strictEqual(proxy.count("POST", "/api/v1/orders"), 3)
      assert.isTrue(placed.replayed)
      assert.strictEqual(placed.order.reference, "inv-1001")
      assert.strictEqual(placed.walletBalance, 100_000n - bundle.price)
      assert.strictEqual(await server.mainBalance(id), 100_000n - bundle.price)
      const debits = await server.orderEntries(id)
      assert.strictEqual(debits.length, 1)
      assert.strictEqual(debits[0]!.order_number, placed.order.orderNumber)
      assert.strictEqual((await client.orders.list()).pagination.total, 1)
    })

    it("an order without a reference gets one generated, the same on every attempt, and debits once", async () => {
      const { client, id } = await setup()
      const bundle = server.bundle("Telecel 2GB")
      proxy.script("POST", "/api/v1/orders", { kind: "drop-after-forward" })
      const placed = await client.orders.create({ bundle_id: bundle.id, phoneNumber: "0201234567" })
      const [first, second] = proxy.seen.filter((s) => s.method === "POST").map(orderBody)
      assert.match(first!.reference!, /^auto-[0-9a-f]{32}$/)
      assert.strictEqual(second!.reference, first!.reference)
      assert.strictEqual(placed.order.reference, first!.reference)
      assert.isTrue(placed.replayed)
      assert.strictEqual(await server.mainBalance(id), 100_000n - bundle.price)
      assert.strictEqual((await server.orderEntries(id)).length, 1)

      // Another call gets another reference: two calls are two purchases.
      await client.orders.create({ bundle_id: bundle.id, phoneNumber: "0201234567" })
      const third = orderBody(proxy.seen.filter((s) => s.method === "POST")[2]!)
      assert.notStrictEqual(third.reference, first!.reference)
      assert.strictEqual(await server.mainBalance(id), 100_000n - 2n * bundle.price)
    })

    // Live: the waits between attempts are real sleeps, which the TestClock of it.effect would never end.
    it.live("the Effect face retries a placed order with a reference the same way", () =>
      Effect.gen(function*() {
        const { id, options } = yield* Effect.promise(() => setup())
        const bundle = server.bundle("MTN 1GB")
        proxy.script("POST", "/api/v1/orders", { kind: "drop-after-forward" })
        const placed = yield* Effect.flatMap(
          BundlesClient,
          (client) => client.placeOrder({ bundle_id: bundle.id, phone_number: "0241234567", reference: "fx-1" })
        ).pipe(Effect.provide(BundlesClient.layer({ ...options, retry: { backoff: 10 } })))
        assert.isTrue(placed.replayed)
        assert.strictEqual(placed.order.reference, "fx-1")
        assert.strictEqual(proxy.count("POST", "/api/v1/orders"), 2)
        assert.strictEqual(yield* Effect.promise(() => server.mainBalance(id)), 100_000n - bundle.price)
      }))

    // ---------------------------------------------------------------- timeouts and abort

    it("times out an attempt; a read is retried, an order without a reference is not", async () => {
      const { client, options, id } = await setup({ timeout: 300 })
      proxy.script("GET", "/api/v1/balance", { kind: "delay", ms: 1_000 })
      assert.strictEqual((await client.balance()).main, 100_000n)
      assert.strictEqual(proxy.count("GET", "/api/v1/balance"), 2)

      proxy.script("GET", "/api/v1/balance", { kind: "delay", ms: 1_000 })
      const started = Date.now()
      const single = createClient({ ...options, retry: false })
      const timedOut = await rejection(single.balance())
      assert.instanceOf(timedOut, TimeoutError)
      assert.instanceOf(timedOut, NetworkError)
      assert.isBelow(Date.now() - started, 1_000)

      // A per-call timeout overrides the client's.
      proxy.script("GET", "/api/v1/networks", { kind: "delay", ms: 600 })
      assert.isAbove((await single.networks({ timeout: 5_000 })).length, 0)

      const noReference = createClient({ ...options, autoReference: false })
      proxy.script("POST", "/api/v1/orders", { kind: "delay", ms: 1_000 })
      assert.instanceOf(
        await rejection(
          noReference.orders.create({ bundleId: server.bundle("MTN 1GB").id, phoneNumber: "0241234567" })
        ),
        TimeoutError
      )
      assert.strictEqual(proxy.count("POST", "/api/v1/orders"), 1)
      // The proxy still delivered it: the order exists though the caller saw a timeout.
      let balance = await server.mainBalance(id)
      for (let i = 0; i < 40 && balance === 100_000n; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        balance = await server.mainBalance(id)
      }
      assert.strictEqual(balance, 100_000n - server.bundle("MTN 1GB").price)
    })

    timing("an AbortSignal ends the call at once, during a request or a wait", async () => {
      const { client } = await setup()
      proxy.script("GET", "/api/v1/balance", { kind: "delay", ms: 3_000 })
      let started = Date.now()
      const during = await rejection(client.balance({ signal: AbortSignal.timeout(100) }))
      assert.instanceOf(during, AbortError)
      assert.isBelow(Date.now() - started, 2_500)

      proxy.script("GET", "/api/v1/networks", rateLimited({ "retry-after": "30" }, 30))
      started = Date.now()
      const controller = new AbortController()
      setTimeout(() => controller.abort(new Error("user left")), 200)
      const waiting = await rejection(client.networks({ signal: controller.signal }))
      assert.instanceOf(waiting, AbortError)
      assert.strictEqual(((waiting as AbortError).cause as Error).message, "user left")
      assert.isBelow(Date.now() - started, 5_000)
      assert.strictEqual(proxy.count("GET", "/api/v1/networks"), 1)

      proxy.reset()
      const aborted = new AbortController()
      aborted.abort()
      assert.instanceOf(await rejection(client.bundles(1, { signal: aborted.signal })), AbortError)
      assert.strictEqual(proxy.seen.length, 0)
    })
  })
}
