/**
 * Upstreams: the wholesalers of this same API the server buys from (`BUNDLES_PROVIDER=upstream`),
 * as the operator sees them, and the catalogue sync that prices our bundles from theirs.
 */
import { Schema } from "effect"
import { PriceGroupName } from "./Account.js"
import { Succeeded } from "./ApiError.js"
import { Cedis } from "./Money.js"

/** An upstream's name, as in the server's configuration. */
export const UpstreamName = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,31}$/, { message: () => "must be 1 to 32 characters of a-z, 0-9, _ and -" })
)

/** A markup as a percentage with at most two decimals: `8%`, `12.5%`. */
export const Markup = Schema.String.pipe(
  Schema.pattern(/^\d{1,4}(\.\d{1,2})?%$/, { message: () => "must be a percentage such as 8% or 12.5%" })
)

/** A markup in basis points (`8.5%` is 850). */
export const markupBasisPoints = (markup: string): bigint => {
  const [whole, fraction = ""] = markup.slice(0, -1).split(".")
  return BigInt(whole!) * 100n + BigInt((fraction + "00").slice(0, 2))
}

/** A cost with a markup, rounded up to the pesewa. */
export const withMarkup = (cost: bigint, basisPoints: bigint): bigint =>
  (cost * (10_000n + basisPoints) + 9_999n) / 10_000n

/** One upstream as the operator sees it. */
export const UpstreamView = Schema.Struct({
  name: UpstreamName,
  url: Schema.String,
  /** Network slug (or `*`) to priority, lower first. */
  networks: Schema.Record({ key: Schema.String, value: Schema.Int }),
  /** Its main balance there; null when it could not be read. */
  balance: Schema.NullOr(Cedis),
  low_balance: Schema.NullOr(Cedis),
  /** True when the balance is below `low_balance`. */
  balance_low: Schema.Boolean,
  /** Why the balance could not be read. */
  error: Schema.NullOr(Schema.String),
  circuit: Schema.Literal("closed", "open"),
  /** Our orders it holds or may hold that are still pending. */
  pending_orders: Schema.Int,
  /** Our bundles mapped to it, and how many of those it sells now. */
  bundles: Schema.Int,
  active_bundles: Schema.Int
}).annotations({ identifier: "Upstream" })

/** 200 of GET /upstreams. */
export const UpstreamsResponse = Schema.Struct({
  success: Succeeded,
  provider: Schema.Literal("simulator", "upstream", "reloadly"),
  upstreams: Schema.Array(UpstreamView)
})

/** The body of POST /upstreams/catalog-sync. */
export const CatalogSyncPayload = Schema.Struct({
  /** Only this upstream; every configured one when left out. */
  upstream: Schema.optional(UpstreamName),
  /** The base price's markup over the upstream's price (default 0%). */
  markup: Schema.optionalWith(Markup, { default: () => "0%" }),
  /** A price per group, as a markup over the upstream's price. */
  price_groups: Schema.optionalWith(Schema.Record({ key: PriceGroupName, value: Markup }), { default: () => ({}) }),
  /** Compute and show the changes without applying them. */
  dry_run: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

/**
 * One change of a sync. `refuse`: an upstream bundle not synced, because its price there is
 * at or below zero or would pass the most a price may be here.
 */
export const CatalogChange = Schema.Struct({
  change: Schema.Literal("create", "update", "deactivate", "activate", "map", "unmap", "refuse"),
  kind: Schema.Literal("network", "bundle"),
  key: Schema.String,
  detail: Schema.String
}).annotations({ identifier: "CatalogChange" })

/** 200 of POST /upstreams/catalog-sync: what changed (or would change, with `dry_run`). */
export const CatalogSyncResponse = Schema.Struct({
  success: Succeeded,
  dry_run: Schema.Boolean,
  upstreams: Schema.Array(UpstreamName),
  changes: Schema.Array(CatalogChange),
  unchanged: Schema.Int
})
