/**
 * The demo set-up of `serve --demo`: on an empty database, the demo catalogue from
 * `examples/catalog.json` and a funded demo account whose key is kept in the data directory
 * so later starts can show it again.
 */
import { Catalog as CatalogContract } from "@databundle/contract"
import { Accounts, ApiKeys, Catalog, Wallet } from "@databundle/core"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The demo account's opening balance: GHS 500.00. */
export const DEMO_FUNDS = 50_000n

/**
 * The demo catalogue: beside the bundle in the installed package (dist/catalog.json), else
 * beside the packages in the repository.
 */
export const catalogPath = [
  fileURLToPath(new URL("./catalog.json", import.meta.url)),
  fileURLToPath(new URL("../../../examples/catalog.json", import.meta.url))
].find((file) => existsSync(file)) ?? fileURLToPath(new URL("../../../examples/catalog.json", import.meta.url))

/** Where the demo key is kept. */
export const keyFile = (dataDir: string) => path.join(dataDir, "demo-api-key")

/** What the demo set-up found or made. */
export interface DemoAccount {
  /** True when this start created it. */
  readonly created: boolean
  /** The demo key, when known (it is kept in the data directory). */
  readonly apiKey: Option.Option<string>
  /** A bundle the demo account can buy at once, for the banner's first order (when created). */
  readonly bundle: Option.Option<{ readonly id: number; readonly name: string }>
}

/** Seeds an empty database with the demo catalogue and account; leaves any other database alone. */
export const seed = (dataDir: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ used: boolean }>`
      SELECT EXISTS (SELECT 1 FROM networks) OR EXISTS (SELECT 1 FROM accounts) AS used
    `
    if (row!.used) {
      const known = yield* Effect.promise(() => fs.readFile(keyFile(dataDir), "utf8").then((s) => s.trim(), () => ""))
      return {
        created: false,
        apiKey: known.length > 0 ? Option.some(known) : Option.none(),
        bundle: Option.none()
      } satisfies DemoAccount
    }
    const text = yield* Effect.promise(() => fs.readFile(catalogPath, "utf8"))
    const file = yield* Schema.decodeUnknown(Schema.parseJson(CatalogContract.CatalogFile))(text)
    yield* (yield* Catalog.Catalog).importFile(file)
    const account = yield* (yield* Accounts.Accounts).create({ name: "Demo Reseller", price_group: "retail" })
    yield* (yield* Wallet.Wallet).fund(account.id, { amount: DEMO_FUNDS, wallet: "main", note: "Demo funds" })
    const key = yield* (yield* ApiKeys.ApiKeys).create(account.id)
    yield* Effect.promise(async () => {
      await fs.mkdir(dataDir, { recursive: true, mode: 0o700 })
      await fs.writeFile(keyFile(dataDir), `${key.api_key}\n`, { mode: 0o600 })
    })
    // The first active bundle of the first network, as the catalogue lists them: read, not
    // assumed, since ids depend on what the database handed out.
    const [bundle] = yield* sql<{ id: number; name: string }>`
      SELECT b.id, b.name FROM bundles b JOIN networks n ON n.id = b.network_id
      WHERE b.active AND n.active ORDER BY n.sort_order, n.id, b.sort_order, b.id LIMIT 1
    `
    return {
      created: true,
      apiKey: Option.some(key.api_key),
      bundle: Option.fromNullable(bundle)
    } satisfies DemoAccount
  }).pipe(Effect.orDie, Effect.withSpan("Demo.seed"))
