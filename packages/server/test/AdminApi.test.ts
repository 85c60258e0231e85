/**
 * The operator's admin API end to end over real HTTP: its bearer token, accounts, API keys,
 * wallet funding, adjustments and the ledger, the catalogue file, orders and their manual
 * settlement, the audit, and both OpenAPI documents.
 */
import { Account, AdminApi, ApiError, ApiKey, Catalog, Order, Wallet } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schema } from "effect"
import * as fs from "node:fs"
import * as Demo from "../src/Demo.js"
import {
  ADMIN_TOKEN,
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

/** A request to the admin API with the test token. */
const adminRaw = (method: Method, path: string, options: RawOptions = {}) =>
  raw(method, `/admin/v1${path}`, { bearer: ADMIN_TOKEN, ...options })

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$/

/** The error envelope: the status, `success: false`, a string message, its code, a request id. */
const expectEnvelope = (res: RawResponse, status: number) => {
  assert.strictEqual(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`)
  assert.isObject(res.json, `body is not a JSON object: ${res.text}`)
  assert.strictEqual(res.json.success, false, res.text)
  assert.isString(res.json.message, res.text)
  assert.isString(res.headers["x-request-id"], "X-Request-Id header")
  // Extensions beyond the spec: the error's stable snake_case code, and the request id.
  assert.strictEqual(res.json.code, res.json._tag.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase(), res.text)
  assert.strictEqual(res.json.request_id, res.headers["x-request-id"], res.text)
}

/** A 422 naming `field` in its `errors`. */
const expect422 = (res: RawResponse, field: string) => {
  expectEnvelope(res, 422)
  assert.isObject(res.json.errors, res.text)
  assert.include(Object.keys(res.json.errors), field, res.text)
}

const demoFile = Schema.decodeUnknownSync(Catalog.CatalogFile)(JSON.parse(fs.readFileSync(Demo.catalogPath, "utf8")))
const demoBundles = demoFile.networks.reduce((n, network) => n + network.bundles.length, 0)

const quiet = <A, E, R>(self: Layer.Layer<A, E, R>) =>
  self.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

for (const target of targets) {
  describe(`admin API on ${target.name}`, () => {
    // Pending orders stay pending long enough to be resolved by hand.
    const server = quiet(serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "30" }))
    layer(server, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("catalogue: import twice (the second changes nothing), export round-trips", () =>
        Effect.gen(function*() {
          const admin = yield* adminClient
          const before = yield* admin.catalogFile.export()
          const first = yield* admin.catalogFile.import({ payload: demoFile })
          if (before.networks.length === 0) {
            assert.deepStrictEqual(
              { price_groups: first.price_groups, networks: first.networks, bundles: first.bundles },
              {
                price_groups: { created: 2, updated: 0, unchanged: 0 },
                networks: { created: 5, updated: 0, unchanged: 0 },
                bundles: { created: demoBundles, updated: 0, unchanged: 0 }
              }
            )
          }
          const unchanged = {
            success: true as const,
            price_groups: { created: 0, updated: 0, unchanged: 2 },
            networks: { created: 0, updated: 0, unchanged: 5 },
            bundles: { created: 0, updated: 0, unchanged: demoBundles },
            changes: []
          }
          assert.deepStrictEqual(yield* admin.catalogFile.import({ payload: demoFile }), unchanged)
          // A preview says what would change and changes nothing.
          assert.deepStrictEqual<unknown>(
            yield* admin.catalogFile.preview({ payload: demoFile }),
            { ...unchanged, dry_run: true }
          )
          const [firstNetwork, ...otherNetworks] = demoFile.networks
          const [firstBundle, ...otherBundles] = firstNetwork!.bundles
          const edited = {
            ...demoFile,
            price_groups: [...demoFile.price_groups, "vip" as (typeof demoFile.price_groups)[number]],
            networks: [
              { ...firstNetwork!, bundles: [{ ...firstBundle!, price: firstBundle!.price + 10n }, ...otherBundles] },
              ...otherNetworks
            ]
          }
          const preview = yield* admin.catalogFile.preview({ payload: edited })
          assert.deepStrictEqual(preview.changes, [
            { kind: "price_group", action: "create", key: "vip" },
            { kind: "bundle", action: "update", key: firstBundle!.key }
          ])
          assert.strictEqual(preview.dry_run, true)
          const exported = yield* admin.catalogFile.export()
          const { success: _success, ...file } = exported
          assert.deepStrictEqual(file, demoFile)
          assert.deepStrictEqual(yield* admin.catalogFile.import({ payload: file }), unchanged)
          // Raw: amounts in the export are numbers in cedis.
          const res = yield* adminRaw("GET", "/catalog")
          assert.strictEqual(res.status, 200)
          assert.strictEqual(res.json.networks[0].bundles[0].price, 5.5)
          assert.deepStrictEqual(res.json.networks[0].bundles[0].prices, { agent: 5.2 })
        }))

      it.effect("catalogue: a changed price is one update, seen by resellers at once", () =>
        Effect.gen(function*() {
          const admin = yield* adminClient
          const bundles = yield* bundlesByName
          const agent = yield* newAccount(0n, { priceGroup: "agent" })
          const agentClient = yield* resellerClient(agent.key)
          const mtn1 = bundles.get("MTN 1GB")!
          const changed = {
            ...demoFile,
            networks: demoFile.networks.map((n) =>
              n.slug !== "mtn" ? n : {
                ...n,
                bundles: n.bundles.map((b) => b.key === "mtn-1gb" ? { ...b, price: 560n, prices: {} } : b)
              }
            )
          }
          yield* Effect.gen(function*() {
            const summary = yield* admin.catalogFile.import({ payload: changed })
            assert.deepStrictEqual(summary.bundles, { created: 0, updated: 1, unchanged: demoBundles - 1 })
            // The import says what it changed, as its preview would have.
            assert.deepStrictEqual(summary.changes, [{ kind: "bundle", action: "update", key: "mtn-1gb" }])
            const listed = yield* agentClient.catalog.bundles({ path: { network_id: mtn1.network_id } })
            assert.strictEqual(listed.bundles.find((b) => b.id === mtn1.id)?.price, 560n)
          }).pipe(Effect.ensuring(Effect.orDie(admin.catalogFile.import({ payload: demoFile }))))
          const listed = yield* agentClient.catalog.bundles({ path: { network_id: mtn1.network_id } })
          assert.strictEqual(listed.bundles.find((b) => b.id === mtn1.id)?.price, 520n)
          // A file naming an unknown price group is refused as a whole.
          const bad = yield* adminRaw("POST", "/catalog", {
            body: {
              networks: [{
                slug: "mtn",
                name: "MTN",
                color: "#FFCC00",
                delivery: "5 - 30 minutes",
                bundles: [{ key: "mtn-1gb", size: "1GB", name: "MTN 1GB", price: 1, prices: { vip: 0.5 } }]
              }]
            }
          })
          expect422(bad, "networks[0].bundles[0].prices.vip")
          assert.deepStrictEqual((yield* admin.catalogFile.export()).networks, demoFile.networks)
        }))

      it.effect("401 without a bearer token, with a wrong one, or with a reseller key", () =>
        Effect.gen(function*() {
          expectEnvelope(yield* raw("GET", "/admin/v1/accounts"), 401)
          expectEnvelope(yield* raw("GET", "/admin/v1/accounts", { bearer: "wrong-token" }), 401)
          expectEnvelope(yield* raw("GET", "/admin/v1/audit", { bearer: `${ADMIN_TOKEN}x` }), 401)
          const account = yield* newAccount(0n)
          expectEnvelope(yield* raw("GET", "/admin/v1/accounts", { key: account.key }), 401)
          expectEnvelope(yield* raw("POST", "/admin/v1/accounts", { body: { name: "Intruder" } }), 401)
          const wrong = yield* HttpApiClient.make(AdminApi.AdminApi, {
            transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken("wrong-token"))
          })
          assert.instanceOf(yield* Effect.flip(wrong.wallets.audit()), ApiError.Unauthorized)
          // Nor does the admin token open the public API.
          expectEnvelope(yield* raw("GET", "/api/v1/balance", { bearer: ADMIN_TOKEN }), 401)
          expectEnvelope(yield* raw("GET", "/api/v1/balance", { key: ADMIN_TOKEN }), 401)
        }))

      it.effect("accounts: create (201), show, list, update; unknown ones are 404", () =>
        Effect.gen(function*() {
          yield* bundlesByName
          const admin = yield* adminClient
          const before = Date.now()
          const created = yield* adminRaw("POST", "/accounts", { body: { name: "Kofi Mensah Ventures" } })
          assert.strictEqual(created.status, 201, created.text)
          assert.sameMembers(Object.keys(created.json), [
            "success",
            "id",
            "name",
            "price_group",
            "status",
            "created_at"
          ])
          assert.strictEqual(created.json.success, true)
          assert.isTrue(Number.isInteger(created.json.id) && created.json.id > 0)
          assert.strictEqual(created.json.name, "Kofi Mensah Ventures")
          assert.isNull(created.json.price_group)
          assert.strictEqual(created.json.status, "active")
          assert.match(created.json.created_at, ISO_UTC)
          assert.isAtLeast(Date.parse(created.json.created_at), before - 5_000)
          const id = created.json.id as Account.AccountId

          const shown = yield* admin.accounts.show({ path: { account_id: id } })
          assert.strictEqual(shown.name, "Kofi Mensah Ventures")
          assert.isNull(shown.price_group)
          assert.strictEqual(shown.status, "active")
          assert.deepStrictEqual(shown.balance, { main: 0n, referral: 0n, agent: 0n })
          assert.deepStrictEqual(shown.keys, [])
          assert.deepStrictEqual(shown.limits, {})
          assert.isNull(shown.webhook_url)

          const agent = yield* admin.accounts.create({ payload: { name: "Agent Ama", price_group: "agent" as any } })
          assert.strictEqual(agent.price_group, "agent")
          expect422(yield* adminRaw("POST", "/accounts", { body: { name: "X", price_group: "vip" } }), "price_group")
          expect422(yield* adminRaw("POST", "/accounts", { body: { name: "" } }), "name")
          expect422(yield* adminRaw("POST", "/accounts", { body: {} }), "name")

          const updated = yield* admin.accounts.update({
            path: { account_id: id },
            payload: { name: "Kofi Mensah Ltd", price_group: "agent" as any, limits: { orders: 100, balance: 40 } }
          })
          assert.strictEqual(updated.name, "Kofi Mensah Ltd")
          assert.strictEqual(updated.price_group, "agent")
          assert.deepStrictEqual(updated.limits, { orders: 100, balance: 40 })
          const cleared = yield* admin.accounts.update({
            path: { account_id: id },
            payload: { price_group: null, limits: { orders: null } }
          })
          assert.isNull(cleared.price_group)
          assert.deepStrictEqual(cleared.limits, { balance: 40 })
          assert.strictEqual(cleared.name, "Kofi Mensah Ltd")

          const suspended = yield* admin.accounts.update({ path: { account_id: id }, payload: { status: "suspended" } })
          assert.strictEqual(suspended.status, "suspended")
          const onlySuspended = yield* admin.accounts.list({
            urlParams: { page: 1, per_page: 100, status: "suspended" }
          })
          assert.include(onlySuspended.accounts.map((a) => a.id), id)
          for (const a of onlySuspended.accounts) assert.strictEqual(a.status, "suspended")
          const listed = yield* admin.accounts.list({ urlParams: { page: 1, per_page: 100 } })
          assert.include(listed.accounts.map((a) => a.id), agent.id)
          const one = yield* admin.accounts.list({ urlParams: { page: 1, per_page: 1 } })
          assert.strictEqual(one.accounts.length, 1)
          assert.deepStrictEqual(one.pagination, {
            current_page: 1,
            per_page: 1,
            total: listed.pagination.total,
            last_page: listed.pagination.total
          })
          const listedRaw = yield* adminRaw("GET", `/accounts?status=suspended&per_page=100`)
          const entry = listedRaw.json.accounts.find((a: any) => a.id === id)
          assert.deepStrictEqual(entry.balance, { main: 0, referral: 0, agent: 0 })

          const missing = 999_999 as Account.AccountId
          assert.instanceOf(
            yield* Effect.flip(admin.accounts.show({ path: { account_id: missing } })),
            Account.AccountNotFound
          )
          assert.instanceOf(
            yield* Effect.flip(admin.accounts.update({ path: { account_id: missing }, payload: { name: "x" } })),
            Account.AccountNotFound
          )
          expectEnvelope(yield* adminRaw("GET", "/accounts/999999"), 404)
          expectEnvelope(yield* adminRaw("GET", "/accounts/abc"), 404)
        }))

      it.effect("accounts: a price group change applies to the reseller's prices at once", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const admin = yield* adminClient
          const account = yield* newAccount(0n)
          const client = yield* resellerClient(account.key)
          const mtn1 = bundles.get("MTN 1GB")!
          const price = Effect.map(
            client.catalog.bundles({ path: { network_id: mtn1.network_id } }),
            (r) => r.bundles.find((b) => b.id === mtn1.id)!.price
          )
          assert.strictEqual(yield* price, 550n)
          yield* admin.accounts.update({ path: { account_id: account.id }, payload: { price_group: "agent" as any } })
          assert.strictEqual(yield* price, 520n)
        }))

      it.effect("keys: create (201, shown once), last_used_at, revoke (twice is harmless), unknown key 404", () =>
        Effect.gen(function*() {
          const admin = yield* adminClient
          const account = yield* admin.accounts.create({ payload: { name: "Key Holder" } })
          const res = yield* adminRaw("POST", `/accounts/${account.id}/keys`)
          assert.strictEqual(res.status, 201, res.text)
          assert.sameMembers(Object.keys(res.json), ["success", "id", "api_key", "prefix", "mode"])
          const key: string = res.json.api_key
          assert.isAtLeast(key.length, 32)
          assert.isTrue(key.startsWith(res.json.prefix))
          assert.isBelow(res.json.prefix.length, key.length - 20)
          const shown = yield* adminRaw("GET", `/accounts/${account.id}`)
          assert.notInclude(shown.text, key)
          assert.deepStrictEqual(shown.json.keys.map((k: any) => [k.id, k.prefix, k.last_used_at, k.revoked_at]), [
            [res.json.id, res.json.prefix, null, null]
          ])
          const client = yield* resellerClient(key)
          yield* client.wallet.balance()
          const used = yield* admin.accounts.show({ path: { account_id: account.id } })
          assert.instanceOf(used.keys[0]!.last_used_at, Date)

          const second = yield* admin.apiKeys.create({ path: { account_id: account.id }, urlParams: {} })
          assert.notStrictEqual(second.api_key, key)
          const keys = (yield* admin.accounts.show({ path: { account_id: account.id } })).keys
          assert.deepStrictEqual(keys.map((k) => k.id), [second.id, res.json.id])

          const revoked = yield* admin.apiKeys.revoke({ path: { account_id: account.id, key_id: res.json.id } })
          assert.instanceOf(revoked.key.revoked_at, Date)
          assert.instanceOf(yield* Effect.flip(client.wallet.balance()), ApiError.Unauthorized)
          const again = yield* admin.apiKeys.revoke({ path: { account_id: account.id, key_id: res.json.id } })
          assert.strictEqual(again.key.revoked_at?.getTime(), revoked.key.revoked_at?.getTime())
          const secondClient = yield* resellerClient(second.api_key)
          yield* secondClient.wallet.balance()

          assert.instanceOf(
            yield* Effect.flip(
              admin.apiKeys.revoke({ path: { account_id: account.id, key_id: 999_999 as ApiKey.ApiKeyId } })
            ),
            ApiKey.ApiKeyNotFound
          )
          // A key is revoked only through its own account.
          const other = yield* admin.accounts.create({ payload: { name: "Someone Else" } })
          assert.instanceOf(
            yield* Effect.flip(admin.apiKeys.revoke({ path: { account_id: other.id, key_id: second.id } })),
            ApiKey.ApiKeyNotFound
          )
          yield* secondClient.wallet.balance()
          assert.instanceOf(
            yield* Effect.flip(
              admin.apiKeys.create({ path: { account_id: 999_999 as Account.AccountId }, urlParams: {} })
            ),
            Account.AccountNotFound
          )
        }))

      it.effect("wallet: fund 10.50 = 1050 pesewas; bad amounts are 422", () =>
        Effect.gen(function*() {
          const admin = yield* adminClient
          const account = yield* admin.accounts.create({ payload: { name: "Funded" } })
          const res = yield* adminRaw("POST", `/accounts/${account.id}/wallet/fund`, { body: { amount: 10.50 } })
          assert.strictEqual(res.status, 200, res.text)
          assert.deepStrictEqual(res.json.balance, { main: 10.5, referral: 0, agent: 0 })
          assert.strictEqual(res.json.entry.amount, 10.5)
          assert.strictEqual(res.json.entry.balance_after, 10.5)
          assert.strictEqual(res.json.entry.reason, "funding")
          assert.strictEqual(res.json.entry.wallet, "main")
          assert.strictEqual((yield* admin.accounts.show({ path: { account_id: account.id } })).balance.main, 1050n)
          const referral = yield* admin.wallets.fund({
            headers: {},
            path: { account_id: account.id },
            payload: { amount: 200n, wallet: "referral", note: "referral bonus" }
          })
          assert.deepStrictEqual(referral.balance, { main: 1050n, referral: 200n, agent: 0n })
          assert.strictEqual(referral.entry.note, "referral bonus")
          const statuses: Array<[unknown, number]> = []
          for (const amount of [0, -1, 10.505, "10", null, 2_000_000_000, 0.001]) {
            const bad = yield* adminRaw("POST", `/accounts/${account.id}/wallet/fund`, { body: { amount } })
            statuses.push([amount, bad.status])
            if (bad.status === 422) expect422(bad, "amount")
          }
          assert.deepStrictEqual(statuses, [[0, 422], [-1, 422], [10.505, 422], ["10", 422], [null, 422], [
            2_000_000_000,
            422
          ], [0.001, 422]])
          expect422(
            yield* adminRaw("POST", `/accounts/${account.id}/wallet/fund`, { body: { amount: 1, wallet: "gold" } }),
            "wallet"
          )
          assert.deepStrictEqual((yield* admin.accounts.show({ path: { account_id: account.id } })).balance, {
            main: 1050n,
            referral: 200n,
            agent: 0n
          })
          assert.instanceOf(
            yield* Effect.flip(
              admin.wallets.fund({
                headers: {},
                path: { account_id: 999_999 as Account.AccountId },
                payload: { amount: 100n, wallet: "main" }
              })
            ),
            Account.AccountNotFound
          )
        }))

      it.effect("wallet: adjust (signed, with a note); beyond the balance is 400 InsufficientBalance; ledger", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const admin = yield* adminClient
          const account = yield* newAccount(1050n)
          const path = { account_id: account.id }
          const down = yield* admin.wallets.adjust({
            headers: {},
            path,
            payload: { amount: -250n, wallet: "main", note: "correction" }
          })
          assert.strictEqual(down.balance.main, 800n)
          assert.strictEqual(down.entry.reason, "adjustment")
          assert.strictEqual(down.entry.amount, -250n)
          assert.strictEqual(down.entry.note, "correction")
          const error = yield* Effect.flip(
            admin.wallets.adjust({ headers: {}, path, payload: { amount: -10_000n, wallet: "main", note: "too much" } })
          )
          assert.instanceOf(error, Wallet.InsufficientBalance)
          assert.strictEqual((error as Wallet.InsufficientBalance).balance, 800n)
          assert.strictEqual((error as Wallet.InsufficientBalance).required, 10_000n)
          const raw400 = yield* adminRaw("POST", `/accounts/${account.id}/wallet/adjust`, {
            body: { amount: -100, note: "too much" }
          })
          expectEnvelope(raw400, 400)
          assert.strictEqual(raw400.json.balance, 8)
          assert.strictEqual(raw400.json.required, 100)
          expect422(yield* adminRaw("POST", `/accounts/${account.id}/wallet/adjust`, { body: { amount: -1 } }), "note")
          expect422(
            yield* adminRaw("POST", `/accounts/${account.id}/wallet/adjust`, { body: { amount: -1, note: "" } }),
            "note"
          )
          expect422(
            yield* adminRaw("POST", `/accounts/${account.id}/wallet/adjust`, { body: { amount: 0, note: "zero" } }),
            "amount"
          )
          assert.strictEqual((yield* admin.accounts.show({ path })).balance.main, 800n)
          const up = yield* admin.wallets.adjust({
            headers: {},
            path,
            payload: { amount: 100n, wallet: "main", note: "goodwill" }
          })
          assert.strictEqual(up.balance.main, 900n)

          const client = yield* resellerClient(account.key)
          const placed = yield* client.orders.place({
            payload: { bundle_id: bundles.get("AirtelTigo iShare 500MB")!.id, phone_number: "0241234567" }
          })
          const ledger = yield* admin.wallets.ledger({ path, urlParams: { page: 1, per_page: 50 } })
          assert.deepStrictEqual(
            ledger.entries.map((e) => [e.reason, e.wallet, e.amount, e.balance_after, e.order_number]),
            [
              ["order", "main", -250n, 650n, placed.order.order_number],
              ["adjustment", "main", 100n, 900n, null],
              ["adjustment", "main", -250n, 800n, null],
              ["funding", "main", 1050n, 1050n, null]
            ]
          )
          assert.deepStrictEqual(ledger.pagination, { current_page: 1, per_page: 50, total: 4, last_page: 1 })
          const page2 = yield* admin.wallets.ledger({ path, urlParams: { page: 2, per_page: 3 } })
          assert.deepStrictEqual(page2.entries.map((e) => e.reason), ["funding"])
          const referral = yield* admin.wallets.ledger({
            path,
            urlParams: { page: 1, per_page: 50, wallet: "referral" }
          })
          assert.deepStrictEqual(referral.entries, [])
          // The balance always equals the ledger's sum.
          const sum = ledger.entries.reduce((total, e) => total + e.amount, 0n)
          assert.strictEqual((yield* admin.accounts.show({ path })).balance.main, sum)
          assert.instanceOf(
            yield* Effect.flip(admin.wallets.ledger({
              path: { account_id: 999_999 as Account.AccountId },
              urlParams: { page: 1, per_page: 50 }
            })),
            Account.AccountNotFound
          )
          assert.isTrue((yield* admin.wallets.audit()).ok)
        }))

      it.effect("orders: list across accounts with filters, get one, unknown is 404", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const admin = yield* adminClient
          const account = yield* newAccount(10_000n)
          const client = yield* resellerClient(account.key)
          const id = bundles.get("MTN 1GB")!.id
          const ok = yield* client.orders.place({
            payload: { bundle_id: id, phone_number: "0241234567", reference: "a-1" }
          })
          const failed = yield* client.orders.place({ payload: { bundle_id: id, phone_number: "0240000000" } })
          assert.strictEqual(failed.order.status, "failed")
          const mine = yield* admin.ordersAdmin.list({ urlParams: { page: 1, per_page: 50, account_id: account.id } })
          assert.deepStrictEqual(mine.orders.map((o) => [o.order_number, o.status, o.account_id]), [
            [failed.order.order_number, "failed", account.id],
            [ok.order.order_number, "successful", account.id]
          ])
          assert.strictEqual(mine.pagination.total, 2)
          const onlyFailed = yield* admin.ordersAdmin.list({
            urlParams: { page: 1, per_page: 50, account_id: account.id, status: "failed" }
          })
          assert.deepStrictEqual(onlyFailed.orders.map((o) => o.order_number), [failed.order.order_number])
          const all = yield* admin.ordersAdmin.list({ urlParams: { page: 1, per_page: 100 } })
          assert.isAtLeast(all.pagination.total, 2)
          const one = yield* admin.ordersAdmin.get({ path: { order_number: ok.order.order_number } })
          assert.deepStrictEqual(one.order, {
            order_number: ok.order.order_number,
            bundle: "MTN 1GB",
            network: "MTN",
            phone_number: "0241234567",
            amount_paid: 550n,
            status: "successful",
            reference: "a-1",
            created_at: ok.order.created_at,
            account_id: account.id,
            mode: "live"
          })
          assert.instanceOf(
            yield* Effect.flip(admin.ordersAdmin.get({ path: { order_number: "ORD-000000000000" } })),
            Order.OrderNotFound
          )
          expect422(yield* adminRaw("GET", "/orders?status=bogus"), "status")
        }))

      it.effect("orders: resolving a pending order as failed refunds it once; a settled order is 409", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const admin = yield* adminClient
          const account = yield* newAccount(10_000n)
          const client = yield* resellerClient(account.key)
          const id = bundles.get("MTN 1GB")!.id
          const balance = Effect.map(admin.accounts.show({ path: { account_id: account.id } }), (a) => a.balance.main)
          const p1 = yield* client.orders.place({
            payload: { bundle_id: id, phone_number: "0249999999", reference: "p1" }
          })
          const p2 = yield* client.orders.place({
            payload: { bundle_id: id, phone_number: "0249999999", reference: "p2" }
          })
          assert.deepStrictEqual([p1.order.status, p2.order.status], ["pending", "pending"])
          assert.strictEqual(yield* balance, 8_900n)

          const failed = yield* admin.ordersAdmin.resolve({
            headers: {},
            path: { order_number: p1.order.order_number },
            payload: { status: "failed" }
          })
          assert.strictEqual(failed.order.status, "failed")
          assert.strictEqual(failed.order.account_id, account.id)
          assert.strictEqual(yield* balance, 9_450n)
          assert.strictEqual(
            (yield* client.orders.get({ path: { order_number: p1.order.order_number } })).order.status,
            "failed"
          )

          for (const status of ["failed", "successful"] as const) {
            const conflict = yield* Effect.flip(
              admin.ordersAdmin.resolve({
                headers: {},
                path: { order_number: p1.order.order_number },
                payload: { status }
              })
            )
            assert.instanceOf(conflict, ApiError.Conflict)
          }
          expectEnvelope(
            yield* adminRaw("POST", `/orders/${p1.order.order_number}/resolve`, { body: { status: "failed" } }),
            409
          )
          assert.strictEqual(yield* balance, 9_450n)

          // A note belongs on a refund: with a success it is refused, and nothing moves.
          expectEnvelope(
            yield* adminRaw("POST", `/orders/${p2.order.order_number}/resolve`, {
              body: { status: "successful", note: "why" }
            }),
            422
          )
          const succeeded = yield* admin.ordersAdmin.resolve({
            headers: {},
            path: { order_number: p2.order.order_number },
            payload: { status: "successful" }
          })
          assert.strictEqual(succeeded.order.status, "successful")
          assert.strictEqual(yield* balance, 9_450n)
          // A successful order cannot succeed again (failing it, a delivery that never arrived, refunds it:
          // Commissions.test.ts).
          assert.instanceOf(
            yield* Effect.flip(
              admin.ordersAdmin.resolve({
                headers: {},
                path: { order_number: p2.order.order_number },
                payload: { status: "successful" }
              })
            ),
            ApiError.Conflict
          )
          // An order that succeeded at once is settled too.
          const done = yield* client.orders.place({ payload: { bundle_id: id, phone_number: "0241234567" } })
          assert.instanceOf(
            yield* Effect.flip(
              admin.ordersAdmin.resolve({
                headers: {},
                path: { order_number: done.order.order_number },
                payload: { status: "successful" }
              })
            ),
            ApiError.Conflict
          )
          assert.strictEqual(yield* balance, 8_900n)

          const ledger = yield* admin.wallets.ledger({
            path: { account_id: account.id },
            urlParams: { page: 1, per_page: 50 }
          })
          const refunds = ledger.entries.filter((e) => e.reason === "refund")
          assert.deepStrictEqual(refunds.map((e) => [e.amount, e.order_number]), [[550n, p1.order.order_number]])

          assert.instanceOf(
            yield* Effect.flip(
              admin.ordersAdmin.resolve({
                headers: {},
                path: { order_number: "ORD-000000000000" },
                payload: { status: "failed" }
              })
            ),
            Order.OrderNotFound
          )
          expect422(
            yield* adminRaw("POST", `/orders/${p2.order.order_number}/resolve`, { body: { status: "pending" } }),
            "status"
          )
          const audit = yield* admin.wallets.audit()
          assert.isTrue(audit.ok)
          assert.strictEqual(audit.failed_orders_without_refund, 0)
          assert.strictEqual(audit.refunds_without_failed_order, 0)
        }))

      it.effect("audit: ok, with no mismatches", () =>
        Effect.gen(function*() {
          const admin = yield* adminClient
          yield* newAccount(1234n)
          const audit = yield* admin.wallets.audit()
          assert.isTrue(audit.ok)
          assert.deepStrictEqual(audit.mismatches, [])
          assert.strictEqual(audit.negative_balances, 0)
          assert.strictEqual(audit.orders_without_debit, 0)
          assert.isAtLeast(audit.wallets, 3)
          assert.isAtLeast(audit.ledger_entries, 1)
          const res = yield* adminRaw("GET", "/audit")
          assert.strictEqual(res.status, 200)
          assert.strictEqual(res.json.success, true)
          assert.strictEqual(res.json.ok, true)
        }))

      it.effect("the admin API's own envelope: unknown route 404, wrong method 405, malformed JSON 400", () =>
        Effect.gen(function*() {
          expectEnvelope(yield* adminRaw("GET", "/nope"), 404)
          const wrong = yield* adminRaw("DELETE", "/audit")
          expectEnvelope(wrong, 405)
          assert.strictEqual(wrong.headers["allow"], "GET")
          expectEnvelope(yield* adminRaw("POST", "/accounts", { body: "{" }), 400)
          expectEnvelope(yield* adminRaw("POST", "/accounts", { body: "{}", contentType: "text/plain" }), 400)
        }))

      it.effect("OpenAPI documents at /api/v1/openapi.json and /admin/v1/openapi.json", () =>
        Effect.gen(function*() {
          const publicDoc = yield* raw("GET", "/api/v1/openapi.json")
          assert.strictEqual(publicDoc.status, 200, publicDoc.text)
          assert.match(publicDoc.json.openapi, /^3\./)
          assert.includeMembers(Object.keys(publicDoc.json.paths), [
            "/api/v1/balance",
            "/api/v1/networks",
            "/api/v1/networks/{network_id}/bundles",
            "/api/v1/orders",
            "/api/v1/orders/{order_number}"
          ])
          assert.isFalse(Object.keys(publicDoc.json.paths).some((p) => p.startsWith("/admin")))
          const adminDoc = yield* raw("GET", "/admin/v1/openapi.json")
          assert.strictEqual(adminDoc.status, 200, adminDoc.text)
          assert.match(adminDoc.json.openapi, /^3\./)
          assert.includeMembers(Object.keys(adminDoc.json.paths), [
            "/admin/v1/accounts",
            "/admin/v1/accounts/{account_id}",
            "/admin/v1/accounts/{account_id}/keys",
            "/admin/v1/accounts/{account_id}/keys/{key_id}",
            "/admin/v1/accounts/{account_id}/wallet/fund",
            "/admin/v1/accounts/{account_id}/wallet/adjust",
            "/admin/v1/accounts/{account_id}/ledger",
            "/admin/v1/audit",
            "/admin/v1/catalog",
            "/admin/v1/orders",
            "/admin/v1/orders/{order_number}",
            "/admin/v1/orders/{order_number}/resolve"
          ])
          assert.isFalse(Object.keys(adminDoc.json.paths).some((p) => p.startsWith("/api/")))
        }))
    })
  })
}
