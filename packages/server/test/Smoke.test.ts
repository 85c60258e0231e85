import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { newAccount, resellerClient, seedCatalog, serverLayer } from "./Harness.js"

for (const target of targets) {
  describe(`smoke on ${target.name}`, () => {
    layer(serverLayer(target), { timeout: 60_000 })((it) => {
      it.effect("balance, networks, bundles, order", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const account = yield* newAccount(10_000n)
          const client = yield* resellerClient(account.key)
          const balance = yield* client.wallet.balance()
          assert.strictEqual(balance.balance.main, 10_000n)
          const { networks } = yield* client.catalog.networks()
          assert.isTrue(networks.length >= 4)
          const { bundles } = yield* client.catalog.bundles({ path: { network_id: networks[0]!.id } })
          const placed = yield* client.orders.place({
            payload: { bundle_id: bundles[0]!.id, phone_number: "0241234567", reference: "smoke-1" }
          })
          assert.strictEqual(placed.order.status, "successful")
        }))
    })
  })
}
