/**
 * `serve`: the application on Node's HTTP server (HTTPS with `TLS_CERT`/`TLS_KEY`), with a
 * start-up banner and, with `--demo`, the demo set-up.
 */
import { formatGhs } from "@databundle/contract/Money"
import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Console, Duration, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as path from "node:path"
import * as AdminToken from "./AdminToken.js"
import * as Database from "./Database.js"
import * as Demo from "./Demo.js"
import * as Drain from "./Drain.js"
import * as Http from "./Http.js"
import * as ServerConfig from "./ServerConfig.js"

/** Options of `serve` that override the environment. */
export interface ServeOptions {
  readonly port: Option.Option<number>
  readonly host: Option.Option<string>
  readonly demo: boolean
}

const isLoopback = (host: string) =>
  host === "localhost" || host === "::1" || host.startsWith("127.") || host === "[::1]"

const banner = (options: ServeOptions, tls: boolean) =>
  Effect.gen(function*() {
    const address = yield* HttpServer.addressWith(Effect.succeed)
    const host = address._tag === "TcpAddress" ? address.hostname : "localhost"
    const port = address._tag === "TcpAddress" ? address.port : 0
    const shownHost = host.includes(":") ? `[${host}]` : host
    const base = `${tls ? "https" : "http"}://${shownHost}:${port}`
    const dataDir = yield* ServerConfig.dataDir
    const kind = yield* Database.kind
    const configuredToken = Option.isSome(yield* ServerConfig.adminToken)
    const lines = [
      `Data bundle reseller server listening on ${base}`,
      `  database:   ${
        kind === "postgres" ? "Postgres (DATABASE_URL)" : `embedded, in ${path.join(dataDir, "pgdata")}`
      }`,
      `  public API: ${base}/api/v1  (OpenAPI: ${base}/api/v1/openapi.json)`,
      `  admin API:  ${base}/admin/v1  (token: ${
        configuredToken ? "BUNDLES_ADMIN_TOKEN" : AdminToken.tokenFile(dataDir)
      })`
    ]
    if (!tls && !isLoopback(host)) {
      lines.push(
        `WARNING: plain HTTP on ${host}: API keys and the admin token would cross the network in clear text.`,
        "         Set TLS_CERT and TLS_KEY to serve HTTPS, or bind to 127.0.0.1 behind a TLS proxy."
      )
    }
    if (options.demo) {
      const demo = yield* Demo.seed(dataDir)
      if (Option.isSome(demo.apiKey)) {
        lines.push(
          "",
          demo.created
            ? `Demo account "Demo Reseller" created with ${
              formatGhs(Demo.DEMO_FUNDS)
            }. Its API key (kept in ${dataDir}):`
            : "Demo account API key:",
          `  ${demo.apiKey.value}`,
          "Try:",
          `  curl -s -H "x-api-key: ${demo.apiKey.value}" -H "Accept: application/json" ${base}/api/v1/balance`
        )
      } else if (!demo.created) {
        lines.push("", "--demo: the database already holds data, so no demo account was added.")
      }
    }
    yield* Console.log(lines.join("\n"))
  })

/** The server as a Layer: launch it to serve until interrupted (SIGINT/SIGTERM close it cleanly). */
export const layer = (options: ServeOptions) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const config = yield* ServerConfig.serveConfig
    const port = Option.getOrElse(options.port, () => config.port)
    const host = Option.getOrElse(options.host, () => config.host)
    const tls = Option.all({ cert: config.tlsCert, key: config.tlsKey })
    const server: http.Server = Option.match(tls, {
      onNone: () => http.createServer(),
      onSome: ({ cert, key }) =>
        https.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }) as unknown as http.Server
    })
    const requests = Drain.track(server)
    // Built last, so released first: requests in flight finish while the application and
    // the database are still there.
    const started = Layer.scopedDiscard(Effect.zipRight(
      banner(options, Option.isSome(tls)),
      Effect.addFinalizer(() => Drain.drain(server, requests, Duration.seconds(10)))
    ))
    return started.pipe(
      Layer.provideMerge(HttpApiBuilder.serve(Http.middleware)),
      Layer.provide(NodeHttpServer.layer(() => server, { port, host })),
      Layer.provide(Http.AppLive),
      Layer.provide(Database.layer)
    )
  }))
