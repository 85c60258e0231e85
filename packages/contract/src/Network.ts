/**
 * Networks: the mobile operators and their sub-products (MTN, Telecel, AirtelTigo iShare, ...).
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { extensions, Failed } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"

/** A network's identifier, used in paths. */
export const NetworkId = Schema.Int.pipe(Schema.between(1, MAX_ID), Schema.brand("NetworkId"))

/** The type of `NetworkId`. */
export type NetworkId = typeof NetworkId.Type

/** A network's lowercase short name (`mtn`, `airteltigo-ishare`). */
export const NetworkSlug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9-]{0,31}$/, {
    message: () => "must be 1 to 32 characters of a-z, 0-9 and -"
  })
)

/** A colour as `#RRGGBB`. */
export const HexColor = Schema.String.pipe(
  Schema.pattern(/^#[0-9A-Fa-f]{6}$/, { message: () => "must be a colour as #RRGGBB" })
)

/** A network as listed to resellers. */
export const Network = Schema.Struct({
  id: NetworkId,
  name: Schema.String,
  slug: Schema.String,
  color: Schema.String,
  delivery: Schema.String.annotations({ description: "Human-readable delivery-time range" }),
  bundles_count: Schema.Int
}).annotations({ identifier: "Network" })

/** The type of `Network`. */
export type Network = typeof Network.Type

/** 404: no active network with that id. */
export class NetworkNotFound extends Schema.TaggedError<NetworkNotFound>()(
  "NetworkNotFound",
  { success: Failed, message: Schema.String, ...extensions("network_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}
