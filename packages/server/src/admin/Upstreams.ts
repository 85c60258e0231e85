/**
 * `admin upstreams` and `admin catalog sync`: the upstreams fulfilment buys from, with their
 * balances, and the catalogue priced from theirs.
 */
import { type Account, Upstream } from "@databundle/contract"
import * as Output from "@databundle/terminal/Output"
import { Command, Options } from "@effect/cli"
import { Either, Option, Schema } from "effect"
import { execute, request } from "./Call.js"
import { checked, decodeWith, shared, usage } from "./Options.js"
import { ghs, orNone } from "./Text.js"

type View = typeof Upstream.UpstreamView.Type

const columns: ReadonlyArray<Output.Column<View>> = [
  { title: "NAME", value: (u) => u.name },
  { title: "BALANCE", value: (u) => u.balance === null ? "unreadable" : ghs(u.balance), right: true },
  { title: "LOW BELOW", value: (u) => u.low_balance === null ? "-" : ghs(u.low_balance), right: true },
  { title: "CIRCUIT", value: (u) => u.circuit },
  { title: "PENDING", value: (u) => String(u.pending_orders), right: true },
  { title: "BUNDLES", value: (u) => `${u.active_bundles}/${u.bundles}`, right: true },
  {
    title: "NETWORKS",
    value: (u) => Object.entries(u.networks).map(([slug, priority]) => `${slug}:${priority}`).join(" ")
  }
]

/** `admin upstreams`. */
export const upstreams = Command.make("upstreams", shared, (options) =>
  execute(
    options,
    request(options, (client) => client.upstreams.list()),
    Upstream.UpstreamsResponse,
    (response, s) =>
      response.upstreams.length === 0
        ? [`The provider is ${response.provider}: no upstream is configured.`]
        : [
          ...Output.table(columns, response.upstreams, s),
          ...response.upstreams.flatMap((u) => [
            ...(u.balance_low ? [`WARNING: ${u.name}'s balance is below ${ghs(u.low_balance!)}: top it up.`] : []),
            ...(u.error !== null ? [`${u.name}: balance unreadable: ${orNone(u.error)}`] : [])
          ])
        ]
  )).pipe(Command.withDescription("The upstreams orders are bought from, with their balances"))

const markup = (name: string) => Options.text(name).pipe(checked(name, decodeWith(Upstream.Markup)))

const groupMarkups = Options.text("price-group").pipe(
  Options.withDescription("GROUP=MARKUP prices a group from the upstream's price (agent=5%). Repeatable."),
  Options.repeated,
  Options.mapEffect((items) => {
    const out: Record<string, string> = {}
    for (const item of items) {
      const at = item.indexOf("=")
      const value = item.slice(at + 1)
      if (at <= 0 || !Schema.is(Upstream.Markup)(value)) {
        return Either.left(usage(`--price-group ${item}: give GROUP=MARKUP, such as agent=5%`))
      }
      out[item.slice(0, at)] = value
    }
    return Either.right(out)
  })
)

const sync = Command.make("sync", {
  ...shared,
  upstream: Options.text("upstream").pipe(
    Options.withDescription("Only this upstream (default: every configured one)"),
    checked("upstream", decodeWith(Upstream.UpstreamName)),
    Options.optional
  ),
  markup: markup("markup").pipe(
    Options.withDescription("The base price's markup over the upstream's price (8%, 12.5%; default 0%)"),
    Options.optional
  ),
  groups: groupMarkups,
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("Show the changes without applying them"))
}, (options) =>
  execute(
    options,
    request(options, (client) =>
      client.upstreams.catalogSync({
        payload: {
          ...Option.match(options.upstream, { onNone: () => ({}), onSome: (upstream) => ({ upstream }) }),
          markup: Option.getOrElse(options.markup, () => "0%"),
          price_groups: options.groups as Record<Account.PriceGroupName, string>,
          dry_run: options.dryRun
        }
      })),
    Upstream.CatalogSyncResponse,
    (result) => [
      `${result.dry_run ? "Would change" : "Changed"} from ${result.upstreams.join(", ")}: ${result.changes.length} ${
        result.changes.length === 1 ? "change" : "changes"
      }, ${result.unchanged} bundles unchanged.`,
      ...result.changes.map((c) => `  ${c.change.padEnd(10)} ${c.kind.padEnd(7)} ${c.key}  ${c.detail}`)
    ]
  )).pipe(Command.withDescription("Create, price and deactivate bundles from the upstreams' catalogues"))

/** `admin catalog sync`, added under `admin catalog`. */
export const catalogSync = sync
