/**
 * A small catalogue and helpers that set up accounts for domain tests.
 */
import { type Bundle, Catalog as CatalogContract } from "@databundle/contract"
import { Effect, Schema } from "effect"
import { Layer } from "effect"
import { Accounts } from "../src/Accounts.js"
import { ApiKeys } from "../src/ApiKeys.js"
import { Catalog } from "../src/Catalog.js"
import { Commissions } from "../src/Commissions.js"
import { FulfillmentProvider } from "../src/Fulfillment.js"
import { Orders } from "../src/Orders.js"
import { Wallet } from "../src/Wallet.js"
import { Webhooks } from "../src/Webhooks.js"

/** The catalogue file used by domain tests: two networks, one inactive bundle, agent prices. */
export const catalogFile = Schema.decodeUnknownSync(CatalogContract.CatalogFile)({
  price_groups: ["retail", "agent"],
  networks: [
    {
      slug: "mtn",
      name: "MTN",
      color: "#FFCC00",
      delivery: "5 - 30 minutes",
      bundles: [
        { key: "mtn-1gb", size: "1GB", name: "MTN 1GB", badge: "Non-expiry", price: 5.5, prices: { agent: 5 } },
        { key: "mtn-2gb", size: "2GB", name: "MTN 2GB", price: 10.5 },
        { key: "mtn-old", size: "500MB", name: "MTN 500MB", price: 3, active: false }
      ]
    },
    {
      slug: "telecel",
      name: "Telecel",
      color: "#E60000",
      delivery: "Instant",
      bundles: [{ key: "telecel-1gb", size: "1GB", name: "Telecel 1GB", price: 6 }]
    },
    { slug: "closed", name: "Closed Network", color: "#000000", delivery: "Never", active: false, bundles: [] }
  ]
})

/** Every domain service on the simulator, needing only a SqlClient. */
export const Domain = Layer.mergeAll(
  Accounts.Default,
  ApiKeys.Default,
  Catalog.Default,
  Wallet.Default,
  Webhooks.Default,
  Orders.Default,
  Commissions.Default
).pipe(Layer.provide(FulfillmentProvider.Simulator))

/** Imports the test catalogue (idempotent) and returns bundle ids by key. */
export const seedCatalog = Effect.gen(function*() {
  const catalog = yield* Catalog
  yield* catalog.importFile(catalogFile)
  const networks = yield* catalog.networks
  const ids: Record<string, number> = {}
  for (const network of networks) {
    for (const bundle of (yield* catalog.bundles(network.id, null)).bundles) {
      ids[bundle.name] = bundle.id
    }
  }
  return {
    networks,
    mtn1gb: ids["MTN 1GB"]!,
    mtn2gb: ids["MTN 2GB"]!,
    mtnOld: ids["MTN 500MB"]!,
    telecel1gb: ids["Telecel 1GB"]!
  }
})

/** A new account with `main` pesewas in its main wallet. */
export const fundedAccount = (main: bigint, priceGroup: string | null = null) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).create({ name: "Test Reseller", price_group: priceGroup })
    if (main > 0n) yield* (yield* Wallet).fund(account.id, { amount: main, wallet: "main" })
    return account.id
  })

/** Places an order for `accountId`: `bundleId` to `phone`, with `reference` when given. */
export const placeOrder = (accountId: number, bundleId: number, phone: string, reference?: string) =>
  Effect.flatMap(Orders, (orders) =>
    orders.place(accountId, {
      bundle_id: bundleId as Bundle.BundleId,
      phone_number: phone,
      ...(reference === undefined ? {} : { reference })
    }))
