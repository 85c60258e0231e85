/**
 * `serve`: the application on Node's HTTP server (HTTPS with `TLS_CERT`/`TLS_KEY`), with a
 * start-up banner and, with `--demo`, the demo set-up.
 */
import { formatGhs } from "@databundle/contract/Money"
import { HttpMiddleware, HttpServer, HttpServerError } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Console, Duration, Effect, Layer, Option, Runtime } from "effect"
import * as path from "node:path"
import * as AdminToken from "./AdminToken.js"
import * as Cluster from "./Cluster.js"
import * as Database from "./Database.js"
import * as Demo from "./Demo.js"
import * as Drain from "./Drain.js"
import * as Http from "./Http.js"
import * as Metrics from "./Metrics.js"
import * as NodeServer from "./NodeServer.js"
import * as Production from "./Production.js"
import * as ServerAddress from "./ServerAddress.js"
import * as ServerConfig from "./ServerConfig.js"
import * as Tracing from "./Tracing.js"

/** Options of `serve` that override the environment. */
export interface ServeOptions {
  readonly port: Option.Option<number>
  readonly host: Option.Option<string>
  readonly demo: boolean
  /** Server processes on the port (`--workers`, env `BUNDLES_WORKERS`); more than one needs Postgres. */
  readonly workers?: Option.Option<number>
  /** A port of its own for `GET /metrics`, without credentials (`--metrics-port`, env `BUNDLES_METRICS_PORT`). */
  readonly metricsPort?: Option.Option<number>
}

const isLoopback = (host: string) =>
  host === "localhost" || host === "::1" || host.startsWith("127.") || host === "[::1]"

const baseUrl = (tls: boolean, host: string, port: number) =>
  `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`

/** The start-up banner: where to reach the server, and the demo account when there is one; plain text, on stderr unless stdout is a terminal. */
const announce = (
  base: string,
  host: string,
  tls: boolean,
  demo: Option.Option<Demo.DemoAccount>,
  extra: string = ""
) =>
  Effect.gen(function*() {
    const dataDir = yield* ServerConfig.dataDir
    const kind = yield* Database.kind
    const configuredToken = Option.isSome(yield* ServerConfig.adminToken)
    const mail = (yield* ServerConfig.demoMailbox)
      ? "shown on the page after registering (demo mailbox), and in the log"
      : Option.isSome(yield* ServerConfig.smtpUrl)
      ? "sent through BUNDLES_SMTP_URL (status: bundles-server admin emails)"
      : "no SMTP server (BUNDLES_SMTP_URL): kept in the outbox, its links hidden; holders get no link until it is set"
    const lines = [
      `Data bundle reseller server listening on ${base}${extra}`,
      "",
      `  Open the dashboard in a browser: ${base}/`,
      "",
      `  database:   ${
        kind === "postgres" ? "Postgres (DATABASE_URL)" : `embedded, in ${path.join(dataDir, "pgdata")}`
      }`,
      `  dashboard:  ${base}/  (its API: ${base}/dashboard/v1)`,
      `  email:      ${mail}`,
      `  public API: ${base}/api/v1  (OpenAPI: ${base}/api/v1/openapi.json)`,
      `  admin API:  ${base}/admin/v1  (token: ${
        configuredToken ? "BUNDLES_ADMIN_TOKEN" : AdminToken.tokenFile(dataDir)
      })`
    ]
    if (yield* ServerConfig.webhookAllowPrivate) {
      lines.push(
        `  webhooks:   may go to private and loopback addresses (${
          demo._tag === "Some" ? "--demo" : "BUNDLES_WEBHOOK_ALLOW_PRIVATE"
        }); set BUNDLES_WEBHOOK_ALLOW_PRIVATE=0 to refuse them`
      )
    }
    if (!tls && !isLoopback(host)) {
      lines.push(
        `WARNING: plain HTTP on ${host}: API keys and the admin token would cross the network in clear text.`,
        "         Set TLS_CERT and TLS_KEY to serve HTTPS, or bind to 127.0.0.1 behind a TLS proxy."
      )
    }
    if (Option.isSome(demo)) {
      const { apiKey, created } = demo.value
      if (Option.isSome(apiKey) && created) {
        lines.push(
          "",
          `Demo account "Demo Reseller" created with ${formatGhs(Demo.DEMO_FUNDS)}. Its API key, shown this once:`,
          `  ${apiKey.value}`,
          `(kept in ${Demo.keyFile(dataDir)})`,
          "Try:",
          `  curl -s -H "x-api-key: ${apiKey.value}" -H "Accept: application/json" ${base}/api/v1/balance`
        )
        if (Option.isSome(demo.value.bundle)) {
          const { id, name } = demo.value.bundle.value
          lines.push(
            `Or buy ${name} with the reseller CLI (bundles):`,
            `  bundles buy ${id} 0241234567 --api-key ${apiKey.value} --base-url ${base}/api/v1`
          )
        }
      } else if (Option.isSome(apiKey)) {
        // Later starts do not print the key again: start-up output ends up in logs.
        lines.push(
          "",
          `Demo account API key: kept in ${Demo.keyFile(dataDir)}`,
          "Try:",
          `  curl -s -H "x-api-key: $(cat ${
            Demo.keyFile(dataDir)
          })" -H "Accept: application/json" ${base}/api/v1/balance`
        )
      } else if (!created) {
        lines.push("", "--demo: the database already holds data, so no demo account was added.")
      }
    }
    // Logs are JSON lines on stdout; a log shipper reads one format there, so the banner goes
    // to stderr unless stdout is a terminal (a person at it reads both).
    yield* (process.stdout.isTTY ? Console.log : Console.error)(lines.join("\n"))
  })

const seedDemo = (demo: boolean) =>
  demo ? Effect.map(Effect.flatMap(ServerConfig.dataDir, Demo.seed), Option.some) : Effect.succeed(Option.none())

const settings = (options: ServeOptions) =>
  Effect.gen(function*() {
    const config = yield* ServerConfig.serveConfig
    return {
      port: Option.getOrElse(options.port, () => config.port),
      host: Option.getOrElse(options.host, () => config.host),
      tls: Option.all({ cert: config.tlsCert, key: config.tlsKey }),
      workers: Option.getOrElse(options.workers ?? Option.none(), () => config.workers),
      metricsPort: Option.orElse(options.metricsPort ?? Option.none(), () => config.metricsPort)
    }
  })

/** The server could not listen: which address, and why, in words (its `toString` is the message). */
export class CannotListen extends Error {
  constructor(readonly host: string, readonly port: number, readonly code: string | undefined) {
    super(
      code === "EADDRINUSE"
        ? `Cannot listen on ${host}:${port}: the port is in use (EADDRINUSE), probably by another server. ` +
          "Stop it, or choose another port with --port or PORT."
        : code === "EACCES"
        ? `Cannot listen on ${host}:${port}: permission denied (EACCES); ports below 1024 need privileges. ` +
          "Choose another port with --port or PORT."
        : code === "EADDRNOTAVAIL"
        ? `Cannot listen on ${host}:${port}: no such address on this machine (EADDRNOTAVAIL). ` +
          "Choose another with --host or HOST."
        : `Cannot listen on ${host}:${port} (${code ?? "unknown error"})`
    )
  }
  override toString() {
    return this.message
  }
}

/** Turns the HTTP server's `ServeError` (it names neither the address nor the reason) into `CannotListen`. */
const explainServeError = (host: string, port: number) => (error: unknown) =>
  error instanceof HttpServerError.ServeError
    ? new CannotListen(
      host,
      port,
      typeof error.cause === "object" && error.cause !== null && "code" in error.cause
        ? String(error.cause.code)
        : undefined
    )
    : error

/** One server process: the application and its HTTP server; `quiet` for a worker of several. */
const single = (options: ServeOptions, quiet: boolean) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const { host, metricsPort, port, tls } = yield* settings(options)
    const traced = yield* Tracing.enabled
    const runtime = yield* Effect.runtime<never>()
    const server = NodeServer.make(
      tls,
      (refusal) => Runtime.runFork(runtime)(Effect.logInfo("request").pipe(Effect.annotateLogs({ ...refusal }))),
      yield* ServerConfig.connectionLimits,
      (event) =>
        Runtime.runFork(runtime)(
          (event.error === undefined ? Effect.logInfo : Effect.logError)(event.message).pipe(
            Effect.annotateLogs({
              trigger: event.trigger,
              ...(event.error === undefined ? {} : { error: event.error })
            })
          )
        )
    )
    const requests = Drain.track(server)
    // Built last, so released first: requests in flight finish while the application and
    // the database are still there.
    const started = Layer.scopedDiscard(Effect.gen(function*() {
      yield* Effect.addFinalizer(() => Drain.drain(server, requests, Duration.seconds(10)))
      if (quiet) return
      if (Option.isSome(metricsPort)) {
        const metrics = yield* Metrics.Metrics
        yield* Metrics.serve(metricsPort.value, host, () => metrics.registry.metrics(), metrics.contentType)
      }
      const address = yield* HttpServer.addressWith(Effect.succeed)
      const listening = address._tag === "TcpAddress" ? address : { hostname: host, port }
      yield* ServerAddress.publish(
        yield* ServerConfig.dataDir,
        ServerAddress.localUrl(Option.isSome(tls), listening.hostname, listening.port)
      )
      yield* announce(
        baseUrl(Option.isSome(tls), listening.hostname, listening.port),
        host,
        Option.isSome(tls),
        yield* seedDemo(options.demo)
      )
    }))
    return started.pipe(
      // Without a trace exporter (OTEL_EXPORTER_OTLP_ENDPOINT) the platform's span per request would only cost time.
      Layer.provideMerge(
        Http.serve.pipe(HttpMiddleware.withTracerDisabledWhen(() => !traced))
      ),
      Layer.provide(
        Layer.mapError(NodeHttpServer.layer(() => server, { port, host }), explainServeError(host, port))
      ),
      Layer.provide(Http.AppLive),
      Layer.provide(Database.layer)
    )
  }))

/**
 * The primary of `--workers N`: migrations and the demo set-up happen here once, then the
 * workers start, each a whole server sharing the port and, through the database, the rate
 * limits.
 */
const primary = (options: ServeOptions, count: number) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const { host, metricsPort, tls } = yield* settings(options)
    if ((yield* Database.kind) === "embedded") {
      return yield* Effect.fail(
        new Error("--workers needs Postgres (DATABASE_URL): the embedded database serves one process")
      )
    }
    const demo = yield* seedDemo(options.demo).pipe(
      Effect.provide(Http.DomainLive.pipe(Layer.provideMerge(Database.layer))),
      Effect.scoped
    )
    const store = yield* ServerConfig.rateLimitStore
    // Every worker's figures, gathered here: for a scrape of any worker, and on --metrics-port.
    const metrics = yield* Metrics.primary
    if (Option.isSome(metricsPort)) yield* Metrics.serve(metricsPort.value, host, metrics.scrape, metrics.contentType)
    // (The port the workers report: the one asked for, or the one the system chose for port 0.)
    const listening = yield* Cluster.run(count, { BUNDLES_RATE_LIMIT_STORE: store === "auto" ? "database" : store })
    yield* ServerAddress.publish(
      yield* ServerConfig.dataDir,
      ServerAddress.localUrl(Option.isSome(tls), host, listening.port)
    )
    yield* announce(
      baseUrl(Option.isSome(tls), host, listening.port),
      host,
      Option.isSome(tls),
      demo,
      ` (${count} workers)`
    )
  }))

/**
 * `--demo` is local development: webhooks may go to a receiver on this machine, and dashboard
 * email is written to the log as well as the outbox, unless the environment says otherwise. A fallback under the environment, so an explicit setting wins.
 */
const demoDefaults = (demo: boolean) =>
  demo
    ? Layer.unwrapEffect(Effect.configProviderWith((current) =>
      Effect.succeed(Layer.setConfigProvider(current.pipe(
        ConfigProvider.orElse(() =>
          ConfigProvider.fromMap(
            new Map([
              ["BUNDLES_WEBHOOK_ALLOW_PRIVATE", "1"],
              // Dashboard email (verification and reset links) goes to the log too, for development,
              // and the dashboard shows it in its demo mailbox (on loopback, without SMTP).
              ["BUNDLES_MAIL_LOG", "1"],
              ["BUNDLES_DEMO_MAILBOX", "1"]
            ])
          )
        )
      )))
    ))
    : Layer.empty

/** The server as a Layer: launch it to serve until interrupted (SIGINT/SIGTERM stop it cleanly). */
export const layer = (options: ServeOptions) =>
  Layer.unwrapEffect(
    Effect.map(Effect.zipRight(Production.check(options), settings(options)), ({ workers }) =>
      Cluster.isWorker ? single(options, true) : workers > 1 ? primary(options, workers) : single(options, false))
  ).pipe(Layer.provide(Tracing.layer), Layer.provide(demoDefaults(options.demo)))
