/**
 * The DT One provider end to end: a real server process buying from a fake of DT One's DVS API
 * over HTTP (`DtOneFake.ts`), on PGlite and on Postgres: the catalogue sync of Ghana's data
 * products, a transaction under our order number followed to COMPLETED, a DECLINED one
 * refunded once, a lost answer after the transaction was made (never bought twice), a 429, a
 * refusal, and its balance.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fake from "./DtOneFake.js"
import * as Processes from "./Processes.js"
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
  orderStatus
} from "./UpstreamHarness.js"

for (const database of databases) {
  describe(`dtone provider on ${database.name}`, () => {
    it.scopedLive(
      "syncs Ghana data products, buys once per order through a lost answer, a 429 and a refusal",
      () =>
        Effect.gen(function*() {
          const fake = yield* Fake.start
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "dtone",
            BUNDLES_DTONE_API_KEY: Fake.API_KEY,
            BUNDLES_DTONE_API_SECRET: Fake.API_SECRET,
            BUNDLES_DTONE_URL: fake.url,
            BUNDLES_UPSTREAM_DEADLINE_SECONDS: "5",
            BUNDLES_RATE_LIMITS: "all=100000,orders=100000,balance=100000"
          })
          const sync = yield* cli(down.url, "catalog", "sync", "--upstream", "dtone", "--markup", "10%", "--json")
          assert.strictEqual(sync.code, 0, sync.stderr)
          const exported = (yield* admin(down.url, "GET", "/admin/v1/catalog")) as any
          assert.deepStrictEqual(exported.networks.map((n: any) => n.slug), ["mtn"])
          assert.sameMembers(exported.networks[0].bundles.map((b: any) => `${b.size}=${b.price}`), [
            "1GB=5.5",
            "2GB=11"
          ])

          const reseller = yield* account(down.url, "Shop", 100)
          const networks = (yield* call(down.url, "GET", "/api/v1/networks", { key: reseller.key })).body.networks
          const bundles = (yield* call(down.url, "GET", `/api/v1/networks/${networks[0].id}/bundles`, {
            key: reseller.key
          })).body.bundles
          const oneGb = bundles.find((b: any) => b.size === "1GB")
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
          const settled = (orderNumber: string, status: string) =>
            eventually(
              `${orderNumber} ${status}`,
              30,
              orderStatus(down.url, reseller.key, orderNumber),
              (s) => s === status
            )

          const ok = yield* place("0241234567")
          yield* settled(ok.order_number, "successful")
          const declined = yield* place("0241230000")
          yield* settled(declined.order_number, "failed")
          fake.faults.push("500-after")
          const lost = yield* place("0241110003")
          yield* settled(lost.order_number, "successful")
          fake.faults.push("429")
          const limited = yield* place("0241110004")
          yield* settled(limited.order_number, "successful")
          // Refused (out of balance): nothing made; with no other supplier it fails at the deadline, refunded.
          fake.faults.push("refuse", "refuse", "refuse", "refuse", "refuse", "refuse", "refuse", "refuse")
          const refused = yield* place("0241110005")
          yield* settled(refused.order_number, "failed")
          fake.faults.length = 0

          for (const order of [ok, declined, lost, limited]) {
            const made = fake.transactions.filter((t) => t.external_id === order.order_number)
            assert.lengthOf(made, 1, `one transaction for ${order.order_number}`)
          }
          assert.lengthOf(fake.transactions.filter((t) => t.external_id === refused.order_number), 0)
          assert.strictEqual(
            fake.transactions.find((t) => t.external_id === ok.order_number)!.mobile_number,
            "+233241234567"
          )
          const ledger = (yield* admin(down.url, "GET", `/admin/v1/accounts/${reseller.id}/ledger`)).entries as Array<
            { reason: string }
          >
          assert.strictEqual(ledger.filter((e) => e.reason === "refund").length, 2)
          const upstreams = yield* admin(down.url, "GET", "/admin/v1/upstreams")
          assert.strictEqual(upstreams.upstreams[0].balance, 250.75)
          assert.isTrue((yield* audit(down.url)).ok, "every wallet equals its ledger")
        }),
      { timeout: 120_000 }
    )
  })
}
