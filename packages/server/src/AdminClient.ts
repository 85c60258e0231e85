/**
 * The admin API's client, derived from the contract, and how the admin CLI finds the
 * server and its token: `--url`/`--token`, else the environment, else the defaults.
 */
import { AdminApi } from "@databundle/contract"
import { HttpApi, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Config, Data, Effect, Option, Redacted, Schema } from "effect"
import type * as AST from "effect/SchemaAST"
import * as AdminToken from "./AdminToken.js"
import * as ServerAddress from "./ServerAddress.js"
import * as ServerConfig from "./ServerConfig.js"

/**
 * Where the admin CLI looks for the server when neither `--url` nor `BUNDLES_ADMIN_URL` says
 * and no server runs on the data directory.
 */
export const DEFAULT_URL = "http://127.0.0.1:8080"

/** `BUNDLES_ADMIN_URL`: the server the admin CLI talks to. */
export const adminUrl = Config.option(Config.string("BUNDLES_ADMIN_URL")).pipe(
  Config.map(Option.filter((url) => url.trim().length > 0))
)

/** The server and the credentials of an admin session. */
export interface Connection {
  /** The server's base URL, without the `/admin/v1` prefix. */
  readonly url: string
  readonly token: Redacted.Redacted
}

/** An admin API client for `url`, sending `Authorization: Bearer <token>`; uses the HttpClient in context. */
export const make = (connection: Connection) =>
  HttpApiClient.make(AdminApi.AdminApi, {
    baseUrl: connection.url,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(connection.token))
  })

/** The admin API's client. */
export type Client = Effect.Effect.Success<ReturnType<typeof make>>

/** No token was given and none could be found. */
export class MissingToken extends Data.TaggedError("MissingToken")<{ readonly dataDir: string }> {
  override get message() {
    return `No admin token: pass --token, set BUNDLES_ADMIN_TOKEN, or start the server once so it writes ${
      AdminToken.tokenFile(this.dataDir)
    }`
  }
}

/** The URL (env `BUNDLES_ADMIN_URL`) is not an http(s) URL. */
export class InvalidUrl extends Data.TaggedError("InvalidUrl")<{ readonly url: string }> {
  override get message() {
    return `Not an http or https URL: ${this.url}`
  }
}

/** Checks and normalises a base URL: http(s), without a trailing slash. */
export const parseUrl = (text: string): Option.Option<string> => {
  try {
    const url = new URL(text.trim())
    return url.protocol === "http:" || url.protocol === "https:"
      ? Option.some(url.toString().replace(/\/+$/, ""))
      : Option.none()
  } catch {
    return Option.none()
  }
}

/**
 * Resolves the connection: the given URL, else `BUNDLES_ADMIN_URL`, else the address of the
 * server running on the data directory (`BUNDLES_DATA_DIR`, default `./.bundles`, where
 * `serve` writes it), else `DEFAULT_URL`; the given token, else `BUNDLES_ADMIN_TOKEN`, else
 * the token file of the data directory.
 */
export const resolve = (given: {
  readonly url: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted>
}): Effect.Effect<Connection, MissingToken | InvalidUrl> =>
  Effect.gen(function*() {
    const dataDir = yield* Effect.orDie(ServerConfig.dataDir)
    const text = Option.isSome(given.url)
      ? given.url.value
      : Option.getOrElse(
        Option.orElse(yield* Effect.orDie(adminUrl), () => Option.map(ServerAddress.read(dataDir), ({ url }) => url)),
        () => DEFAULT_URL
      )
    const url = yield* Option.match(parseUrl(text), {
      onNone: () => Effect.fail(new InvalidUrl({ url: text })),
      onSome: Effect.succeed
    })
    if (Option.isSome(given.token)) return { url, token: given.token.value }
    const configured = yield* Effect.orDie(ServerConfig.adminToken)
    if (Option.isSome(configured) && Redacted.value(configured.value).length > 0) {
      return { url, token: configured.value }
    }
    const stored = yield* AdminToken.readFromDataDir(dataDir)
    if (Option.isSome(stored)) return { url, token: stored.value }
    return yield* new MissingToken({ dataDir })
  })

// Every error any admin endpoint declares (its own, its group's, the API's and the auth
// middleware's), gathered from the contract so the CLI can print an error's body as sent.
const errorAsts = (() => {
  const asts = new Set<AST.AST>()
  HttpApi.reflect(AdminApi.AdminApi, {
    onGroup: () => undefined,
    onEndpoint: ({ errors }) => {
      for (const { ast } of errors.values()) {
        if (Option.isSome(ast)) asts.add(ast.value)
      }
    }
  })
  return [...asts]
})()

/** Any error body of the admin API (`{ success: false, message, ... }`), as its typed error. */
export const ApiFailure = Schema.Union(...errorAsts.map((ast) => Schema.make(ast))) as Schema.Schema<
  ApiFailure,
  unknown
>

/** The type of `ApiFailure`: a typed error of the contract. */
export interface ApiFailure {
  readonly _tag: string
  readonly success: false
  readonly message: string
}

/** True for a typed error of the admin API. */
export const isApiFailure: (u: unknown) => u is ApiFailure = Schema.is(ApiFailure)
