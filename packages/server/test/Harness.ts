/**
 * The end-to-end harness: the whole server on a real port and a test database, with
 * clients derived from the contract for the public and the admin API.
 */
import { AdminApi, Catalog, ResellerApi } from "@databundle/contract"
import type { Target } from "@databundle/core/testing"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as Demo from "../src/Demo.js"
import * as Http from "../src/Http.js"

/** The admin token the test server accepts. */
export const ADMIN_TOKEN = "adm_test_token_for_the_end_to_end_suite"

/** Settings of the test server; a suite may add its own. */
export const testConfig = (extra: Record<string, string> = {}) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(
    new Map(Object.entries({
      BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN,
      BUNDLES_SIMULATOR_PENDING_SECONDS: "1",
      BUNDLES_POLL_SECONDS: "0.2",
      // Deliveries go to receivers on this machine.
      BUNDLES_WEBHOOK_ALLOW_PRIVATE: "1",
      ...extra
    }))
  ))

/** The server on a free port of 127.0.0.1, with an HttpClient that targets it. */
export const serverLayer = (target: Target, extra: Record<string, string> = {}) =>
  Http.serve.pipe(
    Layer.provide(Http.AppLive),
    Layer.provideMerge(target.layer),
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(testConfig(extra)),
    // One log line per request would bury the test report.
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

/** A public API client sending `key` (or no key at all). */
export const resellerClient = (key?: string) =>
  HttpApiClient.make(ResellerApi.ResellerApi, {
    transformClient: key === undefined
      ? undefined
      : HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", key))
  })

/** An admin API client with the test token. */
export const adminClient = HttpApiClient.make(AdminApi.AdminApi, {
  transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(ADMIN_TOKEN))
})

/** Imports the demo catalogue through the admin API (once per server); returns the catalogue. */
export const seedCatalog = Effect.gen(function*() {
  const admin = yield* adminClient
  const { networks } = yield* admin.catalogFile.export()
  if (networks.length === 0) {
    const text = yield* Effect.promise(() => fs.readFile(Demo.catalogPath, "utf8"))
    yield* admin.catalogFile.import({ payload: Schema.decodeUnknownSync(Catalog.CatalogFile)(JSON.parse(text)) })
  }
  return (yield* admin.catalogFile.export()).networks
})

/** A new account through the admin API: funded with `main` pesewas, with one key. */
export const newAccount = (main: bigint, options: { priceGroup?: string } = {}) =>
  Effect.gen(function*() {
    const admin = yield* adminClient
    const account = yield* admin.accounts.create({
      payload: { name: "E2E Reseller", ...(options.priceGroup ? { price_group: options.priceGroup as any } : {}) }
    })
    if (main > 0n) {
      yield* admin.wallets.fund({
        headers: {},
        path: { account_id: account.id },
        payload: { amount: main, wallet: "main" }
      })
    }
    const key = yield* admin.apiKeys.create({ path: { account_id: account.id }, urlParams: {} })
    return { id: account.id, key: key.api_key, keyId: key.id }
  })

/**
 * The latest email to `to` (of `kind`, if given) as its holder receives it, link and token
 * whole: read from the outbox table, since the operator's list hides every token.
 */
export const mailed = (to: string, kind?: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ kind: string; body: string; link: string | null }>`
      SELECT kind, body, link FROM mail_outbox
      WHERE to_address = ${to.toLowerCase()} ${kind === undefined ? sql`` : sql`AND kind = ${kind}`}
      ORDER BY id DESC LIMIT 1
    `
    if (row === undefined) throw new Error(`no email to ${to}`)
    return row
  }).pipe(Effect.orDie)

/** A response read without the contract: status, headers (lower-case names), body text and its JSON. */
export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** The body parsed as JSON; `undefined` when it is not JSON. */
  readonly json: any
}

/** What `raw` sends besides the method and path. */
export interface RawOptions {
  /** Sent as `x-api-key`. */
  readonly key?: string | undefined
  /** Sent as `Authorization: Bearer <token>`. */
  readonly bearer?: string | undefined
  /** The body: a string or bytes are sent as they are, anything else as its JSON. */
  readonly body?: unknown
  /** The body's Content-Type; `null` sends none. Default `application/json`. */
  readonly contentType?: string | null | undefined
  /** More headers. */
  readonly headers?: Record<string, string> | undefined
}

/**
 * Sends any request to the test server (the `HttpClient` of `serverLayer` targets it), for
 * what the typed clients cannot send: bad bodies, wrong methods, unknown paths, missing headers.
 * Never fails on a status.
 */
export const raw = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, options: RawOptions = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path).pipe(
      HttpClientRequest.setHeaders({ accept: "application/json", ...options.headers })
    )
    if (options.key !== undefined) request = HttpClientRequest.setHeader(request, "x-api-key", options.key)
    if (options.bearer !== undefined) request = HttpClientRequest.bearerToken(request, options.bearer)
    if (options.body !== undefined) {
      const bytes = options.body instanceof Uint8Array
        ? options.body
        : new TextEncoder().encode(typeof options.body === "string" ? options.body : JSON.stringify(options.body))
      // An empty content type makes the client send no Content-Type header at all.
      request = HttpClientRequest.bodyUint8Array(
        request,
        bytes,
        options.contentType === null ? "" : options.contentType ?? "application/json"
      )
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json } satisfies RawResponse as RawResponse
  }).pipe(Effect.orDie)

/** The demo catalogue as a reseller without a price group sees it: every listed bundle by name, with its network. */
export const bundlesByName = Effect.gen(function*() {
  yield* seedCatalog
  const reader = yield* newAccount(0n)
  const client = yield* resellerClient(reader.key)
  const { networks } = yield* client.catalog.networks()
  const lists = yield* Effect.forEach(networks, (network) =>
    Effect.map(
      client.catalog.bundles({ path: { network_id: network.id } }),
      ({ bundles }) => bundles.map((bundle) => [bundle.name, { ...bundle, network_id: network.id }] as const)
    ))
  return new Map(lists.flat())
})
