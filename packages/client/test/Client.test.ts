/**
 * Both faces against the real server: what each method returns, in which casing and with
 * which types for money and dates; what every request carries (key, Accept, User-Agent);
 * paging through every order; and the ways a base URL may be written.
 */
import { targets } from "@databundle/core/testing"
import { NodeHttpClient } from "@effect/platform-node"
import { afterAll, assert, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Stream } from "effect"
import {
  BundlesClient,
  createClient,
  type CreateOrderInput,
  formatGhs,
  type Order,
  USER_AGENT,
  VERSION
} from "../src/index.js"
import { type FaultProxy, startProxy } from "./FaultProxy.js"
import { startServer, type TestServer } from "./Server.js"

describe("the Promise face's input types", () => {
  it("take camelCase names and the API's snake_case names as aliases, required fields still required", () => {
    const camel: CreateOrderInput = { bundleId: 1, phoneNumber: "0241234567" }
    const snake: CreateOrderInput = { bundle_id: 1, phone_number: "0241234567", reference: "r" }
    const mixed: CreateOrderInput = { bundle_id: 1, phoneNumber: "0241234567" }
    // @ts-expect-error the bundle is required under one name or the other
    const missing: CreateOrderInput = { phoneNumber: "0241234567" }
    assert.lengthOf([camel, snake, mixed, missing], 4)
  })

  it("refuse one field given twice with different values", async () => {
    const client = createClient({ apiKey: "k", baseUrl: "http://127.0.0.1:9" })
    await expect(client.orders.create({ bundleId: 1, bundle_id: 2, phoneNumber: "0241234567" })).rejects.toThrow(
      TypeError
    )
  })
})

for (const target of targets) {
  describe(`both faces on ${target.name}`, () => {
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

    it("balance, networks and bundles in camelCase, money as bigint pesewas", async () => {
      const { key } = await server.account({ funds: 12_345n })
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      assert.deepStrictEqual(await client.balance(), { main: 12_345n, referral: 0n, agent: 0n })
      assert.strictEqual(formatGhs((await client.balance()).main), "GHS 123.45")

      const networks = await client.networks()
      assert.sameMembers(networks.map((n) => n.name), [...server.networks.keys()])
      for (const network of networks) {
        assert.sameMembers(Object.keys(network), ["id", "name", "slug", "color", "delivery", "bundlesCount"])
      }
      const telecel = networks.find((n) => n.name === "Telecel")!
      const bundles = await client.bundles(telecel.id)
      assert.strictEqual(bundles.length, telecel.bundlesCount)
      for (const bundle of bundles) {
        assert.sameMembers(Object.keys(bundle), ["id", "size", "name", "price", "badge", "isActive"])
        assert.strictEqual(typeof bundle.price, "bigint")
        assert.strictEqual(bundle.price, server.bundle(bundle.name).price)
      }
      assert.isTrue(bundles.some((b) => !b.isActive))
    })

    it("orders.create, get and list: camelCase, amounts in pesewas, dates as Date, replays flagged", async () => {
      const { key, id } = await server.account({ funds: 100_000n })
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      const bundle = server.bundle("MTN 1GB")
      const placed = await client.orders.create({
        bundleId: bundle.id,
        phoneNumber: "233241234567",
        reference: "inv-1"
      })
      assert.sameMembers(Object.keys(placed), ["message", "order", "walletBalance", "replayed", "warnings"])
      assert.sameMembers(
        Object.keys(placed.order),
        ["orderNumber", "bundle", "phoneNumber", "amountPaid", "status", "reference", "createdAt"]
      )
      expect(placed).toMatchObject({
        replayed: false,
        walletBalance: 100_000n - bundle.price,
        order: { bundle: "MTN 1GB", phoneNumber: "233241234567", amountPaid: bundle.price, status: "successful" }
      })
      assert.match(placed.order.orderNumber, /^ORD-[0-9A-Z]{12}$/)
      assert.instanceOf(placed.order.createdAt, Date)

      const again = await client.orders.create({
        bundle_id: bundle.id,
        phone_number: "233241234567",
        reference: "inv-1"
      })
      assert.isTrue(again.replayed)
      assert.strictEqual(again.order.orderNumber, placed.order.orderNumber)
      assert.strictEqual(await server.mainBalance(id), 100_000n - bundle.price)

      const shown = await client.orders.get(placed.order.orderNumber)
      expect(shown).toMatchObject({ orderNumber: placed.order.orderNumber, network: "MTN", amountPaid: bundle.price })
      assert.instanceOf(shown.createdAt, Date)

      const page = await client.orders.list({ status: "successful", perPage: 10, phoneNumber: "0241234567" })
      assert.deepStrictEqual(page.pagination, { currentPage: 1, perPage: 10, total: 1, lastPage: 1 })
      assert.strictEqual(page.orders[0]!.reference, "inv-1")
      assert.strictEqual((await client.orders.list({ reference: "nope" })).pagination.total, 0)
    })

    it("generates a reference unless autoReference is off", async () => {
      const { key } = await server.account({ funds: 100_000n })
      const bundle = server.bundle("MTN 1GB")
      const auto = await createClient({ apiKey: key, baseUrl: server.baseUrl }).orders.create({
        bundleId: bundle.id,
        phoneNumber: "0241234567"
      })
      assert.match(auto.order.reference ?? "", /^auto-[0-9a-f]{32}$/)
      const plain = await createClient({ apiKey: key, baseUrl: server.baseUrl, autoReference: false }).orders.create({
        bundleId: bundle.id,
        phoneNumber: "0241234567"
      })
      assert.isNull(plain.order.reference)
    })

    it("pages through every order once: orders.all and orders.pages, and the Effect face's stream", async () => {
      const { key } = await server.account({ funds: 100_000n, limits: { orders: 100, all: 1000 } })
      const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
      const bundle = server.bundle("AirtelTigo iShare 500MB")
      const placed: Array<string> = []
      for (let i = 0; i < 5; i++) {
        placed.push(
          (await client.orders.create({ bundleId: bundle.id, phoneNumber: `026123450${i}` })).order.orderNumber
        )
      }
      const all: Array<Order> = []
      for await (const order of client.orders.all({ perPage: 2 })) {
        all.push(order)
        // An order placed while paging pushes the older ones down a page; none may come twice.
        if (all.length === 1) {
          placed.push(
            (await client.orders.create({ bundleId: bundle.id, phoneNumber: "0261234599" })).order.orderNumber
          )
        }
      }
      assert.strictEqual(new Set(all.map((o) => o.orderNumber)).size, all.length)
      assert.includeMembers(all.map((o) => o.orderNumber), placed.slice(0, 5))

      const pages = []
      for await (const page of client.orders.pages({ perPage: 4 })) pages.push(page.orders.length)
      assert.deepStrictEqual(pages, [4, 2])

      const streamed = await Effect.runPromise(
        Effect.flatMap(BundlesClient, (c) => Stream.runCollect(c.allOrders({ per_page: 4 }))).pipe(
          Effect.provide(BundlesClient.layer({ apiKey: key, baseUrl: server.baseUrl }))
        )
      )
      assert.sameMembers(Chunk.toArray(streamed).map((o) => o.order_number), placed)
    })

    it.effect("the Effect face over an HttpClient that reads a body only once (Node's)", () =>
      Effect.gen(function*() {
        const { key } = yield* Effect.promise(() => server.account({ funds: 1_000n }))
        const balance = yield* Effect.flatMap(BundlesClient, (client) => client.balance()).pipe(
          Effect.provide(
            Layer.effect(BundlesClient, BundlesClient.make({ apiKey: key, baseUrl: server.baseUrl })).pipe(
              Layer.provide(NodeHttpClient.layer)
            )
          ),
          Effect.timeout("10 seconds")
        )
        assert.strictEqual(balance.main, 1_000n)
      }))

    it.effect("the Effect face: the contract's types, and the derived client behind the same policy", () =>
      Effect.gen(function*() {
        const { key, id } = yield* Effect.promise(() => server.account({ funds: 50_000n }))
        const bundle = server.bundle("Telecel 2GB")
        const result = yield* Effect.gen(function*() {
          const client = yield* BundlesClient
          const balance = yield* client.balance()
          const networks = yield* client.networks()
          const bundles = yield* client.bundles(bundle.networkId)
          const placed = yield* client.placeOrder({ bundle_id: bundle.id, phone_number: "0201234567" })
          const shown = yield* client.getOrder(placed.order.order_number)
          const page = yield* client.listOrders({ per_page: 5 })
          const full = yield* client.api.wallet.balance()
          return { balance, networks, bundles, placed, shown, page, full }
        }).pipe(Effect.provide(BundlesClient.layer({ apiKey: key, baseUrl: server.baseUrl })))
        assert.strictEqual(result.balance.main, 50_000n)
        assert.isTrue(result.networks.some((n) => n.bundles_count > 0))
        assert.isTrue(result.bundles.some((b) => b.id === bundle.id))
        assert.strictEqual(result.placed.wallet_balance, 50_000n - bundle.price)
        assert.isFalse(result.placed.replayed)
        assert.strictEqual(result.shown.order_number, result.placed.order.order_number)
        assert.strictEqual(result.page.pagination.total, 1)
        assert.deepStrictEqual(result.full, {
          success: true,
          balance: { main: 50_000n - bundle.price, referral: 0n, agent: 0n }
        })
        assert.strictEqual(yield* Effect.promise(() => server.mainBalance(id)), 50_000n - bundle.price)
      }))

    it.effect("a number's network and an order's warnings, on both faces", () =>
      Effect.gen(function*() {
        const { key } = yield* Effect.promise(() => server.account({ funds: 50_000n }))
        const mtn = server.bundle("MTN 1GB")
        const result = yield* Effect.gen(function*() {
          const client = yield* BundlesClient
          const found = yield* client.phoneNumber("233201234567")
          const none = yield* client.phoneNumber("0281234567")
          const refused = yield* Effect.flip(client.phoneNumber("+233 20 123 4567"))
          const plain = yield* client.placeOrder({ bundle_id: mtn.id, phone_number: "0241234567" })
          const warned = yield* client.placeOrder({ bundle_id: mtn.id, phone_number: "0201234567" })
          return { found, none, refused, plain, warned }
        }).pipe(Effect.provide(BundlesClient.layer({ apiKey: key, baseUrl: server.baseUrl })))
        assert.strictEqual(result.found.network?.slug, "telecel")
        assert.strictEqual(result.found.basis, "prefix")
        assert.isNull(result.none.network)
        assert.strictEqual(result.refused._tag, "ValidationError")
        assert.deepStrictEqual(result.plain.warnings, [])
        assert.deepStrictEqual(result.warned.warnings.map((w) => w.code), ["network_mismatch"])
        const promise = createClient({ apiKey: key, baseUrl: server.baseUrl })
        const looked = yield* Effect.promise(() => promise.phoneNumbers.lookup("0571234567"))
        assert.strictEqual(looked.network?.slug, "airteltigo-ishare")
        const created = yield* Effect.promise(() =>
          promise.orders.create({ bundleId: mtn.id, phoneNumber: "0281234567", reference: "warn-promise-1" })
        )
        assert.deepStrictEqual(created.warnings.map((w) => w.code), ["unknown_prefix"])
      }))

    it("sends the key, Accept and a User-Agent with the client's version on every request", async () => {
      const { key } = await server.account({ funds: 100_000n })
      await createClient({ apiKey: key, baseUrl: proxy.baseUrl }).networks()
      await createClient({ apiKey: key, baseUrl: proxy.baseUrl, userAgent: "my-shop/2.1" }).orders.create({
        bundleId: server.bundle("MTN 1GB").id,
        phoneNumber: "0241234567"
      })
      const [get, post] = proxy.seen
      assert.strictEqual(USER_AGENT, `databundle-client/${VERSION}`)
      expect(get!.headers).toMatchObject({ "x-api-key": key, accept: "application/json", "user-agent": USER_AGENT })
      expect(post!.headers).toMatchObject({
        "x-api-key": key,
        "content-type": "application/json",
        "user-agent": `my-shop/2.1 ${USER_AGENT}`
      })
    })

    it("takes the base URL with or without /api/v1 and a trailing slash", async () => {
      const { key } = await server.account({ funds: 777n })
      for (const baseUrl of [server.origin, `${server.origin}/`, server.baseUrl, `${server.baseUrl}/`]) {
        assert.strictEqual((await createClient({ apiKey: key, baseUrl }).balance()).main, 777n, baseUrl)
      }
      assert.strictEqual((await createClient({ apiKey: key, baseUrl: new URL(server.baseUrl) }).balance()).main, 777n)
    })

    it("uses the fetch it is given", async () => {
      const { key } = await server.account()
      const urls: Array<string> = []
      const client = createClient({
        apiKey: key,
        baseUrl: server.baseUrl,
        fetch: (input, init) => {
          urls.push(String(input))
          return fetch(input, init)
        }
      })
      await client.networks()
      assert.deepStrictEqual(urls, [`${server.baseUrl}/networks`])
    })
  })
}
