/**
 * The domain's tunables, read from the environment in this one place.
 */
import { RateLimit } from "@databundle/contract"
import { Config, ConfigError, Duration, Effect, Either } from "effect"

/** Parses `all=60,orders=10,balance=30`; scopes left out keep the spec's defaults. */
export const parseRateLimits = (text: string): Either.Either<Record<RateLimit.RateLimitScope, number>, string> => {
  const limits = { ...RateLimit.DEFAULT_RATE_LIMITS }
  for (const part of text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const [scope, value] = part.split("=").map((s) => s.trim())
    if (!RateLimit.RATE_LIMIT_SCOPES.includes(scope as RateLimit.RateLimitScope)) {
      return Either.left(`unknown rate limit scope "${scope}" (expected all, orders or balance)`)
    }
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1 || n > 1_000_000) {
      return Either.left(`rate limit "${part}" must be a whole number from 1 to 1000000`)
    }
    limits[scope as RateLimit.RateLimitScope] = n
  }
  return Either.right(limits)
}

const rateLimits = Config.string("BUNDLES_RATE_LIMITS").pipe(
  Config.withDefault(""),
  Config.mapOrFail((text) =>
    Either.mapLeft(parseRateLimits(text), (message) => ConfigError.InvalidData(["BUNDLES_RATE_LIMITS"], message))
  )
)

/** Parses `dashboard=300,access=20`; scopes left out keep their defaults. */
export const parseDashboardLimits = (
  text: string
): Either.Either<Record<RateLimit.DashboardRateLimitScope, number>, string> => {
  const limits = { ...RateLimit.DEFAULT_DASHBOARD_LIMITS }
  for (const part of text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)) {
    const [scope, value] = part.split("=").map((s) => s.trim())
    if (!RateLimit.DashboardRateLimitScope.literals.includes(scope as RateLimit.DashboardRateLimitScope)) {
      return Either.left(`unknown dashboard rate limit scope "${scope}" (expected dashboard or access)`)
    }
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1 || n > 1_000_000) {
      return Either.left(`rate limit "${part}" must be a whole number from 1 to 1000000`)
    }
    limits[scope as RateLimit.DashboardRateLimitScope] = n
  }
  return Either.right(limits)
}

const dashboardLimits = Config.string("BUNDLES_DASHBOARD_LIMITS").pipe(
  Config.withDefault(""),
  Config.mapOrFail((text) =>
    Either.mapLeft(
      parseDashboardLimits(text),
      (message) => ConfigError.InvalidData(["BUNDLES_DASHBOARD_LIMITS"], message)
    )
  )
)

const seconds = (name: string, fallback: number) =>
  Config.number(name).pipe(Config.withDefault(fallback), Config.map(Duration.seconds))

/** Tunables of the domain services. */
export class Settings extends Effect.Service<Settings>()("core/Settings", {
  effect: Effect.gen(function*() {
    return {
      /** Default per-minute limits; accounts may override them. */
      rateLimits: yield* rateLimits,
      /** Per-minute limits of the dashboard's scopes (the same for every account). */
      dashboardLimits: yield* dashboardLimits,
      /** How long the simulator keeps a `...9999` order pending. */
      simulatorPending: yield* seconds("BUNDLES_SIMULATOR_PENDING_SECONDS", 30),
      /** The longest an API key lookup is reused: bounds how late a revoke or suspension bites. */
      authCacheTtl: yield* seconds("BUNDLES_AUTH_CACHE_SECONDS", 2),
      /** Failed authentications a client address may make per minute before it is refused outright. */
      authFailureLimit: yield* Config.integer("BUNDLES_AUTH_FAILURE_LIMIT").pipe(
        Config.withDefault(20),
        Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 })
      ),
      /** The price group a dashboard registration lands in; none (base prices) when unset. */
      defaultPriceGroup: yield* Config.string("BUNDLES_DEFAULT_PRICE_GROUP").pipe(
        Config.withDefault(""),
        Config.map((name) => name.trim() === "" ? null : name.trim())
      ),
      /** Below this main balance (pesewas) the dashboard's home page warns. */
      lowBalance: yield* Config.number("BUNDLES_LOW_BALANCE_CEDIS").pipe(
        Config.withDefault(20),
        Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }),
        Config.map((cedis) => BigInt(Math.round(cedis * 100)))
      ),
      /** What a manual transfer's payer is told: where to send the money. */
      manualTransferInstructions: yield* Config.string("BUNDLES_MANUAL_TRANSFER_INSTRUCTIONS").pipe(
        Config.withDefault(
          "Send the amount to the operator's account and quote the payment number as the reference; " +
            "the wallet is credited when the operator confirms it."
        )
      ),
      /** The longest a catalogue read is reused: bounds how late a catalogue import shows. */
      catalogCacheTtl: yield* seconds("BUNDLES_CATALOG_CACHE_SECONDS", 5),
      /** How often the background workers look for due work (pending orders, webhook deliveries). */
      pollInterval: yield* seconds("BUNDLES_POLL_SECONDS", 1),
      /** The first retry delay of an email the mail server did not take; it doubles each attempt. */
      mailRetry: yield* seconds("BUNDLES_MAIL_RETRY_SECONDS", 30)
    }
  })
}) {}
