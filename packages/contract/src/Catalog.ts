/**
 * The catalogue file: networks, bundles, price groups and prices, as the operator imports them.
 * Networks are matched by `slug`, bundles by `key`; importing the same file twice changes nothing.
 */
import { Schema } from "effect"
import { PriceGroupName } from "./Account.js"
import { PositiveCedis } from "./Money.js"
import { HexColor, NetworkSlug } from "./Network.js"
import { text } from "./Text.js"

/** A bundle's stable key in the catalogue file (`mtn-1gb`). */
export const BundleKey = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_.-]{0,63}$/, {
    message: () => "must be 1 to 64 characters of a-z, 0-9, _, . and -"
  })
)

/** A bundle in the catalogue file. */
export const CatalogBundle = Schema.Struct({
  key: BundleKey,
  size: text(32),
  name: text(100),
  badge: Schema.optionalWith(text(100, 0), { default: () => "" }),
  active: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  price: PositiveCedis.annotations({ description: "Base price, paid by accounts whose group has no price of its own" }),
  // Keys are checked against the file's and the database's price groups by the import, so that a
  // misspelt group is an error rather than a key the schema would quietly drop.
  prices: Schema.optionalWith(Schema.Record({ key: Schema.String, value: PositiveCedis }), { default: () => ({}) })
}).annotations({ identifier: "CatalogBundle" })

/** The type of `CatalogBundle`. */
export type CatalogBundle = typeof CatalogBundle.Type

/** A network in the catalogue file, with its bundles in display order. */
export const CatalogNetwork = Schema.Struct({
  slug: NetworkSlug,
  name: text(100),
  color: HexColor,
  delivery: text(100),
  active: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  bundles: Schema.Array(CatalogBundle).pipe(Schema.maxItems(500))
}).annotations({ identifier: "CatalogNetwork" })

/** The type of `CatalogNetwork`. */
export type CatalogNetwork = typeof CatalogNetwork.Type

/** The whole catalogue file. */
export const CatalogFile = Schema.Struct({
  price_groups: Schema.optionalWith(Schema.Array(PriceGroupName).pipe(Schema.maxItems(100)), { default: () => [] }),
  networks: Schema.Array(CatalogNetwork).pipe(Schema.maxItems(100))
}).annotations({ identifier: "CatalogFile", parseOptions: { errors: "all" } })

/** The type of `CatalogFile`. */
export type CatalogFile = typeof CatalogFile.Type

/** What an import did to one kind of record. */
export const ImportCounts = Schema.Struct({ created: Schema.Int, updated: Schema.Int, unchanged: Schema.Int })

/** The type of `ImportCounts`. */
export type ImportCounts = typeof ImportCounts.Type

/** One thing an import creates or updates: a price group by name, a network by slug, a bundle by key. */
export const ImportChange = Schema.Struct({
  kind: Schema.Literal("price_group", "network", "bundle"),
  action: Schema.Literal("create", "update"),
  key: Schema.String
}).annotations({ identifier: "ImportChange" })

/** The type of `ImportChange`. */
export type ImportChange = typeof ImportChange.Type

/** What an import did (or, as a dry run, would do). */
export const ImportSummary = Schema.Struct({
  price_groups: ImportCounts,
  networks: ImportCounts,
  bundles: ImportCounts,
  changes: Schema.optional(Schema.Array(ImportChange)).annotations({
    description: "Each thing created or updated, in file order"
  }),
  dry_run: Schema.optional(Schema.Boolean).annotations({ description: "true: nothing was changed" })
}).annotations({ identifier: "ImportSummary" })

/** The type of `ImportSummary`. */
export type ImportSummary = typeof ImportSummary.Type

/** A bundle as the operator manages it: by id, with every price. */
export const AdminBundle = Schema.Struct({
  id: Schema.Int,
  network_id: Schema.Int,
  key: Schema.String,
  size: Schema.String,
  name: Schema.String,
  badge: Schema.String,
  active: Schema.Boolean,
  price: PositiveCedis.annotations({ description: "Base price" }),
  prices: Schema.Record({ key: Schema.String, value: PositiveCedis }).annotations({
    description: "Price per price group that has its own"
  })
}).annotations({ identifier: "AdminBundle" })

/** The type of `AdminBundle`. */
export type AdminBundle = typeof AdminBundle.Type

/** A network as the operator manages it, with its bundles in display order (active or not). */
export const AdminNetwork = Schema.Struct({
  id: Schema.Int,
  slug: Schema.String,
  name: Schema.String,
  color: Schema.String,
  delivery: Schema.String,
  active: Schema.Boolean,
  bundles: Schema.Array(AdminBundle)
}).annotations({ identifier: "AdminNetwork" })

/** The type of `AdminNetwork`. */
export type AdminNetwork = typeof AdminNetwork.Type

/** The body of PATCH /admin/v1/networks/{network_id}. */
export const UpdateNetworkPayload = Schema.Struct({ active: Schema.Boolean }).annotations({
  parseOptions: { errors: "all" }
})

/**
 * The body of PATCH /admin/v1/bundles/{bundle_id}; fields left out are unchanged. In `prices`
 * a number sets a group's price and `null` removes it (the group then pays the base price).
 */
export const UpdateBundlePayload = Schema.Struct({
  active: Schema.optional(Schema.Boolean),
  price: Schema.optional(PositiveCedis),
  prices: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.NullOr(PositiveCedis) }))
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `UpdateBundlePayload`. */
export type UpdateBundlePayload = typeof UpdateBundlePayload.Type
