/**
 * The public API end to end over real HTTP, against `api-spec.md` and `decisions.md`:
 * response shapes, authentication, the 400 / 404 / 422 rules, orders (placement, replay,
 * concurrency, failure and pending fulfilment) and the order list.
 */
import { ApiError, Bundle, Network, Order, Wallet } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as fs from "node:fs"
import * as Demo from "../src/Demo.js"
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

/** The demo catalogue file, as the operator wrote it. */
interface FileBundle {
  readonly key: string
  readonly size: string
  readonly name: string
  readonly badge: string
  readonly active: boolean
  readonly price: number
  readonly prices: Record<string, number>
}
interface FileNetwork {
  readonly slug: string
  readonly name: string
  readonly color: string
  readonly delivery: string
  readonly active: boolean
  readonly bundles: ReadonlyArray<FileBundle>
}
const demo: { networks: ReadonlyArray<FileNetwork> } = JSON.parse(fs.readFileSync(Demo.catalogPath, "utf8"))
const activeNetworks = demo.networks.filter((n) => n.active)

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/
const ORDER_NUMBER = /^ORD-[0-9A-Z]{12}$/

const ORDER_FIELDS_PLACED = [
  "order_number",
  "bundle",
  "phone_number",
  "amount_paid",
  "status",
  "reference",
  "created_at"
]
const ORDER_FIELDS_STATUS = ["order_number", "bundle", "network", "phone_number", "amount_paid", "status", "created_at"]
const ORDER_FIELDS_LIST = [
  "order_number",
  "bundle",
  "network",
  "phone_number",
  "amount_paid",
  "status",
  "reference",
  "created_at"
]

/** A request to the public API. */
const api = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  key: string | undefined,
  options: Omit<RawOptions, "key"> = {}
) => raw(method, `/api/v1${path}`, { ...options, key })

/** The error envelope: the status, `success: false`, a string message, its code, a request id. */
const expectEnvelope = (res: RawResponse, status: number) => {
  assert.strictEqual(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`)
  assert.isObject(res.json, `body is not a JSON object: ${res.text}`)
  assert.strictEqual(res.json.success, false, res.text)
  assert.isString(res.json.message, res.text)
  assert.isAbove(res.json.message.length, 0)
  assert.isString(res.headers["x-request-id"], "X-Request-Id header")
  assert.isAbove(res.headers["x-request-id"]!.length, 0)
  // Extensions beyond the spec: the error's stable snake_case code, and the request id.
  assert.strictEqual(res.json.code, res.json._tag.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase(), res.text)
  assert.strictEqual(res.json.request_id, res.headers["x-request-id"], res.text)
}

/** A 422 whose `errors` name exactly `fields`, each with at least one string message. */
const expect422 = (res: RawResponse, fields: ReadonlyArray<string>) => {
  expectEnvelope(res, 422)
  assert.isObject(res.json.errors, `errors: ${res.text}`)
  assert.sameMembers(Object.keys(res.json.errors), [...fields], res.text)
  for (const field of fields) {
    const messages = res.json.errors[field]
    assert.isArray(messages, res.text)
    assert.isAbove(messages.length, 0, res.text)
    for (const message of messages) assert.isString(message)
  }
}

const expectOk = (res: RawResponse) => {
  assert.strictEqual(res.status, 200, res.text)
  assert.strictEqual(res.json.success, true, res.text)
}

/** The catalogue, a funded account with its typed client, and the admin client. */
const setup = (main: bigint, options: { priceGroup?: string } = {}) =>
  Effect.gen(function*() {
    const bundles = yield* bundlesByName
    const account = yield* newAccount(main, options)
    const client = yield* resellerClient(account.key)
    const admin = yield* adminClient
    const bundle = (name: string) => {
      const found = bundles.get(name)
      assert.isDefined(found, `bundle ${name} in the catalogue`)
      return found!
    }
    const balances = Effect.map(
      admin.accounts.show({ path: { account_id: account.id } }),
      (detail) => detail.balance
    )
    const ledger = Effect.map(
      admin.wallets.ledger({ path: { account_id: account.id }, urlParams: { page: 1, per_page: 100 } }),
      (page) => page.entries
    )
    /** GET /orders through the typed client (which needs every defaulted parameter). */
    const list = (params: Omit<Parameters<typeof client.orders.list>[0]["urlParams"], "page" | "per_page"> & {
      page?: number
      per_page?: number
    } = {}) => client.orders.list({ urlParams: { page: 1, per_page: 50, ...params } })
    /** POST /orders with a JSON body. */
    const order = (body: unknown) => api("POST", "/orders", account.key, { body })
    return { ...account, client, admin, bundle, balances, ledger, list, order }
  })

/** Lets every order test place plenty of orders without meeting the rate limiter. */
const raiseLimits = (accountId: Effect.Effect.Success<ReturnType<typeof newAccount>>["id"]) =>
  Effect.flatMap(
    adminClient,
    (admin) =>
      admin.accounts.update({ path: { account_id: accountId }, payload: { limits: { orders: 1000, all: 1000 } } })
  )

const quiet = <A, E, R>(self: Layer.Layer<A, E, R>) =>
  self.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

for (const target of targets) {
  describe(`reseller API on ${target.name}`, () => {
    layer(quiet(serverLayer(target)), { timeout: 60_000, excludeTestServices: true })((it) => {
      // ---------------------------------------------------------------- 200 shapes

      it.effect("GET /balance: the three wallets as numbers in cedis", () =>
        Effect.gen(function*() {
          const t = yield* setup(12_345n)
          yield* t.admin.wallets.fund({
            headers: {},
            path: { account_id: t.id },
            payload: { amount: 250n, wallet: "referral" }
          })
          const res = yield* api("GET", "/balance", t.key)
          assert.strictEqual(res.status, 200)
          assert.match(res.headers["content-type"] ?? "", /^application\/json/)
          assert.deepStrictEqual(res.json, { success: true, balance: { main: 123.45, referral: 2.5, agent: 0 } })
          const typed = yield* t.client.wallet.balance()
          assert.deepStrictEqual(typed.balance, { main: 12_345n, referral: 250n, agent: 0n })
        }))

      it.effect("GET /networks: only active networks, exact fields, bundles_count = length of the bundle list", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          const res = yield* api("GET", "/networks", t.key)
          expectOk(res)
          assert.sameMembers(Object.keys(res.json), ["success", "networks"])
          const networks: Array<any> = res.json.networks
          assert.deepStrictEqual(
            networks.map(({ id: _id, ...rest }) => rest),
            activeNetworks.map((n) => ({
              name: n.name,
              slug: n.slug,
              color: n.color,
              delivery: n.delivery,
              bundles_count: n.bundles.length
            }))
          )
          assert.notInclude(networks.map((n) => n.slug), "glo")
          for (const network of networks) {
            assert.sameMembers(Object.keys(network), ["id", "name", "slug", "color", "delivery", "bundles_count"])
            assert.isTrue(Number.isInteger(network.id) && network.id > 0)
            assert.match(network.color, /^#[0-9A-Fa-f]{6}$/)
            assert.match(network.slug, /^[a-z0-9-]+$/)
            const bundles = yield* api("GET", `/networks/${network.id}/bundles`, t.key)
            expectOk(bundles)
            assert.strictEqual(bundles.json.bundles.length, network.bundles_count, network.name)
          }
          assert.strictEqual(new Set(networks.map((n) => n.id)).size, networks.length)
        }))

      it.effect("GET /networks/{id}/bundles: the operator's order, inactive bundles included, base prices", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          const { networks } = yield* t.client.catalog.networks()
          for (const [i, file] of activeNetworks.entries()) {
            const res = yield* api("GET", `/networks/${networks[i]!.id}/bundles`, t.key)
            expectOk(res)
            assert.sameMembers(Object.keys(res.json), ["success", "network", "bundles"])
            assert.strictEqual(res.json.network, file.name)
            for (const bundle of res.json.bundles) {
              assert.sameMembers(Object.keys(bundle), ["id", "size", "name", "price", "badge", "is_active"])
              assert.isTrue(Number.isInteger(bundle.id) && bundle.id > 0)
            }
            assert.deepStrictEqual(
              res.json.bundles.map(({ id: _id, ...rest }: any) => rest),
              file.bundles.map((b) => ({
                size: b.size,
                name: b.name,
                price: b.price,
                badge: b.badge,
                is_active: b.active
              }))
            )
          }
          // The demo catalogue's inactive MTN 4GB is listed, marked inactive.
          const mtn = yield* t.client.catalog.bundles({ path: { network_id: networks[0]!.id } })
          assert.strictEqual(mtn.bundles.find((b) => b.name === "MTN 4GB")?.is_active, false)
        }))

      it.effect("prices per price group: agent prices for the agent group, base price where the group has none", () =>
        Effect.gen(function*() {
          const agent = yield* setup(10_000n, { priceGroup: "agent" })
          const retail = yield* setup(0n, { priceGroup: "retail" })
          const { networks } = yield* agent.client.catalog.networks()
          for (const [i, file] of activeNetworks.entries()) {
            const asAgent = yield* api("GET", `/networks/${networks[i]!.id}/bundles`, agent.key)
            assert.deepStrictEqual(
              asAgent.json.bundles.map((b: any) => [b.name, b.price]),
              file.bundles.map((b) => [b.name, b.prices.agent ?? b.price])
            )
            const asRetail = yield* api("GET", `/networks/${networks[i]!.id}/bundles`, retail.key)
            assert.deepStrictEqual(
              asRetail.json.bundles.map((b: any) => [b.name, b.price]),
              file.bundles.map((b) => [b.name, b.price])
            )
          }
          // The agent pays the agent price: MTN 1GB at 5.20.
          const placed = yield* agent.order({ bundle_id: agent.bundle("MTN 1GB").id, phone_number: "0241234567" })
          expectOk(placed)
          assert.strictEqual(placed.json.order.amount_paid, 5.2)
          assert.strictEqual(placed.json.wallet_balance, 94.8)
          assert.strictEqual((yield* agent.balances).main, 9_480n)
        }))

      it.effect("POST /orders: 200 body with exact fields, wallet_balance = main balance after", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const before = Date.now()
          const res = yield* t.order({
            bundle_id: t.bundle("MTN 1GB").id,
            phone_number: "0241234567",
            reference: "shape-1"
          })
          expectOk(res)
          assert.sameMembers(Object.keys(res.json), ["success", "message", "order", "wallet_balance"])
          assert.isString(res.json.message)
          const order = res.json.order
          assert.sameMembers(Object.keys(order), ORDER_FIELDS_PLACED)
          assert.match(order.order_number, ORDER_NUMBER)
          assert.strictEqual(order.bundle, "MTN 1GB")
          assert.strictEqual(order.phone_number, "0241234567")
          assert.strictEqual(order.amount_paid, 5.5)
          assert.strictEqual(order.status, "successful")
          assert.strictEqual(order.reference, "shape-1")
          assert.match(order.created_at, ISO_UTC)
          const created = Date.parse(order.created_at)
          assert.isAtLeast(created, before - 5_000)
          assert.isAtMost(created, Date.now() + 5_000)
          assert.strictEqual(res.json.wallet_balance, 94.5)
          assert.isUndefined(res.headers["idempotent-replayed"])
          const balance = yield* api("GET", "/balance", t.key)
          assert.strictEqual(balance.json.balance.main, 94.5)

          // The other accepted form is returned as sent; without a reference the order still places.
          const other = yield* t.order({ bundle_id: t.bundle("Telecel 2GB").id, phone_number: "233201234567" })
          expectOk(other)
          assert.strictEqual(other.json.order.phone_number, "233201234567")
          assert.strictEqual(other.json.order.bundle, "Telecel 2GB")
          assert.strictEqual(other.json.order.amount_paid, 9.5)
          assert.strictEqual(other.json.wallet_balance, 85)
          assert.notStrictEqual(other.json.order.order_number, order.order_number)
          assert.strictEqual((yield* t.balances).main, 8_500n)

          // The typed client decodes the same body.
          const typed = yield* t.client.orders.place({
            payload: { bundle_id: t.bundle("AirtelTigo iShare 500MB").id, phone_number: "0261234567" }
          })
          assert.strictEqual(typed.order.amount_paid, 250n)
          assert.strictEqual(typed.wallet_balance, 8_250n)
          assert.strictEqual(typed.order.status, "successful")
        }))

      it.effect("GET /orders/{order_number}: 200 body with exact fields, network included", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const placed = yield* t.order({ bundle_id: t.bundle("Telecel 5GB").id, phone_number: "233501234567" })
          expectOk(placed)
          const res = yield* api("GET", `/orders/${placed.json.order.order_number}`, t.key)
          expectOk(res)
          assert.sameMembers(Object.keys(res.json), ["success", "order"])
          assert.sameMembers(Object.keys(res.json.order), ORDER_FIELDS_STATUS)
          assert.deepStrictEqual(res.json.order, {
            order_number: placed.json.order.order_number,
            bundle: "Telecel 5GB",
            network: "Telecel",
            phone_number: "233501234567",
            amount_paid: 22.5,
            status: "successful",
            created_at: placed.json.order.created_at
          })
          const typed = yield* t.client.orders.get({ path: { order_number: placed.json.order.order_number } })
          assert.strictEqual(typed.order.network, "Telecel")
          assert.strictEqual(typed.order.amount_paid, 2_250n)
        }))

      // ---------------------------------------------------------------- 401

      it.effect("401: a missing or empty key, on every endpoint", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const anonymous = yield* resellerClient()
          const error = yield* Effect.flip(anonymous.wallet.balance())
          assert.instanceOf(error, ApiError.Unauthorized)
          const requests: Array<[method: "GET" | "POST", path: string]> = [
            ["GET", "/balance"],
            ["GET", "/networks"],
            ["GET", `/networks/${t.bundle("MTN 1GB").network_id}/bundles`],
            ["POST", "/orders"],
            ["GET", "/orders"],
            ["GET", "/orders/ORD-000000000000"]
          ]
          for (const [method, path] of requests) {
            const body = method === "POST"
              ? { bundle_id: t.bundle("MTN 1GB").id, phone_number: "0241234567" }
              : undefined
            expectEnvelope(yield* api(method, path, undefined, { body }), 401)
          }
          expectEnvelope(yield* api("GET", "/balance", ""), 401)
          assert.strictEqual((yield* t.balances).main, 10_000n)
        }))

      it.effect("401: an unknown key", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const lookalike = `dbk_${"A".repeat(40)}`
          for (const key of [lookalike, "not-a-key", t.key.slice(0, -1) + (t.key.endsWith("a") ? "b" : "a")]) {
            expectEnvelope(yield* api("GET", "/balance", key), 401)
            const client = yield* resellerClient(key)
            assert.instanceOf(yield* Effect.flip(client.catalog.networks()), ApiError.Unauthorized)
          }
          const res = yield* t.order({ bundle_id: t.bundle("MTN 1GB").id, phone_number: "0241234567" })
          expectOk(res)
        }))

      it.effect("401: a revoked key is refused at once; the account's other key still works", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const second = yield* t.admin.apiKeys.create({ path: { account_id: t.id }, urlParams: {} })
          // Use the key first so its authentication is cached.
          yield* t.client.wallet.balance()
          yield* t.admin.apiKeys.revoke({ path: { account_id: t.id, key_id: t.keyId } })
          assert.instanceOf(yield* Effect.flip(t.client.wallet.balance()), ApiError.Unauthorized)
          expectEnvelope(
            yield* t.order({ bundle_id: t.bundle("MTN 1GB").id, phone_number: "0241234567" }),
            401
          )
          const other = yield* resellerClient(second.api_key)
          assert.strictEqual((yield* other.wallet.balance()).balance.main, 10_000n)
        }))

      it.effect("401: a suspended account, until it is reactivated", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          yield* t.client.wallet.balance()
          yield* t.admin.accounts.update({ path: { account_id: t.id }, payload: { status: "suspended" } })
          assert.instanceOf(yield* Effect.flip(t.client.wallet.balance()), ApiError.Unauthorized)
          assert.instanceOf(yield* Effect.flip(t.client.catalog.networks()), ApiError.Unauthorized)
          expectEnvelope(yield* t.order({ bundle_id: t.bundle("MTN 1GB").id, phone_number: "0241234567" }), 401)
          assert.strictEqual((yield* t.balances).main, 10_000n)
          yield* t.admin.accounts.update({ path: { account_id: t.id }, payload: { status: "active" } })
          assert.strictEqual((yield* t.client.wallet.balance()).balance.main, 10_000n)
        }))

      it.effect("401 beats 422: a bad key with an invalid body or query is a 401", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const bad = `dbk_${"B".repeat(40)}`
          expectEnvelope(yield* api("POST", "/orders", bad, { body: { bundle_id: "x", phone_number: "1" } }), 401)
          expectEnvelope(yield* api("POST", "/orders", undefined, { body: {} }), 401)
          expectEnvelope(yield* api("GET", "/orders?page=0&status=bogus", bad), 401)
          const second = yield* t.admin.apiKeys.create({ path: { account_id: t.id }, urlParams: {} })
          yield* t.admin.apiKeys.revoke({ path: { account_id: t.id, key_id: second.id } })
          expectEnvelope(
            yield* api("POST", "/orders", second.api_key, { body: { bundle_id: 1, phone_number: "+233241234567" } }),
            401
          )
        }))

      // ---------------------------------------------------------------- 400

      it.effect("400: ordering an inactive bundle; nothing is debited", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const inactive = t.bundle("MTN 4GB")
          assert.isFalse(inactive.is_active)
          const error = yield* Effect.flip(t.client.orders.place({
            payload: { bundle_id: inactive.id, phone_number: "0241234567" }
          }))
          assert.instanceOf(error, Bundle.BundleUnavailable)
          const res = yield* t.order({ bundle_id: inactive.id, phone_number: "0241234567", reference: "inactive-1" })
          expectEnvelope(res, 400)
          assert.strictEqual((yield* t.balances).main, 10_000n)
          const list = yield* t.list({})
          assert.strictEqual(list.pagination.total, 0)
        }))

      it.effect("400: insufficient balance, with balance and required in cedis; nothing changes", () =>
        Effect.gen(function*() {
          const t = yield* setup(500n)
          const mtn1 = t.bundle("MTN 1GB")
          const error = yield* Effect.flip(t.client.orders.place({
            payload: { bundle_id: mtn1.id, phone_number: "0241234567" }
          }))
          assert.instanceOf(error, Wallet.InsufficientBalance)
          assert.strictEqual((error as Wallet.InsufficientBalance).balance, 500n)
          assert.strictEqual((error as Wallet.InsufficientBalance).required, 550n)
          const res = yield* t.order({ bundle_id: mtn1.id, phone_number: "0241234567", reference: "poor-1" })
          expectEnvelope(res, 400)
          assert.strictEqual(res.json.balance, 5)
          assert.strictEqual(res.json.required, 5.5)
          assert.strictEqual((yield* t.balances).main, 500n)
          assert.deepStrictEqual((yield* t.ledger).map((e) => e.reason), ["funding"])
          assert.strictEqual((yield* t.list({})).pagination.total, 0)
          // The reference was not used up by the refused order.
          yield* t.admin.wallets.fund({
            headers: {},
            path: { account_id: t.id },
            payload: { amount: 50n, wallet: "main" }
          })
          const paid = yield* t.order({ bundle_id: mtn1.id, phone_number: "0241234567", reference: "poor-1" })
          expectOk(paid)
          assert.isUndefined(paid.headers["idempotent-replayed"])
          assert.strictEqual(paid.json.wallet_balance, 0)
          const broke = yield* t.order({ bundle_id: mtn1.id, phone_number: "0241234567" })
          expectEnvelope(broke, 400)
          assert.strictEqual(broke.json.balance, 0)
          assert.strictEqual(broke.json.required, 5.5)
        }))

      // ---------------------------------------------------------------- 404

      it.effect("404: unknown and non-integer network ids", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          const error = yield* Effect.flip(
            t.client.catalog.bundles({ path: { network_id: 999_999 as Network.NetworkId } })
          )
          assert.instanceOf(error, Network.NetworkNotFound)
          const ids = ["999999", "abc", "1.5", "0", "-1", "1abc", "99999999999999999999", "9".repeat(150)]
          const statuses: Array<[string, number]> = []
          for (const id of ids) statuses.push([id, (yield* api("GET", `/networks/${id}/bundles`, t.key)).status])
          assert.deepStrictEqual(statuses, ids.map((id) => [id, 404]))
          for (const id of ids) expectEnvelope(yield* api("GET", `/networks/${id}/bundles`, t.key), 404)
        }))

      it.effect("404: an inactive network is not listed and its id is not found; its bundles cannot be ordered", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const original = yield* t.admin.catalogFile.export()
          const file = { price_groups: original.price_groups, networks: original.networks }
          assert.isFalse(file.networks.find((n) => n.slug === "glo")!.active)
          // Learn Glo's id and its bundles' ids by activating it for a moment.
          const glo = yield* Effect.gen(function*() {
            yield* t.admin.catalogFile.import({
              payload: { ...file, networks: file.networks.map((n) => n.slug === "glo" ? { ...n, active: true } : n) }
            })
            const { networks } = yield* t.client.catalog.networks()
            const network = networks.find((n) => n.slug === "glo")
            assert.isDefined(network, "Glo is listed while active")
            const { bundles } = yield* t.client.catalog.bundles({ path: { network_id: network!.id } })
            return { id: network!.id, bundles }
          }).pipe(Effect.ensuring(Effect.orDie(t.admin.catalogFile.import({ payload: file }))))

          const networks = yield* api("GET", "/networks", t.key)
          assert.notInclude(networks.json.networks.map((n: any) => n.name), "Glo")
          const res = yield* api("GET", `/networks/${glo.id}/bundles`, t.key)
          expectEnvelope(res, 404)
          assert.instanceOf(
            yield* Effect.flip(t.client.catalog.bundles({ path: { network_id: glo.id } })),
            Network.NetworkNotFound
          )
          // An active bundle of an inactive network cannot be bought.
          assert.isTrue(glo.bundles[0]!.is_active)
          const order = yield* t.order({ bundle_id: glo.bundles[0]!.id, phone_number: "0231234567" })
          expectEnvelope(order, 400)
          assert.strictEqual((yield* t.balances).main, 10_000n)
        }))

      it.effect("404: an unknown order number, and another account's order, alike", () =>
        Effect.gen(function*() {
          const owner = yield* setup(10_000n)
          const stranger = yield* setup(10_000n)
          const placed = yield* owner.order({ bundle_id: owner.bundle("MTN 1GB").id, phone_number: "0241234567" })
          expectOk(placed)
          const number = placed.json.order.order_number
          const error = yield* Effect.flip(stranger.client.orders.get({ path: { order_number: number } }))
          assert.instanceOf(error, Order.OrderNotFound)
          const theirs = yield* api("GET", `/orders/${number}`, stranger.key)
          expectEnvelope(theirs, 404)
          const unknown = yield* api("GET", "/orders/ORD-000000000000", stranger.key)
          expectEnvelope(unknown, 404)
          assert.strictEqual(theirs.json._tag, unknown.json._tag)
          assert.instanceOf(
            yield* Effect.flip(stranger.client.orders.get({ path: { order_number: "ORD-000000000000" } })),
            Order.OrderNotFound
          )
          // Nor does another account's list show it.
          assert.strictEqual((yield* stranger.list({})).pagination.total, 0)
          expectOk(yield* api("GET", `/orders/${number}`, owner.key))
          // Order numbers of other shapes, however long, are not found either.
          const odd = ["nope", number.toLowerCase(), `${number}X`, `ORD-${"A".repeat(120)}`, `ORD-${"A".repeat(500)}`]
          const statuses: Array<[string, number]> = []
          for (const n of odd) statuses.push([n, (yield* api("GET", `/orders/${n}`, owner.key)).status])
          assert.deepStrictEqual(statuses, odd.map((n) => [n, 404]))
        }))

      // ---------------------------------------------------------------- 422

      it.effect("422: missing, wrongly typed and unknown fields of POST /orders, with errors per field", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          yield* raiseLimits(t.id)
          const id = t.bundle("MTN 1GB").id
          const phone = "0241234567"
          const cases: Array<[body: unknown, fields: Array<string>]> = [
            [{ phone_number: phone }, ["bundle_id"]],
            [{ bundle_id: id }, ["phone_number"]],
            [{ bundle_id: String(id), phone_number: phone }, ["bundle_id"]],
            [{ bundle_id: id + 0.5, phone_number: phone }, ["bundle_id"]],
            [{ bundle_id: 0, phone_number: phone }, ["bundle_id"]],
            [{ bundle_id: -1, phone_number: phone }, ["bundle_id"]],
            [{ bundle_id: null, phone_number: phone }, ["bundle_id"]],
            [{ bundle_id: 9_999_999, phone_number: phone }, ["bundle_id"]],
            [{ bundle_id: id, phone_number: 241234567 }, ["phone_number"]],
            [{ bundle_id: id, phone_number: phone, reference: 12 }, ["reference"]]
          ]
          const observed: Array<[string, number, Array<string>]> = []
          for (const [body] of cases) {
            const res = yield* t.order(body)
            observed.push([JSON.stringify(body), res.status, Object.keys(res.json?.errors ?? {}).sort()])
          }
          assert.deepStrictEqual(observed, cases.map(([body, fields]) => [JSON.stringify(body), 422, fields]))
          for (const [body, fields] of cases) {
            expect422(yield* t.order(body), fields)
          }
          // Well-formed JSON that is not an object.
          for (const body of ["[]", "\"text\"", "5", "null"]) {
            expectEnvelope(yield* t.order(body), 422)
          }
          assert.strictEqual((yield* t.balances).main, 10_000n)
          assert.strictEqual((yield* t.list({})).pagination.total, 0)
        }))

      it.effect("422: every invalid field of one request is named in `errors`", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          expect422(yield* t.order({}), ["bundle_id", "phone_number"])
          expect422(
            yield* t.order({ bundle_id: "x", phone_number: "1", reference: "not valid" }),
            ["bundle_id", "phone_number", "reference"]
          )
          expect422(yield* api("GET", "/orders?page=0&per_page=51", t.key), ["page", "per_page"])
          assert.strictEqual((yield* t.balances).main, 10_000n)
        }))

      it.effect("422: phone numbers other than 0 + 9 digits or 233 + 9 digits", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          yield* raiseLimits(t.id)
          const id = t.bundle("MTN 1GB").id
          for (const phone of ["0241234567", "233241234567"]) {
            const res = yield* t.order({ bundle_id: id, phone_number: phone })
            expectOk(res)
            assert.strictEqual(res.json.order.phone_number, phone)
          }
          const refused = [
            "+233241234567",
            "024123456",
            "02412345678",
            "2330241234567",
            "23324123456",
            "2332412345678",
            "024123456a",
            "abcdefghij",
            "1241234567",
            "0 241234567",
            " 0241234567",
            ""
          ]
          for (const phone of refused) {
            expect422(yield* t.order({ bundle_id: id, phone_number: phone }), ["phone_number"])
          }
          assert.strictEqual((yield* t.balances).main, 10_000n - 2n * 550n)
          assert.strictEqual((yield* t.list({})).pagination.total, 2)
        }))

      it.effect("422: reference rules (1 to 64 of A-Z a-z 0-9 _ . : -)", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          yield* raiseLimits(t.id)
          const id = t.bundle("AirtelTigo iShare 500MB").id
          for (const reference of ["r".repeat(64), "Az09_.:-", "x"]) {
            const res = yield* t.order({ bundle_id: id, phone_number: "0241234567", reference })
            expectOk(res)
            assert.strictEqual(res.json.order.reference, reference)
          }
          for (const reference of ["r".repeat(65), "", "has space", "ref/1", "réf", "tab\t", "a+b", "x\n"]) {
            expect422(yield* t.order({ bundle_id: id, phone_number: "0241234567", reference }), ["reference"])
          }
          assert.strictEqual((yield* t.balances).main, 10_000n - 3n * 250n)
        }))

      it.effect("422: a reference reused with another bundle or phone number; nothing is debited", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const first = yield* t.order({
            bundle_id: t.bundle("MTN 1GB").id,
            phone_number: "0241234567",
            reference: "r-1"
          })
          expectOk(first)
          expect422(
            yield* t.order({ bundle_id: t.bundle("MTN 2GB").id, phone_number: "0241234567", reference: "r-1" }),
            ["reference"]
          )
          expect422(
            yield* t.order({ bundle_id: t.bundle("MTN 1GB").id, phone_number: "0247654321", reference: "r-1" }),
            ["reference"]
          )
          assert.strictEqual((yield* t.balances).main, 9_450n)
          const list = yield* t.list({ reference: "r-1" })
          assert.strictEqual(list.pagination.total, 1)
          // References are per account: another account may use the same one.
          const other = yield* setup(10_000n)
          expectOk(
            yield* other.order({ bundle_id: other.bundle("MTN 2GB").id, phone_number: "0200000001", reference: "r-1" })
          )
        }))

      it.effect("422: bad query parameters of GET /orders", () =>
        Effect.gen(function*() {
          const t = yield* setup(0n)
          const cases: Array<[query: string, field: string]> = [
            ["page=0", "page"],
            ["page=-1", "page"],
            ["page=abc", "page"],
            ["page=1.5", "page"],
            ["per_page=0", "per_page"],
            ["per_page=51", "per_page"],
            ["per_page=x", "per_page"],
            ["status=bogus", "status"],
            ["status=SUCCESSFUL", "status"],
            ["from=yesterday", "from"],
            ["from=2026-13-01", "from"],
            ["to=2026-02-30", "to"],
            ["from=1700000000", "from"],
            ["phone_number=12345", "phone_number"],
            ["reference=a%20b", "reference"]
          ]
          const observed: Array<[string, number, Array<string>]> = []
          for (const [query] of cases) {
            const res = yield* api("GET", `/orders?${query}`, t.key)
            observed.push([query, res.status, Object.keys(res.json?.errors ?? {})])
          }
          assert.deepStrictEqual(observed, cases.map(([query, field]) => [query, 422, [field]]))
          for (const [query, field] of cases) {
            expect422(yield* api("GET", `/orders?${query}`, t.key), [field])
          }
          // The edges are accepted.
          for (const query of ["page=1", "per_page=1", "per_page=50", "status=pending", "from=2026-01-01"]) {
            expectOk(yield* api("GET", `/orders?${query}`, t.key))
          }
        }))

      // ---------------------------------------------------------------- idempotency

      it.effect("replay: same reference, bundle and phone returns the original order, debits once", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const body = { bundle_id: t.bundle("MTN 1GB").id, phone_number: "0241234567", reference: "replay-1" }
          const first = yield* t.order(body)
          expectOk(first)
          assert.isUndefined(first.headers["idempotent-replayed"])
          const second = yield* t.order(body)
          expectOk(second)
          assert.strictEqual(second.headers["idempotent-replayed"], "true")
          assert.deepStrictEqual(second.json.order, first.json.order)
          assert.strictEqual(second.json.wallet_balance, 94.5)
          const typed = yield* t.client.orders.place({ payload: body })
          assert.strictEqual(typed.order.order_number, first.json.order.order_number)
          assert.strictEqual((yield* t.balances).main, 9_450n)
          assert.deepStrictEqual((yield* t.ledger).map((e) => e.reason), ["order", "funding"])
          assert.strictEqual((yield* t.list({})).pagination.total, 1)
        }))

      it.effect("replay: a replayed failed order neither debits nor refunds again", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const body = { bundle_id: t.bundle("MTN 1GB").id, phone_number: "0240000000", reference: "replay-failed" }
          const first = yield* t.order(body)
          expectOk(first)
          assert.strictEqual(first.json.order.status, "failed")
          const second = yield* t.order(body)
          expectOk(second)
          assert.strictEqual(second.headers["idempotent-replayed"], "true")
          assert.strictEqual(second.json.order.order_number, first.json.order.order_number)
          assert.strictEqual(second.json.order.status, "failed")
          assert.strictEqual(second.json.wallet_balance, 100)
          assert.strictEqual((yield* t.balances).main, 10_000n)
          assert.sameMembers((yield* t.ledger).map((e) => e.reason), ["funding", "order", "refund"])
        }))

      it.effect("replay: 8 concurrent duplicates create exactly one order and all get it with 200", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const body = { bundle_id: t.bundle("MTN 1GB").id, phone_number: "0241234567", reference: "race-1" }
          const responses = yield* Effect.all(Array.from({ length: 8 }, () => t.order(body)), {
            concurrency: "unbounded"
          })
          for (const res of responses) expectOk(res)
          const numbers = new Set(responses.map((r) => r.json.order.order_number))
          assert.strictEqual(numbers.size, 1)
          assert.strictEqual(responses.filter((r) => r.headers["idempotent-replayed"] === "true").length, 7)
          assert.strictEqual((yield* t.balances).main, 9_450n)
          assert.strictEqual((yield* t.list({})).pagination.total, 1)
          assert.deepStrictEqual((yield* t.ledger).map((e) => e.reason), ["order", "funding"])
        }))

      // ---------------------------------------------------------------- concurrency

      it.effect("concurrency: 10 orders on a wallet that pays for 5 → exactly 5 × 200, 5 × 400, exact balance", () =>
        Effect.gen(function*() {
          const t = yield* setup(5n * 550n + 123n)
          yield* raiseLimits(t.id)
          const id = t.bundle("MTN 1GB").id
          const responses = yield* Effect.all(
            Array.from({ length: 10 }, (_, i) => t.order({ bundle_id: id, phone_number: `024${i}123456` })),
            { concurrency: "unbounded" }
          )
          const ok = responses.filter((r) => r.status === 200)
          const refused = responses.filter((r) => r.status === 400)
          assert.strictEqual(ok.length, 5, responses.map((r) => r.status).join(","))
          assert.strictEqual(refused.length, 5, responses.map((r) => r.status).join(","))
          for (const res of refused) {
            expectEnvelope(res, 400)
            assert.strictEqual(res.json.required, 5.5)
            assert.isNumber(res.json.balance)
            assert.isBelow(res.json.balance, 5.5)
          }
          assert.sameMembers(ok.map((r) => r.json.wallet_balance), [23.23, 17.73, 12.23, 6.73, 1.23])
          assert.strictEqual((yield* t.balances).main, 123n)
          assert.strictEqual((yield* t.list({})).pagination.total, 5)
          const reasons = (yield* t.ledger).map((e) => e.reason)
          assert.strictEqual(reasons.filter((r) => r === "order").length, 5)
          assert.isTrue((yield* t.admin.wallets.audit()).ok)
        }))

      // ---------------------------------------------------------------- fulfilment

      it.effect("a simulated failure (…0000): 200 failed, refunded exactly once, audit ok", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const res = yield* t.order({ bundle_id: t.bundle("MTN 1GB").id, phone_number: "0240000000" })
          expectOk(res)
          assert.strictEqual(res.json.order.status, "failed")
          assert.strictEqual(res.json.order.amount_paid, 5.5)
          assert.strictEqual(res.json.wallet_balance, 100)
          const number = res.json.order.order_number
          assert.strictEqual((yield* t.client.orders.get({ path: { order_number: number } })).order.status, "failed")
          // Let the worker poll a few times: it must not touch a settled order.
          yield* Effect.sleep("700 millis")
          assert.strictEqual((yield* t.balances).main, 10_000n)
          const entries = yield* t.ledger
          const refunds = entries.filter((e) => e.reason === "refund")
          assert.strictEqual(refunds.length, 1)
          assert.strictEqual(refunds[0]!.amount, 550n)
          assert.strictEqual(refunds[0]!.order_number, number)
          assert.strictEqual(refunds[0]!.balance_after, 10_000n)
          const debit = entries.filter((e) => e.reason === "order")
          assert.strictEqual(debit.length, 1)
          assert.strictEqual(debit[0]!.amount, -550n)
          const audit = yield* t.admin.wallets.audit()
          assert.isTrue(audit.ok)
          assert.deepStrictEqual(audit.mismatches, [])
          assert.strictEqual(audit.failed_orders_without_refund, 0)
          assert.strictEqual(audit.refunds_without_failed_order, 0)
          const failed = yield* t.list({ status: "failed" })
          assert.deepStrictEqual(failed.orders.map((o) => o.order_number), [number])
        }))

      it.effect("a pending order (…9999) is debited, then becomes successful through the worker", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const res = yield* t.order({ bundle_id: t.bundle("MTN 1GB").id, phone_number: "0249999999" })
          expectOk(res)
          assert.strictEqual(res.json.order.status, "pending")
          assert.strictEqual(res.json.wallet_balance, 94.5)
          const number = res.json.order.order_number
          const pending = yield* t.list({ status: "pending" })
          assert.deepStrictEqual(pending.orders.map((o) => o.order_number), [number])
          let status = "pending"
          const deadline = Date.now() + 5_000
          while (status === "pending" && Date.now() < deadline) {
            yield* Effect.sleep("100 millis")
            status = (yield* t.client.orders.get({ path: { order_number: number } })).order.status
          }
          assert.strictEqual(status, "successful")
          assert.strictEqual((yield* t.balances).main, 9_450n)
          assert.deepStrictEqual((yield* t.ledger).map((e) => e.reason), ["order", "funding"])
          const successful = yield* t.list({ status: "successful" })
          assert.deepStrictEqual(successful.orders.map((o) => o.order_number), [number])
        }))

      // ---------------------------------------------------------------- lists

      it.effect("GET /orders: newest first, exact item fields, pagination metadata, page past the end", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const placed: Array<any> = []
          for (const [i, phone] of ["0241111111", "233241111111", "0242222222"].entries()) {
            const res = yield* t.order({
              bundle_id: t.bundle("MTN 1GB").id,
              phone_number: phone,
              reference: `list-${i}`
            })
            expectOk(res)
            placed.push(res.json.order)
          }
          const numbers = placed.map((o) => o.order_number).reverse()
          const res = yield* api("GET", "/orders", t.key)
          expectOk(res)
          assert.sameMembers(Object.keys(res.json), ["success", "orders", "pagination"])
          assert.deepStrictEqual(res.json.pagination, { current_page: 1, per_page: 20, total: 3, last_page: 1 })
          assert.deepStrictEqual(res.json.orders.map((o: any) => o.order_number), numbers)
          for (const order of res.json.orders) assert.sameMembers(Object.keys(order), ORDER_FIELDS_LIST)
          assert.deepStrictEqual(res.json.orders[1], { ...placed[1], network: "MTN" })

          const page = (query: string) => Effect.map(api("GET", `/orders?${query}`, t.key), (r) => r.json)
          const p1 = yield* page("per_page=2")
          assert.deepStrictEqual(p1.orders.map((o: any) => o.order_number), numbers.slice(0, 2))
          assert.deepStrictEqual(p1.pagination, { current_page: 1, per_page: 2, total: 3, last_page: 2 })
          const p2 = yield* page("per_page=2&page=2")
          assert.deepStrictEqual(p2.orders.map((o: any) => o.order_number), numbers.slice(2))
          assert.deepStrictEqual(p2.pagination, { current_page: 2, per_page: 2, total: 3, last_page: 2 })
          const p3 = yield* page("per_page=2&page=3")
          assert.strictEqual(p3.success, true)
          assert.deepStrictEqual(p3.orders, [])
          assert.deepStrictEqual(p3.pagination, { current_page: 3, per_page: 2, total: 3, last_page: 2 })
          const all = yield* page("per_page=50")
          assert.deepStrictEqual(all.pagination, { current_page: 1, per_page: 50, total: 3, last_page: 1 })
          // Every order number is distinct and of the decided form.
          for (const n of numbers) assert.match(n, ORDER_NUMBER)
          assert.strictEqual(new Set(numbers).size, 3)

          // An account without orders gets an empty first page.
          const empty = yield* setup(0n)
          const none = yield* api("GET", "/orders", empty.key)
          assert.deepStrictEqual(none.json, {
            success: true,
            orders: [],
            pagination: { current_page: 1, per_page: 20, total: 0, last_page: 1 }
          })
        }))

      it.effect("GET /orders: default page size 20, at most 50", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          yield* raiseLimits(t.id)
          const id = t.bundle("AirtelTigo iShare 500MB").id
          for (let i = 0; i < 22; i++) {
            expectOk(yield* t.order({ bundle_id: id, phone_number: `02000000${String(i).padStart(2, "0")}` }))
          }
          const first = (yield* api("GET", "/orders", t.key)).json
          assert.strictEqual(first.orders.length, 20)
          assert.deepStrictEqual(first.pagination, { current_page: 1, per_page: 20, total: 22, last_page: 2 })
          assert.strictEqual(first.orders[0].phone_number, "0200000021")
          const second = (yield* api("GET", "/orders?page=2", t.key)).json
          assert.deepStrictEqual(second.orders.map((o: any) => o.phone_number), ["0200000001", "0200000000"])
          assert.deepStrictEqual(second.pagination, { current_page: 2, per_page: 20, total: 22, last_page: 2 })
          const big = yield* t.list({ per_page: 50 })
          assert.strictEqual(big.orders.length, 22)
          assert.deepStrictEqual(big.pagination, { current_page: 1, per_page: 50, total: 22, last_page: 1 })
          expect422(yield* api("GET", "/orders?per_page=51", t.key), ["per_page"])
        }))

      it.effect("GET /orders filters: status, reference, phone_number in both forms", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const id = t.bundle("MTN 1GB").id
          const a = yield* t.order({ bundle_id: id, phone_number: "0241111111", reference: "fa" })
          const b = yield* t.order({ bundle_id: id, phone_number: "233241111111", reference: "fb" })
          const c = yield* t.order({ bundle_id: id, phone_number: "0243333333", reference: "fc" })
          const f = yield* t.order({ bundle_id: id, phone_number: "0240000000", reference: "ff" })
          for (const res of [a, b, c, f]) expectOk(res)
          const [na, nb, nc, nf] = [a, b, c, f].map((r) => r.json.order.order_number as string)
          const numbers = (query: string) =>
            Effect.map(api("GET", `/orders?${query}`, t.key), (r) => {
              expectOk(r)
              assert.strictEqual(r.json.pagination.total, r.json.orders.length)
              return r.json.orders.map((o: any) => o.order_number)
            })
          assert.deepStrictEqual(yield* numbers("status=successful"), [nc, nb, na])
          assert.deepStrictEqual(yield* numbers("status=failed"), [nf])
          assert.deepStrictEqual(yield* numbers("status=pending"), [])
          assert.deepStrictEqual(yield* numbers("reference=fb"), [nb])
          assert.deepStrictEqual(yield* numbers("reference=nothing"), [])
          assert.deepStrictEqual(yield* numbers("phone_number=0241111111"), [nb, na])
          assert.deepStrictEqual(yield* numbers("phone_number=233241111111"), [nb, na])
          assert.deepStrictEqual(yield* numbers("phone_number=233243333333"), [nc])
          assert.deepStrictEqual(yield* numbers("phone_number=0249999998"), [])
          assert.deepStrictEqual(yield* numbers("status=successful&phone_number=0241111111&reference=fa"), [na])
        }))

      it.effect("GET /orders filters: from and to, as dates and as timestamps", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const id = t.bundle("MTN 1GB").id
          const placed: Array<{ number: string; created: string }> = []
          for (const phone of ["0241111111", "0242222222", "0243333333"]) {
            const res = yield* t.order({ bundle_id: id, phone_number: phone })
            expectOk(res)
            placed.push({ number: res.json.order.order_number, created: res.json.order.created_at })
            yield* Effect.sleep("30 millis")
          }
          const [a, b, c] = placed as [(typeof placed)[0], (typeof placed)[0], (typeof placed)[0]]
          const numbers = (query: string) =>
            Effect.map(api("GET", `/orders?${query}`, t.key), (r) => {
              expectOk(r)
              return r.json.orders.map((o: any) => o.order_number)
            })
          const q = (value: string) => encodeURIComponent(value)
          const day = (offset: number) =>
            new Date(Date.parse(a.created) + offset * 86_400_000).toISOString().slice(0, 10)
          assert.deepStrictEqual(yield* numbers(`from=${q(b.created)}`), [c.number, b.number])
          assert.deepStrictEqual(yield* numbers(`to=${q(new Date(Date.parse(b.created) + 1).toISOString())}`), [
            b.number,
            a.number
          ])
          assert.deepStrictEqual(
            yield* numbers(`from=${q(b.created)}&to=${q(new Date(Date.parse(b.created) + 1).toISOString())}`),
            [b.number]
          )
          // A timestamp with another offset names the same instant.
          const plus2 = new Date(Date.parse(b.created) + 2 * 3_600_000).toISOString().replace("Z", "+02:00")
          assert.deepStrictEqual(yield* numbers(`from=${q(plus2)}`), [c.number, b.number])
          // Whole days: from the start of `from` to the end of `to`.
          assert.deepStrictEqual(yield* numbers(`from=${day(0)}&to=${day(0)}`), [c.number, b.number, a.number])
          assert.deepStrictEqual(yield* numbers(`from=${day(1)}`), [])
          assert.deepStrictEqual(yield* numbers(`to=${day(-1)}`), [])
          assert.deepStrictEqual(yield* numbers(`from=${day(-1)}&to=${day(1)}`), [c.number, b.number, a.number])
        }))

      it.effect("GET /orders filter `to` includes an order at exactly the created_at it was reported with", () =>
        Effect.gen(function*() {
          const t = yield* setup(10_000n)
          const res = yield* t.order({ bundle_id: t.bundle("MTN 1GB").id, phone_number: "0241111111" })
          expectOk(res)
          const { created_at, order_number } = res.json.order
          const list = yield* api(
            "GET",
            `/orders?from=${encodeURIComponent(created_at)}&to=${encodeURIComponent(created_at)}`,
            t.key
          )
          expectOk(list)
          assert.deepStrictEqual(list.json.orders.map((o: any) => o.order_number), [order_number])
        }))
    })
  })
}
