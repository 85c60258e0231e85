/**
 * `BUNDLES_ENV=production`: the settings a server facing the public must have, checked
 * before `serve` opens the database. Every default of the server suits a developer's
 * machine (a generated admin token, plain HTTP on loopback, email in the log, simulators that
 * deliver nothing and collect nothing); in production each of those is a mistake, so the
 * server refuses to start and names every setting that is missing or wrong, all at once.
 */
import { Config, Effect, Option } from "effect"

/** One refusal: the setting, and why it must be set. */
export interface Problem {
  readonly setting: string
  readonly reason: string
}

/** The server refused to start in production; the message names every setting (its `toString` is the message). */
export class ProductionSettings extends Error {
  constructor(readonly problems: ReadonlyArray<Problem>) {
    super(
      [
        `BUNDLES_ENV=production: the server will not start until ${problems.length} setting${
          problems.length === 1 ? " is" : "s are"
        } fixed:`,
        ...problems.map(({ reason, setting }) => `  ${setting}: ${reason}`),
        "See docs/install.md, \"Settings production needs\"."
      ].join("\n")
    )
  }
  override toString() {
    return this.message
  }
}

const setting = (name: string) =>
  Config.option(Config.string(name)).pipe(Config.map(Option.filter((value) => value.trim().length > 0)))

/** `BUNDLES_ENV`: `production`, or anything else (development, the default). */
export const isProduction = Config.string("BUNDLES_ENV").pipe(
  Config.withDefault("development"),
  Config.map((env) => env.trim().toLowerCase() === "production")
)

/** The admin token's shortest length in production: 32 characters, about 190 bits when random. */
export const MIN_ADMIN_TOKEN = 32

/** What is wrong with the environment for production (none when `BUNDLES_ENV` is not `production`). */
export const problems = (options: { readonly demo: boolean }) =>
  Effect.gen(function*() {
    if (!(yield* isProduction)) return []
    const found: Array<Problem> = []
    const add = (setting: string, reason: string) => found.push({ setting, reason })
    const adminToken = yield* setting("BUNDLES_ADMIN_TOKEN")
    if (Option.isNone(adminToken)) {
      add("BUNDLES_ADMIN_TOKEN", "set the admin API's token (not generated into the data directory in production)")
    } else if (adminToken.value.length < MIN_ADMIN_TOKEN) {
      add("BUNDLES_ADMIN_TOKEN", `at least ${MIN_ADMIN_TOKEN} characters (openssl rand -hex 32)`)
    }
    const publicUrl = yield* setting("BUNDLES_PUBLIC_URL")
    if (Option.isNone(publicUrl)) {
      add("BUNDLES_PUBLIC_URL", "the https:// address people reach the server at (email links, secure cookies)")
    } else if (!publicUrl.value.startsWith("https://")) {
      add("BUNDLES_PUBLIC_URL", `must be an https:// address, not ${publicUrl.value}`)
    }
    const tls = Option.isSome(yield* setting("TLS_CERT")) && Option.isSome(yield* setting("TLS_KEY"))
    if (!tls && Option.isNone(yield* setting("BUNDLES_TRUSTED_PROXIES"))) {
      add(
        "TLS_CERT and TLS_KEY, or BUNDLES_TRUSTED_PROXIES",
        "serve HTTPS itself, or name the TLS proxy in front of it (Caddy, nginx)"
      )
    }
    if (Option.isNone(yield* setting("BUNDLES_SMTP_URL"))) {
      add("BUNDLES_SMTP_URL", "the mail server for the dashboard's verification and password-reset email")
    }
    if (Option.isNone(yield* setting("BUNDLES_PROVIDER"))) {
      add(
        "BUNDLES_PROVIDER",
        "choose fulfilment explicitly: upstream or reloadly (simulator delivers no data; only on purpose)"
      )
    }
    if (Option.isNone(yield* setting("BUNDLES_PAYMENTS_PROVIDER"))) {
      add(
        "BUNDLES_PAYMENTS_PROVIDER",
        "choose the payment gateway: paystack (simulator credits wallets with no payment; only on purpose)"
      )
    }
    if (options.demo) add("--demo", "the demo account and catalogue are for development")
    return found
  })

/** Fails with `ProductionSettings` when `BUNDLES_ENV=production` and a setting is missing or wrong. */
export const check = (options: { readonly demo: boolean }) =>
  Effect.flatMap(
    problems(options),
    (found) => found.length === 0 ? Effect.void : Effect.fail(new ProductionSettings(found))
  )
