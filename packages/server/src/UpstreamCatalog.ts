/**
 * The operator's view of the upstreams (balances, circuits, what they hold) and the catalogue
 * sync: our networks and bundles created, priced and deactivated from the upstreams' own
 * catalogues, each bundle mapped to its bundle id at every upstream that sells it.
 *
 * Matching: an upstream bundle already mapped keeps its bundle; otherwise it joins our bundle
 * of the same network and size (so a second upstream, or a catalogue imported by hand, maps
 * onto the same bundles); otherwise a bundle is created. Prices: the dearest active upstream
 * of a bundle sets its cost, so whichever upstream delivers, we never sell below cost; the
 * markup is applied to that cost and rounded up to the pesewa. A bundle is active exactly
 * when some configured upstream sells it: ours sells nothing no upstream can deliver. Labels
 * (name, size, badge) of existing bundles stay the operator's. An upstream bundle priced at or
 * below zero, or so high that its price here would pass the most a price may be, is refused
 * (shown in the diff as `refuse`) and treated as not sold; the rest are synced.
 */
import { ApiError, Catalog as CatalogContract, Money, Upstream as UpstreamContract } from "@databundle/contract"
import { Catalog, Database } from "@databundle/core"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import * as OutsideAnswers from "./OutsideAnswers.js"
import * as UpstreamConfig from "./UpstreamConfig.js"
import { Upstreams } from "./Upstreams.js"

type Change = typeof UpstreamContract.CatalogChange.Type
type SyncPayload = typeof UpstreamContract.CatalogSyncPayload.Type
type CatalogFile = CatalogContract.CatalogFile
type FileBundle = CatalogFile["networks"][number]["bundles"][number]

/** One upstream's bundle mapped to ours, with its price there. */
const Mapping = Schema.Struct({
  upstream: Schema.String,
  upstream_bundle_id: Schema.Number,
  bundle_key: Schema.String,
  upstream_price: Database.Int8,
  active: Schema.Boolean
})

type Mapping = typeof Mapping.Type

const keyPart = (text: string) =>
  text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40) || "bundle"

const cannotRead = (name: string, error: unknown) =>
  new ApiError.BadRequest({
    message: `Cannot read the catalogue of upstream ${name}: ${
      OutsideAnswers.isTooLarge(error)
        ? new OutsideAnswers.AnswerTooLarge().message
        : (error as { message?: string })?.message ?? String(error)
    }`
  })

/** What the upstream handlers need. */
export type Requirements = Upstreams | SqlClient.SqlClient | Catalog.Catalog

/** GET /upstreams: each upstream with its balance, read now. */
export const list = Effect.gen(function*() {
  const { all } = yield* Upstreams
  const sql = yield* SqlClient.SqlClient
  const provider = yield* UpstreamConfig.provider.pipe(Effect.orDie)
  const now = yield* Clock.currentTimeMillis
  const held = yield* sql<{ upstream: string; count: string }>`
    SELECT u.upstream, count(*) AS count FROM upstream_orders u JOIN orders o ON o.order_number = u.order_number
    WHERE o.status = 'pending' AND u.state IN ('placing', 'placed') GROUP BY u.upstream
  `.pipe(Database.orDie)
  const mapped = yield* sql<{ upstream: string; total: string; active: string }>`
    SELECT upstream, count(*) AS total, count(*) FILTER (WHERE active) AS active FROM upstream_bundles GROUP BY upstream
  `.pipe(Database.orDie)
  const upstreams = yield* Effect.forEach(all, (upstream) =>
    Effect.gen(function*() {
      const balance = yield* Effect.either(upstream.client.balance())
      const main = balance._tag === "Right" ? balance.right.main : null
      const low = Option.getOrNull(upstream.config.lowBalance)
      const counts = mapped.find((m) => m.upstream === upstream.config.name)
      return {
        name: upstream.config.name,
        url: upstream.config.url,
        networks: upstream.config.priorities,
        balance: main,
        low_balance: low,
        balance_low: main !== null && low !== null && main < low,
        error: balance._tag === "Left" ? (balance.left as { message?: string }).message ?? "unreadable" : null,
        circuit: upstream.circuit.isOpen(now) ? "open" as const : "closed" as const,
        pending_orders: Number(held.find((h) => h.upstream === upstream.config.name)?.count ?? 0),
        bundles: Number(counts?.total ?? 0),
        active_bundles: Number(counts?.active ?? 0)
      }
    }), { concurrency: 4 })
  return { provider, upstreams }
})

/** POST /upstreams/catalog-sync. */
export const sync = <R = never>(
  payload: SyncPayload,
  /** Runs in the transaction that applies the changes (the action log's line), only when some are applied. */
  onApply?: (changes: ReadonlyArray<Change>, upstreams: ReadonlyArray<string>) => Effect.Effect<void, never, R>
) =>
  Effect.gen(function*() {
    const { all } = yield* Upstreams
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* Catalog.Catalog
    if (all.length === 0) {
      return yield* Effect.fail(
        ApiError.ValidationError.field("upstream", "cannot be synced: no upstream is configured (BUNDLES_PROVIDER)")
      )
    }
    const targets = payload.upstream === undefined ? all : all.filter((u) => u.config.name === payload.upstream)
    if (targets.length === 0) {
      return yield* Effect.fail(ApiError.ValidationError.field("upstream", `"${payload.upstream}" is not configured`))
    }

    // Read every target's catalogue before changing anything.
    const offers = yield* Effect.forEach(targets, (upstream) =>
      Effect.gen(function*() {
        const networks = yield* upstream.client.networks()
        const withBundles = yield* Effect.forEach(
          networks,
          (network) => Effect.map(upstream.client.bundles(network.id), (bundles) => ({ network, bundles })),
          { concurrency: 2 }
        )
        return { upstream, networks: withBundles }
      }).pipe(Effect.mapError((error) => cannotRead(upstream.config.name, error))))

    const current = yield* catalog.exportFile
    const groups = new Set(current.price_groups as ReadonlyArray<string>)
    for (const group of Object.keys(payload.price_groups)) {
      if (!groups.has(group)) {
        return yield* Effect.fail(ApiError.ValidationError.field("price_groups", `has an unknown group "${group}"`))
      }
    }
    const existing = yield* Database.rowsOf(
      Mapping,
      sql`
        SELECT ub.upstream, ub.upstream_bundle_id, b.key AS bundle_key, ub.upstream_price, ub.active
        FROM upstream_bundles ub JOIN bundles b ON b.id = ub.bundle_id
      `
    ).pipe(Database.orDie)

    // The desired catalogue: a copy of ours, changed in place.
    const desired: { price_groups: CatalogFile["price_groups"]; networks: Array<any> } = {
      price_groups: current.price_groups,
      networks: current.networks.map((n) => ({
        ...n,
        bundles: n.bundles.map((b) => ({ ...b, prices: { ...b.prices } }))
      }))
    }
    const mappings = new Map<string, Mapping>()
    for (const row of existing) {
      mappings.set(`${row.upstream}/${row.upstream_bundle_id}`, row)
    }
    const keys = new Set(desired.networks.flatMap((n) => n.bundles.map((b: FileBundle) => b.key)))
    const changes: Array<Change> = []
    const targetNames = new Set(targets.map((t) => t.config.name))
    // The dearest markup any of our prices takes: a cost it would take past the bound is refused.
    const markups = [payload.markup, ...Object.values(payload.price_groups)].map(UpstreamContract.markupBasisPoints)
    const dearest = markups.reduce((max, m) => m > max ? m : max, 0n)

    // What the targets sell now; anything of theirs not seen is no longer sold.
    for (const mapping of mappings.values()) {
      if (targetNames.has(mapping.upstream)) {
        mappings.set(`${mapping.upstream}/${mapping.upstream_bundle_id}`, {
          ...mapping,
          active: false
        })
      }
    }
    for (const { networks, upstream } of offers) {
      const name = upstream.config.name
      for (const { bundles, network } of networks) {
        if (Option.isNone(UpstreamConfig.priorityFor(upstream.config, network.slug))) continue
        let ours = desired.networks.find((n) => n.slug === network.slug)
        if (ours === undefined) {
          ours = {
            slug: network.slug,
            name: network.name,
            color: network.color,
            delivery: network.delivery,
            active: true,
            bundles: []
          }
          desired.networks.push(ours)
          changes.push({
            change: "create",
            kind: "network",
            key: network.slug,
            detail: `${network.name} (from ${name})`
          })
        }
        for (const bundle of bundles) {
          const id = `${name}/${bundle.id}`
          const known = mappings.get(id)
          const refusal = bundle.price <= 0n
            ? "at or below zero"
            : UpstreamContract.withMarkup(bundle.price, dearest) > Money.MAX_PESEWAS
            ? `which with the markup passes ${Money.formatGhs(Money.MAX_PESEWAS)}, the most a price may be`
            : undefined
          if (refusal !== undefined) {
            // Not sold, as far as this sync goes: a bundle only it sold is deactivated.
            changes.push({
              change: "refuse",
              kind: "bundle",
              key: known?.bundle_key ?? `${network.slug}/${name}-${bundle.id}`,
              detail: `${name} prices bundle ${bundle.id} (${bundle.name}) at ${
                Money.formatGhs(bundle.price)
              }, ${refusal}`
            })
            continue
          }
          let key = known?.bundle_key
          if (key === undefined) {
            const taken = new Set([...mappings.values()].filter((m) => m.upstream === name).map((m) => m.bundle_key))
            const same = ours.bundles.find((b: FileBundle) =>
              b.size.toLowerCase() === bundle.size.toLowerCase() && !taken.has(b.key)
            )
            if (same !== undefined) {
              key = same.key as string
            } else {
              let candidate = `${network.slug}-${keyPart(bundle.size)}`.slice(0, 64)
              if (keys.has(candidate)) {
                candidate = `${network.slug}-${keyPart(bundle.size)}-${name}-${bundle.id}`.slice(0, 64)
              }
              key = candidate
              keys.add(key)
              ours.bundles.push({
                key,
                size: bundle.size,
                name: bundle.name,
                badge: bundle.badge,
                active: false,
                price: bundle.price,
                prices: {}
              })
              changes.push({ change: "create", kind: "bundle", key, detail: `${bundle.name} (${network.slug})` })
            }
            changes.push({ change: "map", kind: "bundle", key, detail: `${name} bundle ${bundle.id}` })
          }
          mappings.set(id, {
            upstream: name,
            upstream_bundle_id: bundle.id,
            bundle_key: key,
            upstream_price: bundle.price,
            active: bundle.is_active
          })
        }
      }
    }

    // Prices and activeness from the mappings of configured upstreams.
    const configured = new Set(all.map((u) => u.config.name))
    const base = UpstreamContract.markupBasisPoints(payload.markup)
    let unchanged = 0
    for (const network of desired.networks) {
      for (const bundle of network.bundles as Array<any>) {
        const sellers = [...mappings.values()].filter((m) =>
          m.bundle_key === bundle.key && m.active && configured.has(m.upstream)
        )
        const before = current.networks.flatMap((n) => n.bundles).find((b) => b.key === bundle.key)
        const active = sellers.length > 0
        if (active) {
          const cost = sellers.reduce((max, m) => m.upstream_price > max ? m.upstream_price : max, 0n)
          bundle.price = UpstreamContract.withMarkup(cost, base)
          for (const [group, markup] of Object.entries(payload.price_groups)) {
            bundle.prices[group] = UpstreamContract.withMarkup(cost, UpstreamContract.markupBasisPoints(markup))
          }
        }
        bundle.active = active
        if (before === undefined) continue
        const details: Array<string> = []
        if (before.price !== bundle.price) {
          details.push(`price ${Money.formatCedis(before.price)} -> ${Money.formatCedis(bundle.price)}`)
        }
        for (const group of Object.keys(bundle.prices)) {
          if (before.prices[group] !== bundle.prices[group]) {
            details.push(
              `${group} ${before.prices[group] === undefined ? "-" : Money.formatCedis(before.prices[group]!)} -> ${
                Money.formatCedis(bundle.prices[group])
              }`
            )
          }
        }
        if (before.active && !active) {
          changes.push({
            change: "deactivate",
            kind: "bundle",
            key: bundle.key,
            detail: "no configured upstream sells it"
          })
        } else if (!before.active && active) {
          changes.push({ change: "activate", kind: "bundle", key: bundle.key, detail: details.join(", ") })
        } else if (details.length > 0) {
          changes.push({ change: "update", kind: "bundle", key: bundle.key, detail: details.join(", ") })
        } else {
          unchanged++
        }
      }
    }
    for (const mapping of mappings.values()) {
      const was = existing.find((e) =>
        e.upstream === mapping.upstream && e.upstream_bundle_id === mapping.upstream_bundle_id
      )
      if (was !== undefined && was.active && !mapping.active) {
        changes.push({
          change: "unmap",
          kind: "bundle",
          key: mapping.bundle_key,
          detail: `${mapping.upstream} no longer sells bundle ${mapping.upstream_bundle_id}`
        })
      }
    }

    if (
      !payload.dry_run && (changes.length > 0 || [...mappings.values()].some((m) => {
        const was = existing.find((e) => e.upstream === m.upstream && e.upstream_bundle_id === m.upstream_bundle_id)
        return was === undefined || was.upstream_price !== m.upstream_price || was.active !== m.active
      }))
    ) {
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* catalog.importFile(desired as CatalogFile)
        for (const m of mappings.values()) {
          yield* sql`
            INSERT INTO upstream_bundles (bundle_id, upstream, upstream_bundle_id, upstream_price, active)
            SELECT id, ${m.upstream}, ${m.upstream_bundle_id}, ${m.upstream_price}, ${m.active}
            FROM bundles WHERE key = ${m.bundle_key}
            ON CONFLICT (upstream, upstream_bundle_id) DO UPDATE SET bundle_id = EXCLUDED.bundle_id,
              upstream_price = EXCLUDED.upstream_price, active = EXCLUDED.active, synced_at = now()
          `
        }
        if (onApply !== undefined) yield* onApply(changes, targets.map((t) => t.config.name))
      })).pipe(Effect.catchTag("SqlError", Effect.die))
    }
    return {
      dry_run: payload.dry_run,
      upstreams: targets.map((t) => t.config.name),
      changes,
      unchanged
    }
  })
