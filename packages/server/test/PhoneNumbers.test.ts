/**
 * A number's network over real HTTP: GET /phone-numbers/{phone_number} for every prefix the
 * shared table (and so the CLI) knows, for prefixes nobody uses, and for numbers of neither
 * form; and the `warnings` of POST /orders (placed all the same), through the raw wire, the
 * typed client and the dashboard's answer.
 */
import { PhonePrefixes } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { adminClient, bundlesByName, newAccount, raw, resellerClient, serverLayer } from "./Harness.js"

const quiet = <A, E, R>(self: Layer.Layer<A, E, R>) =>
  self.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

/** The demo catalogue's network for each operator: Glo's network is inactive, so none. */
const EXPECTED_SLUG: Record<PhonePrefixes.PhoneOperatorId, string | null> = {
  mtn: "mtn",
  telecel: "telecel",
  airteltigo: "airteltigo-ishare",
  glo: null
}

/** Every 0XX mobile prefix (2 or 5 after the 0) that the table gives to nobody. */
const unknownPrefixes = Array.from({ length: 20 }, (_, i) => `0${i < 10 ? 2 : 5}${i % 10}`)
  .filter((prefix) => PhonePrefixes.prefixOperator(prefix) === undefined)

const lookup = (phone: string, key: string | undefined) => raw("GET", `/api/v1/phone-numbers/${phone}`, { key })

for (const target of targets) {
  describe(`phone number networks on ${target.name}`, () => {
    layer(quiet(serverLayer(target)), { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("every prefix of the table names its operator's active network, in both forms", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          assert.isAbove(bundles.size, 0)
          const account = yield* newAccount(0n)
          const { networks } = yield* (yield* resellerClient(account.key)).catalog.networks()
          const bySlug = new Map(networks.map((n) => [n.slug, n]))
          let checked = 0
          for (const [id, operator] of Object.entries(PhonePrefixes.PHONE_PREFIXES.operators)) {
            const slug = EXPECTED_SLUG[id as PhonePrefixes.PhoneOperatorId]
            const network = slug === null ? null : bySlug.get(slug)!
            for (const prefix of operator.prefixes) {
              for (const phone of [`${prefix}1234567`, `233${prefix.slice(1)}1234567`]) {
                const res = yield* lookup(phone, account.key)
                assert.strictEqual(res.status, 200, res.text)
                assert.deepStrictEqual(res.json, {
                  success: true,
                  phone_number: phone,
                  network: network === null ? null : { id: network.id, name: network.name, slug: network.slug },
                  basis: "prefix"
                }, `${phone} (${operator.name})`)
                checked++
              }
            }
          }
          assert.strictEqual(checked, 2 * 13)
        }))

      it.effect("a prefix nobody uses, and a fixed line, have no network", () =>
        Effect.gen(function*() {
          yield* bundlesByName
          const account = yield* newAccount(0n)
          assert.includeMembers(unknownPrefixes, ["021", "028", "051", "058"])
          for (const prefix of [...unknownPrefixes, "030", "031"]) {
            const res = yield* lookup(`${prefix}7654321`, account.key)
            assert.strictEqual(res.status, 200, res.text)
            assert.deepStrictEqual(res.json, {
              success: true,
              phone_number: `${prefix}7654321`,
              network: null,
              basis: "prefix"
            })
          }
        }))

      it.effect("a number of neither form is a 422 naming phone_number; no key is a 401", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(0n)
          for (const bad of ["024123456", "02412345678", "+233241234567", "abc", "2330241234567", "%20"]) {
            const res = yield* lookup(encodeURIComponent(bad), account.key)
            assert.strictEqual(res.status, 422, `${bad}: ${res.text}`)
            assert.strictEqual(res.json.success, false)
            assert.deepStrictEqual(Object.keys(res.json.errors), ["phone_number"], res.text)
          }
          const anonymous = yield* lookup("0241234567", undefined)
          assert.strictEqual(anonymous.status, 401, anonymous.text)
          assert.strictEqual(anonymous.json.success, false)
        }))

      it.effect("the typed client reads the lookup", () =>
        Effect.gen(function*() {
          yield* bundlesByName
          const account = yield* newAccount(0n)
          const client = yield* resellerClient(account.key)
          const found = yield* client.phoneNumbers.lookup({ path: { phone_number: "0501234567" } })
          assert.strictEqual(found.network?.slug, "telecel")
          assert.strictEqual(found.basis, "prefix")
        }))

      it.effect("POST /orders: warnings only when the prefix is another network's or nobody's; placed all the same", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const mtn = bundles.get("MTN 1GB")!
          const ishare = bundles.get("AirtelTigo iShare 500MB")!
          const account = yield* newAccount(100_000n)
          const admin = yield* adminClient
          yield* admin.accounts.update({ path: { account_id: account.id }, payload: { limits: { orders: 1000 } } })
          const order = (bundle_id: number, phone_number: string, reference?: string) =>
            raw("POST", "/api/v1/orders", {
              key: account.key,
              body: { bundle_id, phone_number, ...(reference === undefined ? {} : { reference }) }
            })

          const plain = yield* order(mtn.id, "0241234567")
          assert.strictEqual(plain.status, 200, plain.text)
          assert.sameMembers(Object.keys(plain.json), ["success", "message", "order", "wallet_balance"])

          const sameOperator = yield* order(ishare.id, "233571234567")
          assert.strictEqual(sameOperator.status, 200, sameOperator.text)
          assert.notProperty(sameOperator.json, "warnings")

          const mismatch = yield* order(mtn.id, "0201234567", "warn-mismatch-1")
          assert.strictEqual(mismatch.status, 200, mismatch.text)
          assert.strictEqual(mismatch.json.order.status, "successful")
          assert.lengthOf(mismatch.json.warnings, 1)
          assert.strictEqual(mismatch.json.warnings[0].code, "network_mismatch")
          assert.include(mismatch.json.warnings[0].message, "Telecel")
          assert.include(mismatch.json.warnings[0].message, "MTN")
          // A replay says the same.
          const replay = yield* order(mtn.id, "0201234567", "warn-mismatch-1")
          assert.strictEqual(replay.headers["idempotent-replayed"], "true")
          assert.deepStrictEqual(replay.json.warnings, mismatch.json.warnings)

          const unknown = yield* order(mtn.id, "233281234567")
          assert.strictEqual(unknown.status, 200, unknown.text)
          assert.deepStrictEqual(unknown.json.warnings.map((w: { code: string }) => w.code), ["unknown_prefix"])
          assert.include(unknown.json.warnings[0].message, "028")

          const fixedLine = yield* order(ishare.id, "0301234567")
          assert.strictEqual(fixedLine.status, 200, fixedLine.text)
          assert.strictEqual(fixedLine.json.warnings[0].code, "unknown_prefix")

          // Every order was paid for: 5 orders, one replay.
          const detail = yield* admin.accounts.show({ path: { account_id: account.id } })
          const paid = mtn.price * 3n + ishare.price * 2n
          assert.strictEqual(detail.balance.main, 100_000n - paid)

          // The typed client hands the warnings over, typed.
          const client = yield* resellerClient(account.key)
          const typed = yield* client.orders.place({ payload: { bundle_id: mtn.id, phone_number: "0551234567" } })
          assert.isUndefined(typed.warnings)
          const typedWarned = yield* client.orders.place({
            payload: { bundle_id: ishare.id, phone_number: "0551234567" }
          })
          assert.deepStrictEqual(typedWarned.warnings?.map((w) => w.code), ["network_mismatch"])
        }))
    })
  })
}
