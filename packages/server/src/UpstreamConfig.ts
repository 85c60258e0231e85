/**
 * Which fulfilment provider the server uses, and the upstreams it buys from: read from the
 * environment (`BUNDLES_PROVIDER`, `BUNDLES_UPSTREAM_*`) and, for several upstreams, from the
 * JSON file named by `BUNDLES_UPSTREAMS_FILE`.
 */
import { Amount } from "@databundle/contract/Money"
import { Config, ConfigError, Duration, Effect, Either, Option, ParseResult, Redacted, Schema } from "effect"
import * as fs from "node:fs"

/** `simulator` (the default), `upstream` (wholesalers of this API) or `reloadly`. */
export const provider = Config.literal("simulator", "upstream", "reloadly")("BUNDLES_PROVIDER").pipe(
  Config.withDefault("simulator" as const)
)

/** Priorities of an upstream for the networks it serves: lower first; `*` for any other network. */
export type Priorities = Readonly<Record<string, number>>

/** Reloadly's top-up API for each environment, and its token endpoint. */
export const RELOADLY = {
  sandbox: "https://topups-sandbox.reloadly.com",
  live: "https://topups.reloadly.com",
  auth: "https://auth.reloadly.com/oauth/token"
} as const

/** How we sign in to a Reloadly account (OAuth client credentials). */
export interface ReloadlyAccess {
  readonly kind: "reloadly"
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** Its token endpoint (`RELOADLY.auth` unless set). */
  readonly authUrl: string
  /** The API the token is for: the environment's top-up address. */
  readonly audience: string
  /** Our network slug for an operator id, where the name alone would not give the right one. */
  readonly operators: Readonly<Record<string, string>>
}

/** How we sign in to a wholesaler of this API. */
export interface ApiKeyAccess {
  readonly kind: "upstream"
  readonly apiKey: Redacted.Redacted<string>
}

/** One supplier account: a wholesaler of this same API, or an aggregator. */
export interface Upstream {
  /** The operator's name for it, shown by `admin upstreams` and used by `catalog sync --upstream`. */
  readonly name: string
  /** Its `/api/v1` base URL, or the aggregator's API address. */
  readonly url: string
  readonly access: ApiKeyAccess | ReloadlyAccess
  readonly priorities: Priorities
  /** Below this main balance (pesewas) an alert is raised. */
  readonly lowBalance: Option.Option<bigint>
  /**
   * The secret that signs the upstream's webhooks to us (its account's `whsec_`), when we
   * receive them at `POST /upstream-webhooks/{name}`; without it they are refused.
   */
  readonly webhookSecret: Option.Option<Redacted.Redacted<string>>
}

/** The upstream's priority for a network, or none when it does not serve it. */
export const priorityFor = (upstream: Upstream, networkSlug: string): Option.Option<number> =>
  Option.fromNullable(upstream.priorities[networkSlug] ?? upstream.priorities["*"])

/** How the upstream provider behaves; every duration is set by the operator. */
export interface Tuning {
  /** The longest one upstream call may take (`BUNDLES_UPSTREAM_TIMEOUT_SECONDS`, default 10). */
  readonly timeout: Duration.Duration
  /**
   * How long an order may wait for an upstream to take it (`BUNDLES_UPSTREAM_DEADLINE_SECONDS`,
   * default 900); then it fails with a refund, but only when no upstream may hold it.
   */
  readonly deadline: Duration.Duration
  /** First wait before trying unavailable upstreams again, doubling (`BUNDLES_UPSTREAM_RETRY_SECONDS`, 5). */
  readonly retry: Duration.Duration
  /** First wait before asking about an order an upstream holds pending, doubling (`BUNDLES_UPSTREAM_POLL_SECONDS`, 5). */
  readonly poll: Duration.Duration
  /** Consecutive failures that open an upstream's circuit (`BUNDLES_UPSTREAM_BREAKER_FAILURES`, 5). */
  readonly breakerFailures: number
  /** How long an open circuit sends nothing (`BUNDLES_UPSTREAM_BREAKER_SECONDS`, 30). */
  readonly breakerCooldown: Duration.Duration
  /** How often balances are read for the low-balance alert (`BUNDLES_UPSTREAM_BALANCE_SECONDS`, 60). */
  readonly balanceEvery: Duration.Duration
}

const seconds = (name: string, fallback: number) =>
  Config.number(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: "must be a number of seconds above 0", validation: (n) => n > 0 }),
    Config.map(Duration.seconds)
  )

/** The provider's tuning. */
export const tuning: Config.Config<Tuning> = Config.all({
  timeout: seconds("BUNDLES_UPSTREAM_TIMEOUT_SECONDS", 10),
  deadline: seconds("BUNDLES_UPSTREAM_DEADLINE_SECONDS", 900),
  retry: seconds("BUNDLES_UPSTREAM_RETRY_SECONDS", 5),
  poll: seconds("BUNDLES_UPSTREAM_POLL_SECONDS", 5),
  breakerFailures: Config.integer("BUNDLES_UPSTREAM_BREAKER_FAILURES").pipe(
    Config.withDefault(5),
    Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 })
  ),
  breakerCooldown: seconds("BUNDLES_UPSTREAM_BREAKER_SECONDS", 30),
  balanceEvery: seconds("BUNDLES_UPSTREAM_BALANCE_SECONDS", 60)
})

const Name = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,31}$/, { message: () => "must be 1 to 32 characters of a-z, 0-9, _ and -" })
)

/** One entry of `BUNDLES_UPSTREAMS_FILE`. */
const FileEntry = Schema.Struct({
  name: Name,
  /** `upstream` (the default): a wholesaler of this API; `reloadly`: Reloadly's top-up API. */
  kind: Schema.optionalWith(Schema.Literal("upstream", "reloadly"), { default: () => "upstream" as const }),
  /** The wholesaler's `/api/v1` base; for Reloadly, an address other than its environment's. */
  url: Schema.optional(Schema.String),
  /** Reloadly: `sandbox` (the default) or `live`. */
  environment: Schema.optional(Schema.Literal("sandbox", "live")),
  client_id: Schema.optional(Schema.String),
  client_secret: Schema.optional(Schema.String),
  client_secret_env: Schema.optional(Schema.String),
  auth_url: Schema.optional(Schema.String),
  /** Reloadly: our network slug for an operator id (`{ "643": "mtn" }`). */
  operators: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  /** The key itself, or the name of the environment variable that holds it (preferred). */
  api_key: Schema.optional(Schema.String),
  api_key_env: Schema.optional(Schema.String),
  networks: Schema.optionalWith(
    Schema.Record({
      key: Schema.String.pipe(
        Schema.pattern(/^(\*|[a-z0-9][a-z0-9-]{0,31})$/, { message: () => "must be a network slug or *" })
      ),
      value: Schema.Int.pipe(Schema.between(0, 1000))
    }),
    { default: () => ({ "*": 100 }) }
  ),
  low_balance: Schema.optional(Amount),
  /** The upstream's webhook signing secret, or the variable that holds it (preferred). */
  webhook_secret: Schema.optional(Schema.String),
  webhook_secret_env: Schema.optional(Schema.String)
})

/** `BUNDLES_UPSTREAMS_FILE`: `{ "upstreams": [ ... ] }`. */
export const UpstreamsFile = Schema.Struct({ upstreams: Schema.Array(FileEntry).pipe(Schema.minItems(1)) })

const invalid = (path: string, message: string) => ConfigError.InvalidData([path], message)

/** Reads and checks an upstreams file; `env` supplies the keys named by `api_key_env`. */
export const parseFile = (
  text: string,
  env: (name: string) => string | undefined
): Either.Either<ReadonlyArray<Upstream>, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(`is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  const decoded = Schema.decodeUnknownEither(UpstreamsFile, { errors: "all", onExcessProperty: "error" })(json)
  if (Either.isLeft(decoded)) {
    return Either.left(
      ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((i) => `${i.path.join(".")}: ${i.message}`).join(
        "; "
      )
    )
  }
  const out: Array<Upstream> = []
  for (const entry of decoded.right.upstreams) {
    if (out.some((u) => u.name === entry.name)) return Either.left(`upstream "${entry.name}" is listed twice`)
    let access: Upstream["access"]
    let url: string
    if (entry.kind === "reloadly") {
      const secret = entry.client_secret ??
        (entry.client_secret_env === undefined ? undefined : env(entry.client_secret_env))
      if (entry.client_id === undefined || secret === undefined || secret.length === 0) {
        return Either.left(
          `upstream "${entry.name}" (reloadly) needs client_id and client_secret_env (or client_secret)`
        )
      }
      const audience = RELOADLY[entry.environment ?? "sandbox"]
      url = entry.url ?? audience
      access = {
        kind: "reloadly",
        clientId: entry.client_id,
        clientSecret: Redacted.make(secret),
        authUrl: entry.auth_url ?? RELOADLY.auth,
        audience,
        operators: entry.operators ?? {}
      }
    } else {
      const key = entry.api_key ?? (entry.api_key_env === undefined ? undefined : env(entry.api_key_env))
      if (key === undefined || key.length === 0) {
        return Either.left(
          `upstream "${entry.name}" has no API key (set api_key_env to a variable that holds it, or api_key)`
        )
      }
      if (entry.url === undefined) return Either.left(`upstream "${entry.name}" has no url`)
      url = entry.url
      access = { kind: "upstream", apiKey: Redacted.make(key) }
    }
    const secret = entry.webhook_secret ??
      (entry.webhook_secret_env === undefined ? undefined : env(entry.webhook_secret_env))
    if (entry.webhook_secret_env !== undefined && (secret === undefined || secret.length === 0)) {
      return Either.left(`upstream "${entry.name}": ${entry.webhook_secret_env} (webhook_secret_env) is not set`)
    }
    out.push({
      name: entry.name,
      url,
      access,
      priorities: entry.networks,
      lowBalance: Option.fromNullable(entry.low_balance),
      webhookSecret: Option.map(Option.fromNullable(secret), Redacted.make)
    })
  }
  return Either.right(out)
}

/**
 * The configured upstreams: the file when `BUNDLES_UPSTREAMS_FILE` is set, else the one of
 * `BUNDLES_UPSTREAM_URL` and `BUNDLES_UPSTREAM_API_KEY` (named by `BUNDLES_UPSTREAM_NAME`,
 * default `upstream`, serving every network).
 */
export const upstreams: Config.Config<ReadonlyArray<Upstream>> = Config.option(Config.string("BUNDLES_UPSTREAMS_FILE"))
  .pipe(
    Config.mapOrFail((file) => {
      if (Option.isNone(file)) return Either.right(Option.none<ReadonlyArray<Upstream>>())
      let text: string
      try {
        text = fs.readFileSync(file.value, "utf8")
      } catch (error) {
        return Either.left(invalid("BUNDLES_UPSTREAMS_FILE", `cannot read ${file.value}: ${String(error)}`))
      }
      return parseFile(text, (name) => process.env[name]).pipe(
        Either.mapLeft((message) => invalid("BUNDLES_UPSTREAMS_FILE", `${file.value} ${message}`)),
        Either.map(Option.some)
      )
    }),
    (fromFile) =>
      Config.all({
        fromFile,
        name: Config.string("BUNDLES_UPSTREAM_NAME").pipe(Config.withDefault("upstream")),
        url: Config.option(Config.string("BUNDLES_UPSTREAM_URL")),
        apiKey: Config.option(Config.redacted("BUNDLES_UPSTREAM_API_KEY")),
        lowBalance: Config.option(Config.string("BUNDLES_UPSTREAM_LOW_BALANCE")),
        webhookSecret: Config.option(Config.redacted("BUNDLES_UPSTREAM_WEBHOOK_SECRET"))
      }),
    Config.mapOrFail(({ apiKey, fromFile, lowBalance, name, url, webhookSecret }) => {
      if (Option.isSome(fromFile)) return Either.right(fromFile.value)
      if (Option.isNone(url) || Option.isNone(apiKey)) {
        return Either.left(invalid(
          "BUNDLES_UPSTREAM_URL",
          "BUNDLES_PROVIDER=upstream needs BUNDLES_UPSTREAM_URL and BUNDLES_UPSTREAM_API_KEY, or BUNDLES_UPSTREAMS_FILE"
        ))
      }
      if (!Schema.is(Name)(name)) return Either.left(invalid("BUNDLES_UPSTREAM_NAME", "must be 1 to 32 of a-z 0-9 _ -"))
      const low = Option.map(lowBalance, (text) => Schema.decodeUnknownEither(Amount)(Number(text)))
      if (Option.isSome(low) && Either.isLeft(low.value)) {
        return Either.left(invalid("BUNDLES_UPSTREAM_LOW_BALANCE", "must be an amount in cedis"))
      }
      return Either.right([{
        name,
        url: url.value,
        access: { kind: "upstream" as const, apiKey: apiKey.value },
        priorities: { "*": 100 },
        lowBalance: Option.flatMap(low, Either.getRight),
        webhookSecret
      }])
    })
  )

/**
 * One Reloadly account from the environment (`BUNDLES_PROVIDER=reloadly` without
 * `BUNDLES_UPSTREAMS_FILE`): `BUNDLES_RELOADLY_CLIENT_ID`, `BUNDLES_RELOADLY_CLIENT_SECRET`,
 * `BUNDLES_RELOADLY_ENVIRONMENT` (`sandbox`, the default, or `live`), and for a stand-in of it
 * `BUNDLES_RELOADLY_URL` and `BUNDLES_RELOADLY_AUTH_URL`; named `reloadly`, serving every network.
 */
export const reloadly: Config.Config<ReadonlyArray<Upstream>> = Config.all({
  clientId: Config.string("BUNDLES_RELOADLY_CLIENT_ID"),
  clientSecret: Config.redacted("BUNDLES_RELOADLY_CLIENT_SECRET"),
  environment: Config.literal("sandbox", "live")("BUNDLES_RELOADLY_ENVIRONMENT").pipe(
    Config.withDefault("sandbox" as const)
  ),
  url: Config.option(Config.string("BUNDLES_RELOADLY_URL")),
  authUrl: Config.string("BUNDLES_RELOADLY_AUTH_URL").pipe(Config.withDefault(RELOADLY.auth)),
  lowBalance: Config.option(Config.string("BUNDLES_RELOADLY_LOW_BALANCE"))
}).pipe(
  Config.mapOrFail(({ authUrl, clientId, clientSecret, environment, lowBalance, url }) => {
    const low = Option.map(lowBalance, (text) => Schema.decodeUnknownEither(Amount)(Number(text)))
    if (Option.isSome(low) && Either.isLeft(low.value)) {
      return Either.left(invalid("BUNDLES_RELOADLY_LOW_BALANCE", "must be an amount in the account's currency"))
    }
    return Either.right([{
      name: "reloadly",
      url: Option.getOrElse(url, () => RELOADLY[environment]),
      access: {
        kind: "reloadly" as const,
        clientId,
        clientSecret,
        authUrl,
        audience: RELOADLY[environment],
        operators: {}
      },
      priorities: { "*": 100 },
      lowBalance: Option.flatMap(low, Either.getRight),
      webhookSecret: Option.none()
    }])
  })
)

/** The upstreams when the provider is `upstream` or `reloadly` (the file, when set, for either); none for the simulator. */
export const configured: Effect.Effect<ReadonlyArray<Upstream>, ConfigError.ConfigError> = Effect.flatMap(
  provider,
  (kind) =>
    kind === "simulator"
      ? Effect.succeed([])
      : kind === "upstream"
      ? upstreams
      : Effect.flatMap(Config.option(Config.string("BUNDLES_UPSTREAMS_FILE")), (file) =>
        Option.isSome(file) ? upstreams : reloadly)
)

/** Where the operator's alerts are sent, signed like account webhooks. */
export interface OperatorWebhook {
  readonly url: string
  readonly secret: Redacted.Redacted<string>
}

/** A secret both signatures accept: `whsec_` (optional) and base64. */
const isSigningSecret = (secret: string): boolean => {
  const body = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret
  if (body.length < 24 || !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) return false
  try {
    atob(body)
    return true
  } catch {
    return false
  }
}

/**
 * `BUNDLES_OPERATOR_WEBHOOK_URL` and `BUNDLES_OPERATOR_WEBHOOK_SECRET`: where operator alerts
 * (a low upstream balance) are posted. Both or neither.
 */
export const operatorWebhook: Config.Config<Option.Option<OperatorWebhook>> = Config.all({
  url: Config.option(Config.string("BUNDLES_OPERATOR_WEBHOOK_URL")),
  secret: Config.option(Config.redacted("BUNDLES_OPERATOR_WEBHOOK_SECRET"))
}).pipe(
  Config.mapOrFail(({ secret, url }) => {
    if (Option.isNone(url) && Option.isNone(secret)) return Either.right(Option.none())
    if (Option.isNone(url) || Option.isNone(secret)) {
      return Either.left(invalid(
        "BUNDLES_OPERATOR_WEBHOOK_URL",
        "BUNDLES_OPERATOR_WEBHOOK_URL and BUNDLES_OPERATOR_WEBHOOK_SECRET go together"
      ))
    }
    if (!/^https?:\/\/[^\s]+$/.test(url.value)) {
      return Either.left(invalid("BUNDLES_OPERATOR_WEBHOOK_URL", "must be an http or https URL"))
    }
    if (!isSigningSecret(Redacted.value(secret.value))) {
      return Either.left(invalid(
        "BUNDLES_OPERATOR_WEBHOOK_SECRET",
        "must be whsec_ and at least 24 base64 characters (openssl rand -base64 32)"
      ))
    }
    return Either.right(Option.some({ url: url.value, secret: secret.value }))
  })
)
