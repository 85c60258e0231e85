/**
 * The real server for the client's tests: the server package's HTTP application on a free
 * port of 127.0.0.1, on a test database (PGlite always, Postgres when TEST_DATABASE_URL is
 * set), with Promise helpers over the admin API to set accounts up and to read their money.
 * Set-up goes through clients derived from the contracts directly, never through the client
 * under test.
 */
import { type Account, AdminApi, Catalog, type Ledger, type RateLimit, ResellerApi } from "@databundle/contract"
import { Mailer } from "@databundle/core"
import type { Target } from "@databundle/core/testing"
import { Http } from "@databundle/server"
import * as Demo from "@databundle/server/Demo"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Duration, Effect, Layer, Logger, LogLevel, ManagedRuntime, Schema } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"

/** The admin token the test server accepts. */
export const ADMIN_TOKEN = "adm_client_test_token_for_the_client_suite"

const serverLayer = (target: Target, extra: Record<string, string>) =>
  Http.serve.pipe(
    // The domain services stay reachable for the helpers below (the emailed links).
    Layer.provideMerge(Http.AppLive),
    Layer.provide(target.layer),
    Layer.provideMerge(NodeHttpServer.layer(() => http.createServer(), { port: 0, host: "127.0.0.1" })),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
      new Map(Object.entries({
        BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN,
        BUNDLES_SIMULATOR_PENDING_SECONDS: "1",
        BUNDLES_POLL_SECONDS: "0.2",
        // Deliveries go to receivers on this machine.
        BUNDLES_WEBHOOK_ALLOW_PRIVATE: "1",
        ...extra
      }))
    ))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

/** A bundle of the demo catalogue, with its network. */
export interface CatalogBundle {
  readonly id: number
  readonly name: string
  readonly price: bigint
  readonly isActive: boolean
  readonly networkId: number
}

/** A test account. */
export interface TestAccount {
  readonly id: Account.AccountId
  readonly key: string
}

/** A running test server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string
  /** The API's base URL as the spec writes it: origin + `/api/v1`. */
  readonly baseUrl: string
  /** A new account, funded with `funds` pesewas, with per-minute limit overrides, and one API key. */
  readonly account: (options?: {
    readonly funds?: bigint
    readonly limits?: RateLimit.RateLimitsPatch
  }) => Promise<TestAccount>
  /** The main wallet of an account, in pesewas, as the admin API reports it. */
  readonly mainBalance: (accountId: Account.AccountId) => Promise<bigint>
  /** The ledger entries of an account's main wallet caused by orders (debits and refunds). */
  readonly orderEntries: (accountId: Account.AccountId) => Promise<ReadonlyArray<Ledger.LedgerEntry>>
  /** Points the account's webhooks at `url`. */
  readonly setWebhook: (accountId: Account.AccountId, url: string) => Promise<void>
  /** Revokes every key of the account. */
  readonly revokeKeys: (accountId: Account.AccountId) => Promise<void>
  /** Funds the main wallet with `amount` pesewas. */
  readonly fund: (accountId: Account.AccountId, amount: bigint) => Promise<void>
  /** The latest emailed link to `to` for a dashboard page (`verify-email`, `reset-password`), token and all. */
  readonly emailedLink: (to: string, page: string) => Promise<string>
  /** The demo catalogue's bundles by name. */
  readonly bundles: ReadonlyMap<string, CatalogBundle>
  /** A bundle by name; throws when the catalogue has none. */
  readonly bundle: (name: string) => CatalogBundle
  /** The demo catalogue's networks by name, with their ids; inactive ones are absent (the API hides them). */
  readonly networks: ReadonlyMap<string, number>
  /** Stops the server and drops its database. */
  readonly dispose: () => Promise<void>
}

const fetchLayer = FetchHttpClient.layer

/** Starts the server on `target` and seeds the demo catalogue. */
export const startServer = async (target: Target, extra: Record<string, string> = {}): Promise<TestServer> => {
  const runtime = ManagedRuntime.make(serverLayer(target, extra))
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  if (address._tag !== "TcpAddress") throw new Error("the test server is not on TCP")
  const origin = `http://127.0.0.1:${address.port}`

  const admin = HttpApiClient.make(AdminApi.AdminApi, {
    baseUrl: origin,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(ADMIN_TOKEN))
  })
  const runAdmin = <A, E>(f: (client: Effect.Effect.Success<typeof admin>) => Effect.Effect<A, E>) =>
    Effect.runPromise(Effect.flatMap(admin, f).pipe(Effect.provide(fetchLayer)))

  const catalogFile = Schema.decodeUnknownSync(Catalog.CatalogFile)(
    JSON.parse(fs.readFileSync(Demo.catalogPath, "utf8"))
  )
  await runAdmin((client) => client.catalogFile.import({ payload: catalogFile }))

  const account: TestServer["account"] = (options = {}) =>
    runAdmin((client) =>
      Effect.gen(function*() {
        const created = yield* client.accounts.create({ payload: { name: "Client test reseller" } })
        if (options.funds !== undefined && options.funds > 0n) {
          yield* client.wallets.fund({
            headers: {},
            path: { account_id: created.id },
            payload: { amount: options.funds }
          })
        }
        if (options.limits !== undefined) {
          yield* client.accounts.update({ path: { account_id: created.id }, payload: { limits: options.limits } })
        }
        const key = yield* client.apiKeys.create({ path: { account_id: created.id }, urlParams: {} })
        return { id: created.id, key: key.api_key }
      })
    )

  // The catalogue as the API lists it, read with a derived client and a throw-away account.
  const reader = await account()
  const bundles = new Map<string, CatalogBundle>()
  const networks = new Map<string, number>()
  await Effect.runPromise(
    Effect.gen(function*() {
      const client = yield* HttpApiClient.make(ResellerApi.ResellerApi, {
        baseUrl: origin,
        transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", reader.key))
      })
      for (const network of (yield* client.catalog.networks()).networks) {
        networks.set(network.name, network.id)
        for (const bundle of (yield* client.catalog.bundles({ path: { network_id: network.id } })).bundles) {
          bundles.set(bundle.name, {
            id: bundle.id,
            name: bundle.name,
            price: bundle.price,
            isActive: bundle.is_active,
            networkId: network.id
          })
        }
      }
    }).pipe(Effect.provide(fetchLayer))
  )

  return {
    origin,
    baseUrl: `${origin}${ResellerApi.RESELLER_PREFIX}`,
    account,
    mainBalance: (accountId) =>
      runAdmin((client) =>
        Effect.map(client.accounts.show({ path: { account_id: accountId } }), (detail) => detail.balance.main)
      ),
    orderEntries: (accountId) =>
      runAdmin((client) =>
        Effect.map(
          client.wallets.ledger({ path: { account_id: accountId }, urlParams: { per_page: 100, wallet: "main" } }),
          (page) => page.entries.filter((entry) => entry.order_number !== null)
        )
      ),
    setWebhook: (accountId, url) =>
      runAdmin((client) =>
        Effect.asVoid(client.accounts.update({ path: { account_id: accountId }, payload: { webhook_url: url } }))
      ),
    revokeKeys: (accountId) =>
      runAdmin((client) =>
        Effect.gen(function*() {
          const detail = yield* client.accounts.show({ path: { account_id: accountId } })
          for (const key of detail.keys) {
            yield* client.apiKeys.revoke({ path: { account_id: accountId, key_id: key.id } })
          }
        })
      ),
    fund: (accountId, amount) =>
      runAdmin((client) => client.wallets.fund({ headers: {}, path: { account_id: accountId }, payload: { amount } }))
        .then(
          () => undefined
        ),
    // Read from the outbox itself: the admin API hides every link's token.
    emailedLink: async (to, page) => {
      for (let i = 0; i < 50; i++) {
        const emails = await runtime.runPromise(
          Effect.flatMap(Mailer.Mailer, (mailer) => mailer.recent(to, Duration.hours(1), 10))
        )
        const link = emails.find((m) => m.link?.includes(`#/${page}?`))?.link
        if (link) return link
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error(`no email to ${to} with a link to ${page}`)
    },
    bundles,
    bundle: (name) => {
      const found = bundles.get(name)
      if (found === undefined) throw new Error(`no bundle ${name} in the demo catalogue`)
      return found
    },
    networks,
    dispose: () => runtime.dispose()
  }
}
