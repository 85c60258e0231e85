/**
 * Every typed error, through both faces, from the real server: the Effect face fails with
 * the contract's error (its `_tag` and fields), the Promise face throws the matching class.
 * Errors the server cannot be made to send cleanly (500, a gateway's 502, a body off the
 * contract) come from the fault proxy in front of it, in the server's own envelope.
 */
import { ApiError } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  ApiError as ApiErrorClass,
  BadRequestError,
  BundlesClient,
  BundleUnavailableError,
  type ClientOptions,
  createClient,
  InsufficientBalanceError,
  NetworkError,
  NetworkNotFoundError,
  NotFoundError,
  OrderNotFoundError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  UnexpectedResponseError,
  ValidationError
} from "../src/index.js"
import { type FaultProxy, startProxy } from "./FaultProxy.js"
import { rejection } from "./Rejection.js"
import { ADMIN_TOKEN, startServer, type TestServer } from "./Server.js"

/** The error of an Effect-face call; fails the test when it succeeds. */
const effectError = <A, E>(
  options: ClientOptions,
  f: (client: BundlesClient.Service) => Effect.Effect<A, E>
) => Effect.runPromise(Effect.flip(Effect.flatMap(BundlesClient, f)).pipe(Effect.provide(BundlesClient.layer(options))))

for (const target of targets) {
  describe(`typed errors on ${target.name}`, () => {
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

    it("400 insufficient balance: balance and required in pesewas, nothing debited", async () => {
      const { key, id } = await server.account({ funds: 100n })
      const bundle = server.bundle("MTN 1GB")
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      const error = await rejection(client.orders.create({ bundleId: bundle.id, phoneNumber: "0241234567" }))
      assert.instanceOf(error, InsufficientBalanceError)
      expect(error).toMatchObject({ status: 400, code: "insufficient_balance", balance: 100n, required: bundle.price })
      assert.match((error as InsufficientBalanceError).requestId ?? "", /^req_/)

      const effect = await effectError(
        { apiKey: key, baseUrl: server.baseUrl },
        (c) => c.placeOrder({ bundle_id: bundle.id, phone_number: "0241234567" })
      )
      assert.strictEqual(effect._tag, "InsufficientBalance")
      if (effect._tag === "InsufficientBalance") {
        assert.strictEqual(effect.balance, 100n)
        assert.strictEqual(effect.required, bundle.price)
      }
      assert.strictEqual(await server.mainBalance(id), 100n)
    })

    it("400 bundle unavailable: an inactive bundle", async () => {
      const { key } = await server.account({ funds: 100_000n })
      const inactive = server.bundle("Telecel 3GB")
      assert.isFalse(inactive.isActive)
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      const error = await rejection(client.orders.create({ bundle_id: inactive.id, phone_number: "0201234567" }))
      assert.instanceOf(error, BundleUnavailableError)
      expect(error).toMatchObject({ status: 400, code: "bundle_unavailable" })
      const effect = await effectError(
        { apiKey: key, baseUrl: server.baseUrl },
        (c) => c.placeOrder({ bundle_id: inactive.id, phone_number: "0201234567" })
      )
      assert.strictEqual(effect._tag, "BundleUnavailable")
    })

    it("401 unauthorized: an unknown key and a revoked one", async () => {
      const unknown = createClient({ apiKey: "not-a-key", baseUrl: server.baseUrl })
      const error = await rejection(unknown.balance())
      assert.instanceOf(error, UnauthorizedError)
      expect(error).toMatchObject({ status: 401, code: "unauthorized" })

      const { key, id } = await server.account()
      await server.revokeKeys(id)
      assert.instanceOf(
        await rejection(createClient({ apiKey: key, baseUrl: server.baseUrl }).networks()),
        UnauthorizedError
      )
      const effect = await effectError({ apiKey: key, baseUrl: server.baseUrl }, (c) => c.networks())
      assert.strictEqual(effect._tag, "Unauthorized")
      assert.isUndefined(
        (await rejection(unknown.balance()) as UnauthorizedError).reason,
        "a wrong key is not a suspension"
      )
    })

    it("401 for a suspended account carries reason account_suspended, on both faces", async () => {
      const { key, id } = await server.account()
      const suspended = await fetch(`${server.origin}/admin/v1/accounts/${id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ status: "suspended" })
      })
      assert.strictEqual(suspended.status, 200)
      const error = await rejection(createClient({ apiKey: key, baseUrl: server.baseUrl }).balance())
      assert.instanceOf(error, UnauthorizedError)
      expect(error).toMatchObject({ status: 401, code: "unauthorized", reason: "account_suspended" })
      const effect = await effectError({ apiKey: key, baseUrl: server.baseUrl }, (c) => c.balance())
      expect(effect).toMatchObject({ _tag: "Unauthorized", reason: "account_suspended" })
    })

    it("404 network not found, also a NotFoundError", async () => {
      const { key } = await server.account()
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      const error = await rejection(client.bundles(999_999))
      assert.instanceOf(error, NetworkNotFoundError)
      assert.instanceOf(error, NotFoundError)
      expect(error).toMatchObject({ status: 404, code: "network_not_found" })
      const effect = await effectError({ apiKey: key, baseUrl: server.baseUrl }, (c) => c.bundles(999_999))
      assert.strictEqual(effect._tag, "NetworkNotFound")
    })

    it("404 order not found, also for a number that is not one (kept inside its path segment)", async () => {
      const { key } = await server.account()
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      const error = await rejection(client.orders.get("ORD-000000000000"))
      assert.instanceOf(error, OrderNotFoundError)
      assert.instanceOf(error, NotFoundError)
      expect(error).toMatchObject({ status: 404, code: "order_not_found" })
      // Unencoded, "../balance" would reach GET /balance.
      assert.instanceOf(await rejection(client.orders.get("../balance")), NotFoundError)
      const effect = await effectError(
        { apiKey: key, baseUrl: server.baseUrl },
        (c) => c.getOrder("ORD-000000000000")
      )
      assert.strictEqual(effect._tag, "OrderNotFound")
    })

    it("422 from the server: per-field errors under the Promise face's names", async () => {
      const { key } = await server.account({ funds: 100_000n })
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      const unknownBundle = await rejection(client.orders.create({ bundleId: 999_999, phoneNumber: "0241234567" }))
      assert.instanceOf(unknownBundle, ValidationError)
      expect(unknownBundle).toMatchObject({ status: 422, code: "validation_error" })
      assert.deepStrictEqual(Object.keys((unknownBundle as ValidationError).errors), ["bundleId"])
      assert.match((unknownBundle as ValidationError).requestId ?? "", /^req_/)

      const bundle = server.bundle("MTN 1GB")
      await client.orders.create({ bundleId: bundle.id, phoneNumber: "0241234567", reference: "inv-422" })
      const reused = await rejection(
        client.orders.create({ bundleId: bundle.id, phoneNumber: "0551234567", reference: "inv-422" })
      )
      assert.instanceOf(reused, ValidationError)
      assert.deepStrictEqual(Object.keys((reused as ValidationError).errors), ["reference"])

      const effect = await effectError(
        { apiKey: key, baseUrl: server.baseUrl },
        (c) => c.placeOrder({ bundle_id: 999_999, phone_number: "0241234567" })
      )
      assert.strictEqual(effect._tag, "ValidationError")
      if (effect._tag === "ValidationError") assert.deepStrictEqual(Object.keys(effect.errors), ["bundle_id"])
    })

    it("422 from the client's own check against the contract: nothing is sent", async () => {
      const { key } = await server.account({ funds: 100_000n })
      proxy.reset()
      const client = createClient({ apiKey: key, baseUrl: proxy.baseUrl })
      const phone = await rejection(client.orders.create({ bundleId: 1, phoneNumber: "+233 24 123 4567" }))
      assert.instanceOf(phone, ValidationError)
      expect(phone).toMatchObject({ status: 422, requestId: undefined })
      assert.deepStrictEqual(Object.keys((phone as ValidationError).errors), ["phoneNumber"])
      const page = await rejection(client.orders.list({ perPage: 51, status: "lost" as any }))
      assert.instanceOf(page, ValidationError)
      assert.sameMembers(Object.keys((page as ValidationError).errors), ["perPage", "status"])
      assert.instanceOf(await rejection(client.bundles(1.5)), ValidationError)
      assert.instanceOf(await rejection(client.orders.create({ phoneNumber: "0241234567" } as any)), ValidationError)
      assert.strictEqual(proxy.seen.length, 0)
    })

    it("the client's own 422 is worded as the server's for the same input", async () => {
      const { key } = await server.account({ funds: 100_000n })
      const bad = { per_page: 51, status: "lost", reference: "not a reference" }
      const local = await effectError(
        { apiKey: key, baseUrl: server.baseUrl },
        (c) => c.listOrders(bad as any)
      )
      const response = await fetch(`${server.baseUrl}/orders?${new URLSearchParams(bad as any)}`, {
        headers: { "x-api-key": key }
      })
      assert.strictEqual(response.status, 422)
      const served = await response.json()
      assert.strictEqual(local._tag, "ValidationError")
      if (local._tag !== "ValidationError") return
      assert.deepStrictEqual(local.errors, served.errors)
      assert.strictEqual(local.message, served.message)
      assert.match(local.message, /\(and 2 more errors\)$/)
    })

    it("429 with retryAfter when waiting is off, or when the wait would not fit the budget", async () => {
      const { key } = await server.account({ limits: { all: 2 } })
      const options = { apiKey: key, baseUrl: server.baseUrl }
      const client = createClient({ ...options, retry: false })
      await client.networks()
      await client.networks()
      const error = await rejection(client.networks())
      assert.instanceOf(error, RateLimitedError)
      expect(error).toMatchObject({ status: 429, code: "rate_limited" })
      const { retryAfter } = error as RateLimitedError
      assert.isTrue(retryAfter >= 1 && retryAfter <= 61, `retryAfter ${retryAfter}`)

      // Waiting is on by default, but a minute's wait does not fit in 2 s: it fails at once.
      const started = Date.now()
      const bounded = await rejection(createClient({ ...options, retry: { maxWait: 2_000 } }).networks())
      assert.instanceOf(bounded, RateLimitedError)
      assert.isBelow(Date.now() - started, 5_000)

      const effect = await effectError({ ...options, retry: false }, (c) => c.networks())
      assert.strictEqual(effect._tag, "RateLimited")
      if (effect._tag === "RateLimited") assert.isAtLeast(effect.retry_after, 1)
    })

    it("500 in the server's envelope: ServerError with the body's request id", async () => {
      const { key } = await server.account()
      proxy.reset()
      const body = JSON.stringify(
        Schema.encodeSync(ApiError.ServerError)(
          new ApiError.ServerError({ message: "Internal server error", request_id: "req_0123456789abcdef" })
        )
      )
      const fail500 = { kind: "respond", status: 500, headers: { "content-type": "application/json" }, body } as const
      proxy.script("GET", "/api/v1/balance", fail500, fail500)
      const error = await rejection(createClient({ apiKey: key, baseUrl: proxy.baseUrl, retry: false }).balance())
      assert.instanceOf(error, ServerError)
      expect(error).toMatchObject({ status: 500, code: "server_error", requestId: "req_0123456789abcdef" })
      const effect = await effectError({ apiKey: key, baseUrl: proxy.baseUrl, retry: false }, (c) => c.balance())
      assert.strictEqual(effect._tag, "ServerError")
      if (effect._tag === "ServerError") assert.strictEqual(effect.request_id, "req_0123456789abcdef")
    })

    it("the envelope errors a client cannot provoke map to their classes too (400, 404 route, 405, 413)", async () => {
      const { key } = await server.account()
      proxy.reset()
      const cases = [
        [new ApiError.BadRequest({ message: "Malformed JSON" }), 400, BadRequestError],
        [new ApiError.NotFound({ message: "No such route" }), 404, NotFoundError],
        [new ApiError.MethodNotAllowed({ message: "Use GET" }), 405, ApiErrorClass],
        [new ApiError.PayloadTooLarge({ message: "Too big" }), 413, ApiErrorClass]
      ] as const
      proxy.script(
        "GET",
        "/api/v1/balance",
        ...cases.map(([error, status]) => ({
          kind: "respond" as const,
          status,
          headers: { "content-type": "application/json", "x-request-id": `req_${status}` },
          body: JSON.stringify(Schema.encodeUnknownSync(error.constructor as any)(error))
        }))
      )
      const client = createClient({ apiKey: key, baseUrl: proxy.baseUrl, retry: false })
      for (const [error, status, expected] of cases) {
        const thrown = await rejection(client.balance())
        assert.instanceOf(thrown, expected)
        expect(thrown).toMatchObject({
          status,
          code: (error as any).code,
          message: error.message,
          requestId: `req_${status}`
        })
      }
    })

    it("a gateway's HTML 502 is a ServerError with its status; a 200 off the contract is unexpected", async () => {
      const { key } = await server.account()
      proxy.reset()
      proxy.script("GET", "/api/v1/networks", {
        kind: "respond",
        status: 502,
        headers: { "content-type": "text/html" },
        body: "<html>Bad Gateway</html>"
      }, {
        kind: "respond",
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ success: true, networks: [{ id: "one" }] })
      })
      const client = createClient({ apiKey: key, baseUrl: proxy.baseUrl, retry: false })
      const gateway = await rejection(client.networks())
      assert.instanceOf(gateway, ServerError)
      expect(gateway).toMatchObject({ status: 502 })
      const offContract = await rejection(client.networks())
      assert.instanceOf(offContract, UnexpectedResponseError)
    })

    it("no server at all: NetworkError", async () => {
      const client = createClient({ apiKey: "k", baseUrl: "http://127.0.0.1:9/api/v1", retry: false })
      assert.instanceOf(await rejection(client.balance()), NetworkError)
    })

    it.effect("the Effect face's error channel is the contract's errors, by tag", () =>
      Effect.gen(function*() {
        const client = yield* BundlesClient
        const handled = yield* client.balance().pipe(
          Effect.as("no error"),
          Effect.catchTags({
            Unauthorized: (e) => Effect.succeed(`401 ${e.message.length > 0}`),
            RateLimited: (e) => Effect.succeed(`429 ${e.retry_after}`),
            ServerError: (e) => Effect.succeed(`500 ${e.request_id}`)
          })
        )
        assert.strictEqual(handled, "401 true")
      }).pipe(Effect.provide(BundlesClient.layer({ apiKey: "not-a-key", baseUrl: server.baseUrl }))))
  })
}
