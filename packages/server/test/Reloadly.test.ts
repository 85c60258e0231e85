/**
 * The Reloadly provider end to end: a real server process buying from a fake of Reloadly's
 * API over HTTP (`ReloadlyFake.ts`), on PGlite and on Postgres: the catalogue sync of its
 * Ghana data bundles, top-ups under our order number, a token that expires mid-run, a failed
 * top-up refunded once, a lost answer after the top-up was made (settled by its status, never
 * bought twice), a 429 and a 5xx, its balance, and failover from a refusing Reloadly to a
 * wholesaler of this API.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"
import * as Fake from "./ReloadlyFake.js"
import {
  account,
  admin,
  audit,
  call,
  cli,
  databaseEnv,
  databases,
  eventually,
  FAST,
  orderStatus,
  startUpstream,
  upstreamOrders
} from "./UpstreamHarness.js"

/** The id of our bundle of `size` on the network `slug`, as a reseller sees it. */
const bundleOf = (base: string, key: string, slug: string, size: string) =>
  Effect.gen(function*() {
    const networks = (yield* call(base, "GET", "/api/v1/networks", { key })).body.networks
    const network = networks.find((n: any) => n.slug === slug)
    assert.isDefined(network, `network ${slug} in ${JSON.stringify(networks)}`)
    const bundles = (yield* call(base, "GET", `/api/v1/networks/${network.id}/bundles`, { key })).body.bundles
    const bundle = bundles.find((b: any) => b.size === size)
    assert.isDefined(bundle, `bundle ${size} in ${JSON.stringify(bundles)}`)
    return bundle as { id: number; price: number }
  })

for (const database of databases) {
  describe(`reloadly provider on ${database.name}`, () => {
    it.scopedLive(
      "syncs Ghana data bundles, tops up once per order through expiry, failures, 429 and 5xx",
      () =>
        Effect.gen(function*() {
          const fake = yield* Fake.start({ tokenSeconds: 3 })
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "reloadly",
            BUNDLES_RELOADLY_CLIENT_ID: Fake.CLIENT_ID,
            BUNDLES_RELOADLY_CLIENT_SECRET: Fake.CLIENT_SECRET,
            BUNDLES_RELOADLY_URL: fake.url,
            BUNDLES_RELOADLY_AUTH_URL: `${fake.url}/oauth/token`,
            BUNDLES_RELOADLY_LOW_BALANCE: "100",
            // The test polls its orders often.
            BUNDLES_RATE_LIMITS: "all=100000,orders=100000,balance=100000"
          })

          // The operator's command: Ghana's fixed-amount data bundles with the markup; airtime is left out.
          const sync = yield* cli(down.url, "catalog", "sync", "--upstream", "reloadly", "--markup", "10%", "--json")
          assert.strictEqual(sync.code, 0, sync.stderr)
          const exported = (yield* admin(down.url, "GET", "/admin/v1/catalog")) as any
          assert.sameMembers(exported.networks.map((n: any) => n.slug), ["mtn", "airteltigo"])
          const mtn = exported.networks.find((n: any) => n.slug === "mtn")
          assert.sameMembers(mtn.bundles.map((b: any) => `${b.size}=${b.price}`), ["1GB=5.5", "2GB=11", "5GB=22"])
          const again = yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", { markup: "10%" })
          assert.deepStrictEqual(again.changes, [], "a second sync changes nothing")

          const reseller = yield* account(down.url, "Shop", 500)
          const oneGb = yield* bundleOf(down.url, reseller.key, "mtn", "1GB")
          const place = (phone: string) =>
            Effect.map(
              call(down.url, "POST", "/api/v1/orders", {
                key: reseller.key,
                body: { bundle_id: oneGb.id, phone_number: phone }
              }),
              (r) => {
                assert.strictEqual(r.status, 200, JSON.stringify(r.body))
                return r.body.order as { order_number: string; status: string }
              }
            )
          const topups = (orderNumber: string) => fake.transactions.filter((t) => t.customIdentifier === orderNumber)
          const settled = (orderNumber: string, status: string) =>
            eventually(
              `${orderNumber} ${status}`,
              20,
              orderStatus(down.url, reseller.key, orderNumber),
              (s) => s === status
            )

          // Delivered at once: one top-up under our order number, in cedis, to the number in 233 form.
          const ok = yield* place("0241234567")
          assert.strictEqual(ok.status, "successful")
          assert.deepStrictEqual(
            topups(ok.order_number).map((t) => [t.operatorId, t.amount, t.useLocalAmount, t.recipient]),
            [[643, 5, true, "233241234567"]]
          )

          // Pending at Reloadly, then successful by its status.
          const slow = yield* place("0241239999")
          assert.strictEqual(slow.status, "pending")
          yield* settled(slow.order_number, "successful")

          // A top-up Reloadly refunds: our order fails, refunded once.
          const refunded = yield* place("0241230000")
          yield* settled(refunded.order_number, "failed")
          const ledger = (yield* admin(down.url, "GET", `/admin/v1/accounts/${reseller.id}/ledger`)).entries as Array<
            { reason: string; order_number?: string | null }
          >
          assert.strictEqual(ledger.filter((e) => e.reason === "refund").length, 1)

          // The token expires mid-run: it is renewed before its end, and once more when refused early.
          const before = fake.tokensIssued()
          yield* Effect.sleep("3 seconds")
          const renewed = yield* place("0541234567")
          assert.strictEqual(renewed.status, "successful")
          fake.expireTokens()
          const refusedToken = yield* place("0551234567")
          assert.strictEqual(refusedToken.status, "successful")
          assert.isAtLeast(fake.tokensIssued(), before + 2)

          // A 429, and a 5xx before anything was made: pending, then bought once.
          fake.faults.push("429")
          const limited = yield* place("0241110001")
          assert.strictEqual(limited.status, "pending")
          yield* settled(limited.order_number, "successful")
          fake.faults.push("500-before")
          const broken = yield* place("0241110002")
          assert.strictEqual(broken.status, "pending")
          yield* settled(broken.order_number, "successful")

          // The top-up was made but its answer lost: settled from Reloadly's record, never bought twice.
          fake.faults.push("500-after")
          const lost = yield* place("0241110003")
          assert.strictEqual(lost.status, "pending")
          yield* settled(lost.order_number, "successful")

          for (const order of [ok, slow, refunded, renewed, refusedToken, limited, broken, lost]) {
            assert.lengthOf(topups(order.order_number), 1, `one top-up for ${order.order_number}`)
          }
          assert.lengthOf(fake.transactions, 8)

          // Its balance, for `admin upstreams` and the low-balance alert.
          const upstreams = yield* admin(down.url, "GET", "/admin/v1/upstreams")
          assert.strictEqual(upstreams.provider, "reloadly")
          const listed = upstreams.upstreams.find((u: any) => u.name === "reloadly")
          assert.strictEqual(listed.balance, fake.balance())
          assert.isFalse(listed.balance_low)
          assert.isTrue((yield* audit(down.url)).ok, "every wallet equals its ledger")
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a soak against a Reloadly failing 20% of calls: every order settles, bought once, audit clean",
      () =>
        Effect.gen(function*() {
          const fake = yield* Fake.start({ tokenSeconds: 600, chaos: 0.2 })
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "reloadly",
            BUNDLES_RELOADLY_CLIENT_ID: Fake.CLIENT_ID,
            BUNDLES_RELOADLY_CLIENT_SECRET: Fake.CLIENT_SECRET,
            BUNDLES_RELOADLY_URL: fake.url,
            BUNDLES_RELOADLY_AUTH_URL: `${fake.url}/oauth/token`,
            BUNDLES_RATE_LIMITS: "all=100000,orders=100000,balance=100000"
          })
          // The sync reads through the chaos too: repeated until one read gets through.
          yield* eventually(
            "a catalogue sync",
            30,
            call(down.url, "POST", "/admin/v1/upstreams/catalog-sync", { admin: true, body: { markup: "10%" } }),
            (r) => r.status === 200
          )
          const reseller = yield* account(down.url, "Soak", 1000)
          const oneGb = yield* bundleOf(down.url, reseller.key, "mtn", "1GB")
          // 40 orders, 8 at a time; every tenth number is one Reloadly refunds.
          const phones = Array.from({ length: 40 }, (_, i) =>
            i % 10 === 3 ? `0245${String(i).padStart(2, "0")}0000` : `0241${String(300_001 + i)}`)
          const placed = yield* Effect.forEach(phones, (phone) =>
            Effect.map(
              call(down.url, "POST", "/api/v1/orders", {
                key: reseller.key,
                body: { bundle_id: oneGb.id, phone_number: phone }
              }),
              (r) => {
                assert.strictEqual(r.status, 200, JSON.stringify(r.body))
                return { number: r.body.order.order_number as string, phone }
              }
            ), { concurrency: 8 })
          for (const order of placed) {
            const status = yield* eventually(
              `${order.number} settled`,
              90,
              orderStatus(down.url, reseller.key, order.number),
              (s) =>
                s === "successful" || s === "failed"
            )
            const topups = fake.transactions.filter((t) => t.customIdentifier === order.number)
            assert.lengthOf(topups, 1, `one top-up for ${order.number}`)
            assert.strictEqual(status, topups[0]!.status === "SUCCESSFUL" ? "successful" : "failed", order.phone)
          }
          assert.isAbove(fake.chaotic(), 10, "the chaos failed calls")
          assert.isTrue((yield* audit(down.url)).ok, "every wallet equals its ledger")
        }),
      { timeout: 240_000 }
    )
    it.scopedLive(
      "fails over from a refusing Reloadly to a wholesaler of this API, bought once",
      () =>
        Effect.gen(function*() {
          const fake = yield* Fake.start({ tokenSeconds: 600 })
          const upstream = yield* startUpstream(database.url, 1000)
          const env = yield* databaseEnv(database.url)
          const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "upstreams-")), "upstreams.json")
          fs.writeFileSync(
            file,
            JSON.stringify({
              upstreams: [
                {
                  name: "reloadly",
                  kind: "reloadly",
                  url: fake.url,
                  auth_url: `${fake.url}/oauth/token`,
                  client_id: Fake.CLIENT_ID,
                  client_secret_env: "RELOADLY_SECRET",
                  networks: { "*": 1 }
                },
                {
                  name: "wholesale",
                  url: `${upstream.server.url}/api/v1`,
                  api_key_env: "WHOLESALE_KEY",
                  networks: { "*": 2 }
                }
              ]
            })
          )
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAMS_FILE: file,
            RELOADLY_SECRET: Fake.CLIENT_SECRET,
            WHOLESALE_KEY: upstream.buyer.key
          })
          yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", { markup: "10%" })
          const reseller = yield* account(down.url, "Shop", 100)
          const oneGb = yield* bundleOf(down.url, reseller.key, "mtn", "1GB")

          // Reloadly first: it sells.
          const first = yield* call(down.url, "POST", "/api/v1/orders", {
            key: reseller.key,
            body: { bundle_id: oneGb.id, phone_number: "0241234567" }
          })
          assert.strictEqual(first.body.order.status, "successful", JSON.stringify(first.body))
          assert.lengthOf(fake.transactions, 1)

          // Reloadly refuses (out of balance): the wholesaler sells it, and only it.
          fake.faults.push("refuse")
          const second = yield* call(down.url, "POST", "/api/v1/orders", {
            key: reseller.key,
            body: { bundle_id: oneGb.id, phone_number: "0241234568" }
          })
          assert.strictEqual(second.body.order.status, "successful", JSON.stringify(second.body))
          const orderNumber = second.body.order.order_number
          assert.lengthOf(fake.transactions.filter((t) => t.customIdentifier === orderNumber), 0)
          const held = yield* upstreamOrders(upstream.server.url, upstream.buyer.key, orderNumber)
          assert.deepStrictEqual(held.map((o) => o.status), ["successful"])
          assert.isTrue((yield* audit(down.url)).ok)
        }),
      { timeout: 120_000 }
    )
  })
}
