/**
 * Bundles: the data packages of a network, priced per account.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { extensions, Failed } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"
import { Cedis } from "./Money.js"

/** A bundle's identifier, used when ordering. */
export const BundleId = Schema.Int.pipe(
  Schema.between(1, MAX_ID, { message: () => "must be a bundle id from the bundles list" }),
  Schema.brand("BundleId")
)

/** The type of `BundleId`. */
export type BundleId = typeof BundleId.Type

/** A bundle as listed to resellers, priced for the calling account. */
export const Bundle = Schema.Struct({
  id: BundleId,
  size: Schema.String.annotations({ description: "Data size label, such as 1GB" }),
  name: Schema.String,
  price: Cedis.annotations({ description: "Price for the calling account, from its price group" }),
  badge: Schema.String.annotations({ description: "A label such as a validity note" }),
  is_active: Schema.Boolean
}).annotations({ identifier: "Bundle" })

/** The type of `Bundle`. */
export type Bundle = typeof Bundle.Type

/** 400: the bundle exists but cannot be bought now (inactive bundle or network). */
export class BundleUnavailable extends Schema.TaggedError<BundleUnavailable>()(
  "BundleUnavailable",
  { success: Failed, message: Schema.String, ...extensions("bundle_unavailable") },
  HttpApiSchema.annotations({ status: 400 })
) {}

/** 404: no bundle with that id. */
export class BundleNotFound extends Schema.TaggedError<BundleNotFound>()(
  "BundleNotFound",
  { success: Failed, message: Schema.String, ...extensions("bundle_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}
