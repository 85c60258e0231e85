/**
 * The catalogue: networks, their bundles, price groups and prices.
 *
 * Reads are cached for `Settings.catalogCacheTtl` (5 s by default): the catalogue changes
 * only by operator import, so a listing may lag an import by at most that long on other
 * server processes (the importing process drops its cache at once). Prices charged are
 * never taken from this cache: placement reads the price inside its own transaction.
 */
import { Account, ApiError, Bundle, type Catalog as CatalogFile, Network } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Data, Effect, Option, Schema } from "effect"
import { afterCommit, Int8, Int8Number, orDie, rowsOf, transaction } from "./Database.js"
import { Settings } from "./Settings.js"
import * as TimedCache from "./TimedCache.js"

/** A network's row (`SELECT *`: the columns not named here are left out). */
const NetworkRow = Schema.Struct({
  id: Network.NetworkId,
  slug: Schema.String,
  name: Schema.String,
  color: Schema.String,
  delivery: Schema.String,
  active: Schema.Boolean,
  sort_order: Schema.Number
})

/** A bundle's row (`SELECT *`). */
const BundleRow = Schema.Struct({
  id: Bundle.BundleId,
  network_id: Network.NetworkId,
  key: Schema.String,
  size: Schema.String,
  name: Schema.String,
  badge: Schema.String,
  base_price: Int8,
  active: Schema.Boolean,
  sort_order: Schema.Number
})

type BundleRow = typeof BundleRow.Type

/** A price group's own price of a bundle (`SELECT *`). */
const PriceRow = Schema.Struct({ bundle_id: Bundle.BundleId, price_group_id: Schema.Number, price: Int8 })

/** A price group. */
const GroupRow = Schema.Struct({ id: Schema.Number, name: Account.PriceGroupName })

/** An active network as resellers see it listed, with its bundles counted. */
const ListedNetworkRow = Schema.Struct({ ...Network.Network.fields, bundles_count: Int8Number })

/** A network's bundles with every price, so one cached read serves all price groups. */
interface PricedBundles {
  readonly network: string
  readonly bundles: ReadonlyArray<{
    readonly bundle: Omit<Bundle.Bundle, "price">
    readonly basePrice: bigint
    readonly prices: ReadonlyMap<number, bigint>
  }>
  /** The listing for each price group asked for (`null`: base prices), made once per cached read. */
  readonly listings: Map<number | null, { readonly network: string; readonly bundles: ReadonlyArray<Bundle.Bundle> }>
}

/** Catalogue reads for resellers, and import and export for the operator. */
export class Catalog extends Effect.Service<Catalog>()("core/Catalog", {
  dependencies: [Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* Settings

    const networksCache = TimedCache.make({
      capacity: 1,
      timeToLive: settings.catalogCacheTtl,
      span: "Catalog.networks.lookup",
      lookup: (_: "all") =>
        orDie(rowsOf(
          ListedNetworkRow,
          sql`
            SELECT n.id, n.name, n.slug, n.color, n.delivery, count(b.id) AS bundles_count
            FROM networks n LEFT JOIN bundles b ON b.network_id = n.id
            WHERE n.active
            GROUP BY n.id
            ORDER BY n.sort_order, n.id
          `
        ))
    })

    const bundlesCache = TimedCache.make({
      capacity: 1_000,
      timeToLive: settings.catalogCacheTtl,
      span: "Catalog.bundles.lookup",
      lookup: (networkId: number) =>
        Effect.gen(function*() {
          const [network] = yield* sql<{ name: string }>`SELECT name FROM networks WHERE id = ${networkId} AND active`
          if (network === undefined) return Option.none<PricedBundles>()
          const bundles = yield* rowsOf(
            BundleRow,
            sql`
              SELECT id, network_id, key, size, name, badge, base_price, active, sort_order
              FROM bundles WHERE network_id = ${networkId} ORDER BY sort_order, id
            `
          )
          const prices = yield* rowsOf(
            PriceRow,
            sql`
              SELECT p.bundle_id, p.price_group_id, p.price
              FROM bundle_prices p JOIN bundles b ON b.id = p.bundle_id
              WHERE b.network_id = ${networkId}
            `
          )
          return Option.some<PricedBundles>({
            network: network.name,
            bundles: bundles.map((row) => ({
              bundle: {
                id: row.id,
                size: row.size,
                name: row.name,
                badge: row.badge,
                is_active: row.active
              },
              basePrice: row.base_price,
              prices: new Map(
                prices.filter((p) => p.bundle_id === row.id).map((p) => [p.price_group_id, p.price] as const)
              )
            })),
            listings: new Map()
          })
        }).pipe(orDie)
    })

    // What an import or an edit changed is forgotten once it commits (`afterCommit`): a read
    // between the change and its commit would read the old rows and keep them.
    const forgetAll = afterCommit(Effect.zipRight(networksCache.forgetAll, bundlesCache.forgetAll))

    /** Active networks, in the operator's order, with how many bundles each lists (the same array while cached). */
    const networks = networksCache.get("all").pipe(Effect.withSpan("Catalog.networks"))

    /** What `networks` would give from the cache alone, synchronously; `undefined` when it would read the database. */
    const peekNetworks = () => networksCache.peek("all")

    /** A cached network's listing for a price group, made once per cached read. */
    const listingOf = (found: PricedBundles, priceGroupId: number | null) => {
      const made = found.listings.get(priceGroupId)
      if (made !== undefined) return made
      const listing = {
        network: found.network,
        bundles: found.bundles.map(({ basePrice, bundle, prices }): Bundle.Bundle => ({
          ...bundle,
          price: (priceGroupId === null ? undefined : prices.get(priceGroupId)) ?? basePrice
        }))
      }
      found.listings.set(priceGroupId, listing)
      return listing
    }

    /**
     * A network's bundles, inactive ones included, priced for a price group (`null`: base
     * prices). The same object for as long as the read is cached, so a caller may keep what
     * it derives from it (the server keeps the encoded response) beside it.
     */
    const bundles = Effect.fn("Catalog.bundles")(function*(networkId: number, priceGroupId: number | null) {
      const found = yield* bundlesCache.get(networkId)
      if (Option.isNone(found)) {
        return yield* new Network.NetworkNotFound({ message: `Network ${networkId} not found` })
      }
      return listingOf(found.value, priceGroupId)
    })

    /**
     * What `bundles` would give from the cache alone, synchronously (the same object);
     * `undefined` when it would read the database or fail (no such network).
     */
    const peekBundles = (networkId: number, priceGroupId: number | null) => {
      const found = bundlesCache.peek(networkId)
      return found === undefined || Option.isNone(found) ? undefined : listingOf(found.value, priceGroupId)
    }

    /**
     * Upserts networks, bundles, price groups and prices from a catalogue file, in one
     * transaction; the summary lists what it created and updated (`changes`). A dry run applies
     * the file in a transaction that is rolled back: the summary says what would change, by the
     * very statements that would change it.
     */
    const importFile = Effect.fn("Catalog.import")(function*(
      file: CatalogFile.CatalogFile,
      options: { readonly dryRun?: boolean | undefined } = {}
    ) {
      if (options.dryRun === true) {
        const rolledBack = sql.withTransaction(
          Effect.gen(function*() {
            // Sequences do not roll back: the rows a dry run inserts would use up ids, and the
            // next real import would make, say, bundles 48 to 94 on an empty database. The
            // catalogue tables are locked against other writers for the dry run (reads go on),
            // so nobody else takes an id meanwhile, and each sequence is set back before the
            // rollback.
            yield* sql`LOCK TABLE price_groups, networks, bundles IN SHARE ROW EXCLUSIVE MODE`
            const names = yield* sql<{ seq: string }>`
              SELECT unnest(ARRAY[
                pg_get_serial_sequence('price_groups', 'id'),
                pg_get_serial_sequence('networks', 'id'),
                pg_get_serial_sequence('bundles', 'id')
              ]) AS seq
            `
            // (A sequence is read as a relation; its name comes from Postgres, quoted as needed.)
            const sequences = yield* Effect.forEach(names, ({ seq }) =>
              Effect.map(
                sql.unsafe<{ last_value: string; is_called: boolean }>(
                  `SELECT last_value::text AS last_value, is_called FROM ${seq}`
                ),
                ([state]) => ({ seq, ...state! })
              ))
            const summary = yield* applyImport(sql, file)
            for (const { is_called, last_value, seq } of sequences) {
              yield* sql`SELECT setval(${seq}::regclass, ${last_value}::bigint, ${is_called})`
            }
            return yield* new DryRun({ summary })
          })
        )
        return yield* rolledBack.pipe(
          Effect.catchTag("DryRun", ({ summary }) => Effect.succeed({ ...summary, dry_run: true })),
          orDie
        )
      }
      const summary = yield* transaction(sql, applyImport(sql, file)).pipe(orDie)
      yield* forgetAll
      return summary
    })

    /** The whole catalogue in the import file's format; importing it back changes nothing. */
    const exportFile = Effect.gen(function*() {
      const groups = yield* rowsOf(GroupRow, sql`SELECT id, name FROM price_groups ORDER BY id`)
      const networkRows = yield* rowsOf(NetworkRow, sql`SELECT * FROM networks ORDER BY sort_order, id`)
      const bundleRows = yield* rowsOf(BundleRow, sql`SELECT * FROM bundles ORDER BY sort_order, id`)
      const priceRows = yield* rowsOf(PriceRow, sql`SELECT * FROM bundle_prices ORDER BY price_group_id`)
      const groupName = new Map(groups.map((g) => [g.id, g.name]))
      const file: CatalogFile.CatalogFile = {
        price_groups: groups.map((g) => g.name),
        networks: networkRows.map((n) => ({
          slug: n.slug,
          name: n.name,
          color: n.color,
          delivery: n.delivery,
          active: n.active,
          bundles: bundleRows.filter((b) => b.network_id === n.id).map((b) => ({
            key: b.key,
            size: b.size,
            name: b.name,
            badge: b.badge,
            active: b.active,
            price: b.base_price,
            prices: Object.fromEntries(
              priceRows.filter((p) => p.bundle_id === b.id).map((p) => [groupName.get(p.price_group_id)!, p.price])
            )
          }))
        }))
      }
      return file
    }).pipe(orDie, Effect.withSpan("Catalog.export"))

    /** Every price group's name, in name order. */
    const priceGroups = sql<{ name: string }>`SELECT name FROM price_groups ORDER BY name`.pipe(
      Effect.map((rows) => rows.map((row) => row.name)),
      orDie,
      Effect.withSpan("Catalog.priceGroups")
    )

    /** Every network with every bundle and its prices per group, active or not, for the operator. */
    const adminNetworks = Effect.fn("Catalog.adminNetworks")(function*(only?: number) {
      const groups = yield* rowsOf(GroupRow, sql`SELECT id, name FROM price_groups`)
      const networkRows = yield* rowsOf(
        NetworkRow,
        sql`SELECT * FROM networks ${only === undefined ? sql`` : sql`WHERE id = ${only}`} ORDER BY sort_order, id`
      )
      const bundleRows = yield* rowsOf(
        BundleRow,
        sql`
          SELECT * FROM bundles ${only === undefined ? sql`` : sql`WHERE network_id = ${only}`} ORDER BY sort_order, id
        `
      )
      const priceRows = yield* rowsOf(
        PriceRow,
        sql`
          SELECT p.* FROM bundle_prices p ${
          only === undefined ? sql`` : sql`JOIN bundles b ON b.id = p.bundle_id WHERE b.network_id = ${only}`
        }
        `
      )
      const groupName = new Map(groups.map((g) => [g.id, g.name]))
      const pricesOf = new Map<number, Record<string, bigint>>()
      for (const p of priceRows) {
        const prices = pricesOf.get(p.bundle_id) ?? {}
        prices[groupName.get(p.price_group_id)!] = p.price
        pricesOf.set(p.bundle_id, prices)
      }
      return networkRows.map((n): CatalogFile.AdminNetwork => ({
        id: n.id,
        slug: n.slug,
        name: n.name,
        color: n.color,
        delivery: n.delivery,
        active: n.active,
        bundles: bundleRows.filter((b) => b.network_id === n.id).map((b) => adminBundle(b, pricesOf.get(b.id) ?? {}))
      }))
    }, orDie)

    const adminBundle = (b: BundleRow, prices: Record<string, bigint>): CatalogFile.AdminBundle => ({
      id: b.id,
      network_id: b.network_id,
      key: b.key,
      size: b.size,
      name: b.name,
      badge: b.badge,
      active: b.active,
      price: b.base_price,
      prices
    })

    /** Activates or deactivates a network (its bundles keep their own flags). */
    const updateNetwork = Effect.fn("Catalog.updateNetwork")(function*(id: number, active: boolean) {
      const updated = yield* orDie(sql<{ id: number }>`
        UPDATE networks SET active = ${active}, updated_at = now() WHERE id = ${id} RETURNING id
      `)
      if (updated.length === 0) return yield* new Network.NetworkNotFound({ message: `Network ${id} not found` })
      yield* forgetAll
      return (yield* adminNetworks(id))[0]!
    })

    /**
     * Changes one bundle: its active flag, its base price, and its price per group (a price
     * sets the group's own, `null` removes it so the group pays the base price). An unknown
     * group is a 422 on `prices.<group>` and changes nothing.
     */
    const updateBundle = Effect.fn("Catalog.updateBundle")(
      function*(id: number, patch: CatalogFile.UpdateBundlePayload) {
        const [row] = yield* orDie(rowsOf(BundleRow, sql`SELECT * FROM bundles WHERE id = ${id} FOR UPDATE`))
        if (row === undefined) return yield* new Bundle.BundleNotFound({ message: `Bundle ${id} not found` })
        const groups = yield* orDie(rowsOf(GroupRow, sql`SELECT id, name FROM price_groups`))
        const groupId = new Map<string, number>(groups.map((g) => [g.name, g.id]))
        const groupName = new Map(groups.map((g) => [g.id, g.name]))
        const priceRows = yield* orDie(rowsOf(PriceRow, sql`SELECT * FROM bundle_prices WHERE bundle_id = ${id}`))
        const before = adminBundle(
          row,
          Object.fromEntries(priceRows.map((p) => [groupName.get(p.price_group_id)!, p.price]))
        )
        const unknown = Object.keys(patch.prices ?? {}).filter((name) => !groupId.has(name))
        if (unknown.length > 0) {
          return yield* new ApiError.ValidationError({
            message: `prices names unknown price groups: ${unknown.join(", ")}`,
            errors: Object.fromEntries(
              unknown.map((name) => [`prices.${name}`, [`prices.${name} is not a price group`]])
            )
          })
        }
        const changes: Record<string, unknown> = {}
        if (patch.active !== undefined) changes.active = patch.active
        if (patch.price !== undefined) changes.base_price = patch.price
        if (Object.keys(changes).length > 0) {
          yield* orDie(sql`UPDATE bundles SET ${sql.update(changes)}, updated_at = now() WHERE id = ${id}`)
        }
        for (const [name, price] of Object.entries(patch.prices ?? {})) {
          const group = groupId.get(name)!
          yield* orDie(
            price === null
              ? sql`DELETE FROM bundle_prices WHERE bundle_id = ${id} AND price_group_id = ${group}`
              : sql`
              INSERT INTO bundle_prices (bundle_id, price_group_id, price) VALUES (${id}, ${group}, ${price})
              ON CONFLICT (bundle_id, price_group_id) DO UPDATE SET price = EXCLUDED.price
            `
          )
        }
        yield* forgetAll
        const network = (yield* adminNetworks(row.network_id))[0]!
        return { before, after: network.bundles.find((b) => b.id === id)! }
      }
    )

    return {
      networks,
      peekNetworks,
      bundles,
      peekBundles,
      importFile,
      exportFile,
      adminNetworks,
      priceGroups,
      updateNetwork,
      updateBundle
    }
  })
}) {}

const emptyCounts = () => ({ created: 0, updated: 0, unchanged: 0 })

/** Ends a dry run's transaction (rolled back) carrying what the import would have done. */
class DryRun extends Data.TaggedError("DryRun")<{ readonly summary: CatalogFile.ImportSummary }> {}

/** Field errors of a catalogue file that its schema cannot see: duplicates and unknown price groups. */
const crossCheck = (file: CatalogFile.CatalogFile, knownGroups: ReadonlySet<string>): ApiError.FieldErrors => {
  const errors: Record<string, Array<string>> = {}
  const add = (field: string, message: string) => (errors[field] ??= []).push(`${field} ${message}`)
  const slugs = new Set<string>()
  const keys = new Set<string>()
  const groups = new Set([...knownGroups, ...file.price_groups])
  file.networks.forEach((network, n) => {
    if (slugs.has(network.slug)) add(`networks[${n}].slug`, `"${network.slug}" appears twice`)
    slugs.add(network.slug)
    network.bundles.forEach((bundle, b) => {
      const at = `networks[${n}].bundles[${b}]`
      if (keys.has(bundle.key)) add(`${at}.key`, `"${bundle.key}" appears twice`)
      keys.add(bundle.key)
      for (const group of Object.keys(bundle.prices)) {
        if (!groups.has(group)) add(`${at}.prices.${group}`, "is not a price group: list it in price_groups")
      }
    })
  })
  return errors
}

const applyImport = (sql: SqlClient.SqlClient, file: CatalogFile.CatalogFile) =>
  Effect.gen(function*() {
    const changes: Array<CatalogFile.ImportChange> = []
    const summary = { price_groups: emptyCounts(), networks: emptyCounts(), bundles: emptyCounts(), changes }
    const existingGroups = yield* rowsOf(GroupRow, sql`SELECT id, name FROM price_groups`)
    const errors = crossCheck(file, new Set(existingGroups.map((g) => g.name)))
    if (Object.keys(errors).length > 0) {
      return yield* new ApiError.ValidationError({ message: "The catalogue file has errors", errors })
    }

    const groupId = new Map<string, number>(existingGroups.map((g) => [g.name, g.id]))
    for (const name of new Set(file.price_groups)) {
      if (groupId.has(name)) {
        summary.price_groups.unchanged++
        continue
      }
      const [row] = yield* sql<{ id: number }>`INSERT INTO price_groups (name) VALUES (${name}) RETURNING id`
      groupId.set(name, row!.id)
      summary.price_groups.created++
      changes.push({ kind: "price_group", action: "create", key: name })
    }

    const networks = new Map((yield* rowsOf(NetworkRow, sql`SELECT * FROM networks`)).map((n) => [n.slug, n]))
    const bundles = new Map((yield* rowsOf(BundleRow, sql`SELECT * FROM bundles`)).map((b) => [b.key, b]))
    const prices = yield* rowsOf(PriceRow, sql`SELECT * FROM bundle_prices`)

    for (const [n, network] of file.networks.entries()) {
      const wanted = { name: network.name, color: network.color, delivery: network.delivery, active: network.active }
      const current = networks.get(network.slug)
      let networkId: number
      if (current === undefined) {
        const [row] = yield* sql<{ id: number }>`
          INSERT INTO networks ${sql.insert({ slug: network.slug, ...wanted, sort_order: n })} RETURNING id
        `
        networkId = row!.id
        summary.networks.created++
        changes.push({ kind: "network", action: "create", key: network.slug })
      } else {
        networkId = current.id
        const same = current.name === wanted.name && current.color === wanted.color &&
          current.delivery === wanted.delivery && current.active === wanted.active && current.sort_order === n
        if (same) {
          summary.networks.unchanged++
        } else {
          yield* sql`
            UPDATE networks SET ${sql.update({ ...wanted, sort_order: n })}, updated_at = now() WHERE id = ${networkId}
          `
          summary.networks.updated++
          changes.push({ kind: "network", action: "update", key: network.slug })
        }
      }

      for (const [b, bundle] of network.bundles.entries()) {
        const fields = {
          network_id: networkId,
          size: bundle.size,
          name: bundle.name,
          badge: bundle.badge,
          base_price: bundle.price,
          active: bundle.active,
          sort_order: b
        }
        const currentBundle = bundles.get(bundle.key)
        let bundleId: number
        let changed: boolean
        if (currentBundle === undefined) {
          const [row] = yield* sql<{ id: number }>`
            INSERT INTO bundles ${sql.insert({ key: bundle.key, ...fields })} RETURNING id
          `
          bundleId = row!.id
          changed = true
        } else {
          bundleId = currentBundle.id
          changed = currentBundle.network_id !== fields.network_id || currentBundle.size !== fields.size ||
            currentBundle.name !== fields.name || currentBundle.badge !== fields.badge ||
            currentBundle.base_price !== fields.base_price || currentBundle.active !== fields.active ||
            currentBundle.sort_order !== fields.sort_order
          if (changed) {
            yield* sql`UPDATE bundles SET ${sql.update(fields)}, updated_at = now() WHERE id = ${bundleId}`
          }
        }

        // The file is the truth for the prices of the bundles it lists.
        const currentPrices = new Map(
          prices.filter((p) => p.bundle_id === bundleId).map((p) => [p.price_group_id, p.price])
        )
        const wantedPrices = new Map(
          Object.entries(bundle.prices).map(([group, price]) => [groupId.get(group)!, price] as const)
        )
        for (const [group] of currentPrices) {
          if (!wantedPrices.has(group)) {
            yield* sql`DELETE FROM bundle_prices WHERE bundle_id = ${bundleId} AND price_group_id = ${group}`
            changed = true
          }
        }
        for (const [group, price] of wantedPrices) {
          if (currentPrices.get(group) !== price) {
            yield* sql`
              INSERT INTO bundle_prices (bundle_id, price_group_id, price) VALUES (${bundleId}, ${group}, ${price})
              ON CONFLICT (bundle_id, price_group_id) DO UPDATE SET price = EXCLUDED.price
            `
            changed = true
          }
        }
        if (currentBundle === undefined) {
          summary.bundles.created++
          changes.push({ kind: "bundle", action: "create", key: bundle.key })
        } else if (changed) {
          summary.bundles.updated++
          changes.push({ kind: "bundle", action: "update", key: bundle.key })
        } else {
          summary.bundles.unchanged++
        }
      }
    }
    return summary
  })
