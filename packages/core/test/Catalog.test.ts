import { ApiError, Catalog as CatalogContract, Network } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { Catalog } from "../src/Catalog.js"
import * as Database from "../src/Database.js"
import { catalogFile, Domain, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

const file = (value: unknown) => Schema.decodeUnknownSync(CatalogContract.CatalogFile)(value)

for (const target of targets) {
  describe(`Catalog on ${target.name}`, () => {
    layer(Domain.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("an import creates, a second import of the same file changes nothing", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          const { changes: made, ...first } = yield* catalog.importFile(catalogFile)
          assert.strictEqual(made?.length, 9, "every group, network and bundle made is listed")
          assert.deepStrictEqual(first, {
            price_groups: { created: 2, updated: 0, unchanged: 0 },
            networks: { created: 3, updated: 0, unchanged: 0 },
            bundles: { created: 4, updated: 0, unchanged: 0 }
          })
          const again = yield* catalog.importFile(catalogFile)
          assert.deepStrictEqual(again, {
            changes: [],
            price_groups: { created: 0, updated: 0, unchanged: 2 },
            networks: { created: 0, updated: 0, unchanged: 3 },
            bundles: { created: 0, updated: 0, unchanged: 4 }
          })
          // The export is the same catalogue: importing it changes nothing either.
          const exported = yield* catalog.exportFile
          const third = yield* catalog.importFile(exported)
          assert.strictEqual(third.bundles.unchanged, 4)
          assert.strictEqual(third.networks.unchanged, 3)
        }))

      it.effect("a dry run changes nothing, ids included: the real import after it takes the next ids", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          const sql = yield* SqlClient.SqlClient
          const maxIds = sql<{ groups: number; networks: number; bundles: number }>`
            SELECT (SELECT coalesce(max(id), 0) FROM price_groups) AS groups,
              (SELECT coalesce(max(id), 0) FROM networks) AS networks,
              (SELECT coalesce(max(id), 0) FROM bundles) AS bundles
          `
          const [before] = yield* maxIds
          const fresh = file({
            price_groups: ["dry-run-group"],
            networks: [{
              slug: "dry-run-net",
              name: "Dry Run",
              color: "#000000",
              delivery: "now",
              // Inactive, so the listings the tests below read stay as they are.
              active: false,
              bundles: [
                { key: "dry-run-1", size: "1GB", name: "Dry 1GB", price: 1, active: true },
                { key: "dry-run-2", size: "2GB", name: "Dry 2GB", price: 2, active: true }
              ]
            }]
          })
          for (let i = 0; i < 3; i++) {
            const preview = yield* catalog.importFile(fresh, { dryRun: true })
            assert.strictEqual(preview.bundles.created, 2)
          }
          const [unchanged] = yield* maxIds
          assert.deepStrictEqual(unchanged, before)
          yield* catalog.importFile(fresh)
          const [after] = yield* maxIds
          assert.deepStrictEqual(after, {
            groups: Number(before!.groups) + 1,
            networks: Number(before!.networks) + 1,
            bundles: Number(before!.bundles) + 2
          })
        }))

      it.effect("listings: active networks only, bundle counts, inactive bundles shown, group prices", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          const { networks } = yield* seedCatalog
          assert.deepStrictEqual(networks.map((n) => [n.slug, n.bundles_count]), [["mtn", 3], ["telecel", 1]])
          const mtn = networks[0]!
          const base = yield* catalog.bundles(mtn.id, null)
          assert.strictEqual(base.network, "MTN")
          assert.deepStrictEqual(base.bundles.map((b) => [b.name, b.price, b.is_active, b.badge]), [
            ["MTN 1GB", 550n, true, "Non-expiry"],
            ["MTN 2GB", 1050n, true, ""],
            ["MTN 500MB", 300n, false, ""]
          ])
          const sql = yield* SqlClient.SqlClient
          const [agent] = yield* sql<{ id: number }>`SELECT id FROM price_groups WHERE name = 'agent'`
          const priced = yield* catalog.bundles(mtn.id, agent!.id)
          assert.deepStrictEqual(priced.bundles.map((b) => b.price), [500n, 1050n, 300n])
        }))

      it.effect("networks and a network's bundles are read once and then served from the cache", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          const sql = yield* SqlClient.SqlClient
          const { networks } = yield* seedCatalog
          const mtn = networks.find((n) => n.slug === "mtn")!
          const before = yield* catalog.networks
          const listing = yield* catalog.bundles(mtn.id, null)
          // Changed behind the service's back: the cache does not see it until it expires.
          yield* sql`UPDATE networks SET name = 'Renamed' WHERE id = ${mtn.id}`
          try {
            assert.strictEqual(yield* catalog.networks, before)
            assert.strictEqual(yield* catalog.bundles(mtn.id, null), listing)
          } finally {
            yield* sql`UPDATE networks SET name = ${mtn.name} WHERE id = ${mtn.id}`
          }
        }))

      it.effect("what a transaction runs after commit runs once it commits, and not when it rolls back", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const ran: Array<string> = []
          const note = (name: string) => Database.afterCommit(Effect.sync(() => ran.push(name)))
          yield* note("outside")
          assert.deepStrictEqual(ran, ["outside"])
          yield* Database.transaction(
            sql,
            Effect.gen(function*() {
              yield* note("outer")
              yield* Database.transaction(sql, note("nested"))
              // Neither runs before the outer transaction commits.
              assert.deepStrictEqual(ran, ["outside"])
            })
          )
          assert.deepStrictEqual(ran, ["outside", "outer", "nested"])
          yield* Effect.exit(Database.transaction(sql, Effect.zipRight(note("rolled back"), Effect.fail("no"))))
          assert.deepStrictEqual(ran, ["outside", "outer", "nested"])
        }))

      // A read outside the transaction while it is open needs a second connection: Postgres only
      // (the embedded database runs one statement or transaction at a time).
      it.effect.skipIf(target.name !== "postgres")(
        "a read between an edit and its commit does not keep the old catalogue",
        () =>
          Effect.gen(function*() {
            const catalog = yield* Catalog
            const sql = yield* SqlClient.SqlClient
            const { networks } = yield* seedCatalog
            const telecel = networks.find((n) => n.slug === "telecel")!
            const outsideTheTransaction = Effect.mapInputContext(
              catalog.networks,
              (context: Context.Context<never>) => Context.omit(SqlClient.TransactionConnection)(context)
            )
            yield* Database.transaction(
              sql,
              Effect.gen(function*() {
                yield* catalog.updateNetwork(telecel.id, false)
                // Not committed: another connection still reads it active, and the cache keeps that.
                assert.isTrue((yield* outsideTheTransaction).some((n) => n.id === telecel.id))
              })
            )
            assert.isFalse((yield* catalog.networks).some((n) => n.id === telecel.id))
            yield* catalog.updateNetwork(telecel.id, true)
            assert.isTrue((yield* catalog.networks).some((n) => n.id === telecel.id))
          })
      )

      it.effect("an unknown or inactive network is not found", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          yield* seedCatalog
          const exported = yield* catalog.exportFile
          assert.isTrue(exported.networks.some((n) => n.slug === "closed" && !n.active))
          assert.instanceOf(yield* Effect.flip(catalog.bundles(999_999, null)), Network.NetworkNotFound)
        }))

      it.effect("a changed price is one update, shown to this process at once; a dropped group price is removed", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          const { mtn1gb, networks } = yield* seedCatalog
          const changed: CatalogContract.CatalogFile = {
            ...catalogFile,
            networks: catalogFile.networks.map((n) =>
              n.slug !== "mtn"
                ? n
                : { ...n, bundles: n.bundles.map((b) => b.key === "mtn-1gb" ? { ...b, price: 600n, prices: {} } : b) }
            )
          }
          const summary = yield* catalog.importFile(changed)
          assert.deepStrictEqual(summary.bundles, { created: 0, updated: 1, unchanged: 3 })
          const listed = yield* catalog.bundles(networks[0]!.id, null)
          assert.strictEqual(listed.bundles.find((b) => b.id === mtn1gb)!.price, 600n)
          const exported = yield* catalog.exportFile
          const bundle = exported.networks[0]!.bundles.find((b) => b.key === "mtn-1gb")!
          assert.deepStrictEqual(bundle.prices, {})
          yield* catalog.importFile(catalogFile)
        }))

      it.effect("duplicate slugs and keys and unknown price groups are refused, changing nothing", () =>
        Effect.gen(function*() {
          const catalog = yield* Catalog
          yield* seedCatalog
          const before = yield* catalog.exportFile
          const bad = file({
            price_groups: [],
            networks: [
              {
                slug: "dup",
                name: "A",
                color: "#000000",
                delivery: "x",
                bundles: [{ key: "k1", size: "1GB", name: "A", price: 1, prices: { vip: 1 } }]
              },
              {
                slug: "dup",
                name: "B",
                color: "#000000",
                delivery: "x",
                bundles: [{ key: "k1", size: "1GB", name: "B", price: 1 }]
              }
            ]
          })
          const error = yield* Effect.flip(catalog.importFile(bad))
          assert.instanceOf(error, ApiError.ValidationError)
          assert.deepStrictEqual(Object.keys((error as ApiError.ValidationError).errors).sort(), [
            "networks[0].bundles[0].prices.vip",
            "networks[1].bundles[0].key",
            "networks[1].slug"
          ])
          assert.deepStrictEqual(yield* catalog.exportFile, before)
        }))
    })
  })
}
