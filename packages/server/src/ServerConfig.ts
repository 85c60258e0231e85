/**
 * The server's configuration, read from the environment in this one place.
 */
import { Config, ConfigError, Effect, Either, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClientAddress from "./ClientAddress.js"

/** Where the embedded database, the generated admin token and the demo key live. */
export const dataDir = Config.string("BUNDLES_DATA_DIR").pipe(
  Config.withDefault(".bundles"),
  Config.map((dir) => path.resolve(dir))
)

/** `DATABASE_URL`: Postgres when set, the embedded PGlite in the data directory when not. */
export const databaseUrl: Config.Config<Option.Option<Redacted.Redacted>> = Config.option(
  Config.redacted("DATABASE_URL")
).pipe(Config.map(Option.filter((url) => url.toString().length > 0)))

/**
 * `BUNDLES_PG_PREPARED`: the hot statements are prepared once per Postgres connection (the
 * default); `0` for a connection pooler that cannot keep a connection's prepared statements.
 */
export const databasePrepared = Config.boolean("BUNDLES_PG_PREPARED").pipe(Config.withDefault(true))

/** Everything `serve` needs. */
export const serveConfig = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  tlsCert: Config.option(Config.string("TLS_CERT")),
  tlsKey: Config.option(Config.string("TLS_KEY")),
  workers: Config.integer("BUNDLES_WORKERS").pipe(
    Config.withDefault(1),
    Config.validate({ message: "must be from 1 to 64", validation: (n) => n >= 1 && n <= 64 })
  ),
  metricsPort: Config.option(Config.port("BUNDLES_METRICS_PORT"))
})

/** The admin token when configured; otherwise one is generated into the data directory. */
export const adminToken: Config.Config<Option.Option<Redacted.Redacted>> = Config.option(
  Config.redacted("BUNDLES_ADMIN_TOKEN")
)

/** Peers trusted to report the client address in `X-Forwarded-For` (`BUNDLES_TRUSTED_PROXIES`). */
export const trustedProxies = Config.string("BUNDLES_TRUSTED_PROXIES").pipe(
  Config.withDefault(""),
  Config.map(ClientAddress.parseTrusted)
)

/** Descriptors kept for everything but client connections: the database, files, outgoing calls. */
const RESERVED_DESCRIPTORS = 128

/** The process's soft limit on open descriptors, where the system says (Linux); else none known. */
const descriptorLimit = (): number | undefined => {
  try {
    const line = fs.readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"))
    const soft = Number(line?.split(/\s{2,}/)[1])
    return Number.isFinite(soft) && soft > 0 ? soft : undefined
  } catch {
    return undefined
  }
}

/**
 * How many connections the server holds (`BUNDLES_MAX_CONNECTIONS`, default: the descriptor
 * limit less 128 kept for the database and the rest, at most 10000, 1000 where the limit is
 * unknown) and how many of them one client address may hold (`BUNDLES_MAX_CONNECTIONS_PER_ADDRESS`,
 * default: half the total, at most 256). Trusted proxies have no per-address cap.
 */
export const connectionLimits = Effect.gen(function*() {
  const limit = descriptorLimit()
  const fallback = limit === undefined ? 1000 : Math.max(16, Math.min(10_000, limit - RESERVED_DESCRIPTORS))
  const total = yield* Config.integer("BUNDLES_MAX_CONNECTIONS").pipe(
    Config.withDefault(fallback),
    Config.validate({ message: "must be a whole number from 1", validation: (n) => n >= 1 })
  )
  const perAddress = yield* Config.integer("BUNDLES_MAX_CONNECTIONS_PER_ADDRESS").pipe(
    Config.withDefault(Math.max(1, Math.min(256, Math.floor(total / 2)))),
    Config.validate({ message: "must be a whole number from 1", validation: (n) => n >= 1 })
  )
  return { total, perAddress, trusted: yield* trustedProxies }
})

/** Where rate-limit counts live: `memory` (one process), `database` (shared), or `auto`. */
export const rateLimitStore = Config.literal("auto", "memory", "database")("BUNDLES_RATE_LIMIT_STORE").pipe(
  Config.withDefault("auto" as const)
)

/**
 * Whether webhooks may go to private, loopback and link-local addresses
 * (`BUNDLES_WEBHOOK_ALLOW_PRIVATE`); off unless set, on by default under `serve --demo`.
 */
export const webhookAllowPrivate = Config.boolean("BUNDLES_WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false))

/** The dashboard's public address (`BUNDLES_PUBLIC_URL`), for email links; else the listening address. */
export const publicUrl = Config.option(Config.string("BUNDLES_PUBLIC_URL")).pipe(
  Config.map(Option.filter((url) => url.trim().length > 0)),
  Config.map(Option.map((url) => url.trim().replace(/\/+$/, "")))
)

/** `BUNDLES_SECURE_COOKIES`: forces the session cookie's `Secure` flag on or off. */
export const secureCookies = Config.option(Config.boolean("BUNDLES_SECURE_COOKIES"))

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?)$/

/** True for a loopback peer address (`127.x.y.z`, `::1`, `::ffff:127.x.y.z`). */
export const isLoopbackAddress = (address: string): boolean => {
  const plain = address.startsWith("::ffff:") ? address.slice(7) : address
  return plain !== "localhost" && LOOPBACK.test(plain)
}

/**
 * Where dashboard links point and whether its cookie is `Secure`: the public URL when set,
 * else the listening address; `Secure` unless that is plain HTTP on loopback (development).
 */
export const dashboard = Effect.gen(function*() {
  const serve = yield* serveConfig
  const tls = Option.isSome(serve.tlsCert) && Option.isSome(serve.tlsKey)
  const host = serve.host.includes(":") ? `[${serve.host}]` : serve.host
  const url = Option.getOrElse(yield* publicUrl, () => `${tls ? "https" : "http"}://${host}:${serve.port}`)
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  const plainLoopback = parsed !== undefined && parsed.protocol === "http:" && LOOPBACK.test(parsed.hostname)
  const secure = Option.getOrElse(yield* secureCookies, () => !plainLoopback)
  return { publicUrl: url, secureCookies: secure }
})

/**
 * The mail server dashboard email goes through (`BUNDLES_SMTP_URL`, `smtp://user:pass@host:587`
 * or `smtps://...:465`); none keeps email in the outbox only.
 */
export const smtpUrl: Config.Config<Option.Option<Redacted.Redacted>> = Config.option(
  Config.redacted("BUNDLES_SMTP_URL")
).pipe(
  Config.map(Option.filter((url) => Redacted.value(url).trim().length > 0)),
  Config.mapOrFail((option) => {
    const text = Option.match(option, { onNone: () => "", onSome: (url) => Redacted.value(url).trim() })
    return text === "" || (URL.canParse(text) && /^smtps?:$/.test(new URL(text).protocol))
      ? Either.right(option)
      : Either.left(ConfigError.InvalidData(
        ["BUNDLES_SMTP_URL"],
        "must be an smtp:// or smtps:// URL, e.g. smtp://user:password@mail.example.com:587"
      ))
  })
)

/** The sender of dashboard email (`BUNDLES_MAIL_FROM`, e.g. `Data Bundles <no-reply@example.com>`). */
export const mailFrom = Config.option(Config.string("BUNDLES_MAIL_FROM")).pipe(
  Config.map(Option.filter((from) => from.trim().length > 0))
)

/**
 * Whether the dashboard offers the demo mailbox (`GET /dashboard/v1/demo/mailbox`): asked for by
 * `BUNDLES_DEMO_MAILBOX` (which `serve --demo` sets), and only while the server listens on a
 * loopback address, its public URL (if any) is one too, and no SMTP server is configured. Then
 * only someone on this machine can read it, and nobody gets real email it would duplicate.
 */
export const demoMailbox = Effect.gen(function*() {
  const wanted = yield* Config.boolean("BUNDLES_DEMO_MAILBOX").pipe(Config.withDefault(false))
  if (!wanted) return false
  const serve = yield* serveConfig
  const { publicUrl } = yield* dashboard
  const hostname = URL.canParse(publicUrl) ? new URL(publicUrl).hostname : ""
  return LOOPBACK.test(serve.host) && LOOPBACK.test(hostname) && Option.isNone(yield* smtpUrl)
})
