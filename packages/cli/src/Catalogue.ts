/**
 * The catalogue as this account sees it: active networks, their bundles at this account's
 * prices, and which operator's numbers a network serves (for the wrong-network warning).
 * Holds the `networks` and `bundles NETWORK` commands.
 */
import { BundlesClient, formatGhs, type GhanaPhone } from "@databundle/client"
import * as Phone from "@databundle/client/Phone"
import { problem } from "@databundle/terminal/Failure"
import { Effect } from "effect"
import type * as Config from "./Config.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** A network as the API lists it. */
export type Network = Effect.Effect.Success<ReturnType<BundlesClient.Service["networks"]>>[number]

/** A bundle as the API lists it, priced for this account. */
export type Bundle = Effect.Effect.Success<ReturnType<BundlesClient.Service["bundles"]>>[number]

/** A bundle with its network. */
export interface Entry {
  readonly bundle: Bundle
  readonly network: Network
}

/** Every active network with its bundles, and the bundles by id. */
export interface Catalogue {
  readonly networks: ReadonlyArray<{ readonly network: Network; readonly bundles: ReadonlyArray<Bundle> }>
  readonly byId: ReadonlyMap<number, Entry>
}

/** Reads the whole catalogue: the networks, then each network's bundles. */
export const load = (
  client: BundlesClient.Service
): Effect.Effect<Catalogue, BundlesClient.NetworksError | BundlesClient.BundlesError> =>
  Effect.gen(function*() {
    const networks = yield* client.networks()
    // One network after another: a handful of calls, kept gentle on the rate limit.
    const listed = yield* Effect.forEach(
      networks,
      (network) => Effect.map(client.bundles(network.id), (bundles) => ({ network, bundles }))
    )
    const byId = new Map<number, Entry>()
    for (const { bundles, network } of listed) {
      for (const bundle of bundles) byId.set(bundle.id, { bundle, network })
    }
    return { networks: listed, byId }
  })

/** Finds a bundle by id, reading one network's bundles after another until it turns up. */
export const find = (
  client: BundlesClient.Service,
  bundleId: number
): Effect.Effect<Entry | undefined, BundlesClient.NetworksError | BundlesClient.BundlesError> =>
  Effect.gen(function*() {
    for (const network of yield* client.networks()) {
      const bundle = (yield* client.bundles(network.id)).find((b) => b.id === bundleId)
      if (bundle !== undefined) return { bundle, network }
    }
    return undefined
  })

/**
 * A warning when a number's prefix belongs to another operator than the bundle's network, or
 * to none (the client's rule, on the table the server warns by). Numbers get ported between
 * operators, so this never stops a purchase.
 */
export const networkMismatch = (phone: GhanaPhone, entry: Entry): string | undefined =>
  Phone.prefixNotice(phone, entry.network, entry.bundle.name)

/** A network's name after a swatch of its colour, when the stream takes colour. */
export const networkLabel = (network: Network, s: Output.Style): string =>
  s.enabled ? `${s.hex(network.color, "●")} ${Output.clean(network.name)}` : Output.clean(network.name)

/** `bundles networks`: the active networks. */
export const networks = (options: Config.Shared) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const client = yield* BundlesClient
      const list = yield* client.networks()
      if (options.json) return yield* Output.printJson({ success: true, networks: list })
      const { out } = yield* Output.styles
      if (list.length === 0) return yield* Output.printLines(["No active networks."])
      yield* Output.printLines(Output.table<Network>(
        [
          { title: "ID", value: (n) => String(n.id), right: true },
          { title: "NETWORK", value: (n) => networkLabel(n, out) },
          { title: "SLUG", value: (n) => Output.clean(n.slug) },
          { title: "BUNDLES", value: (n) => String(n.bundles_count), right: true },
          { title: "DELIVERY", value: (n) => Output.clean(n.delivery) }
        ],
        list,
        out
      ))
    }))

/** `bundles bundles NETWORK`: a network's bundles, the network given by id or slug. */
export const bundles = (options: Config.Shared & { readonly network: string }) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const client = yield* BundlesClient
      const wanted = options.network.trim().toLowerCase()
      const network = (yield* client.networks()).find((n) =>
        /^\d+$/.test(wanted) ? n.id === Number(wanted) : n.slug.toLowerCase() === wanted
      )
      if (network === undefined) {
        return yield* problem(`No active network ${options.network}: see bundles networks for their ids and slugs`)
      }
      const list = yield* client.bundles(network.id)
      if (options.json) return yield* Output.printJson({ success: true, network: network.name, bundles: list })
      const { out } = yield* Output.styles
      const dimIfInactive = (b: Bundle, text: string) => b.is_active ? text : out.dim(text)
      yield* Output.printLines([
        `${networkLabel(network, out)} (network ${network.id}): ${Output.count(list.length, "bundle")}`,
        "",
        ...Output.table<Bundle>(
          [
            { title: "ID", value: (b) => dimIfInactive(b, String(b.id)), right: true },
            { title: "BUNDLE", value: (b) => dimIfInactive(b, Output.clean(b.name)) },
            { title: "SIZE", value: (b) => dimIfInactive(b, Output.clean(b.size)) },
            { title: "PRICE", value: (b) => dimIfInactive(b, formatGhs(b.price)), right: true },
            { title: "BADGE", value: (b) => dimIfInactive(b, Output.clean(b.badge)) },
            { title: "STATUS", value: (b) => b.is_active ? out.green("available") : out.red("unavailable") }
          ],
          list,
          out
        )
      ])
    }))
