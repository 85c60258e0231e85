/**
 * The upstreams the server was configured with (`UpstreamConfig`), each connected through
 * `@databundle/client` with a circuit breaker of its own: what the provider buys from, the
 * catalogue sync reads, the upstreams' webhooks are checked against and the balance watch reads.
 */
import { BundlesClient } from "@databundle/client"
import { Duration, Effect, Layer, type Option } from "effect"
import * as OutsideAnswers from "./OutsideAnswers.js"
import * as Reloadly from "./Reloadly.js"
import type { Seller } from "./Seller.js"
import * as UpstreamConfig from "./UpstreamConfig.js"

/** One upstream with its client and its in-process circuit. */
export interface Connected {
  readonly config: UpstreamConfig.Upstream
  /** A wholesaler of this API through the client, or an aggregator through its adapter. */
  readonly client: Seller
  readonly circuit: Circuit
}

/** A circuit breaker: after `failures` consecutive failures, nothing is sent for the cooldown. */
export class Circuit {
  private failures = 0
  private openUntil = 0
  private blockedUntil = 0
  constructor(private readonly threshold: number, private readonly cooldownMillis: number) {}
  /** Milliseconds until a request may be sent (0 when it may be now). */
  waitMillis(now: number): number {
    return Math.max(0, this.openUntil - now, this.blockedUntil - now)
  }
  /** Whether the circuit is open now. */
  isOpen(now: number): boolean {
    return this.openUntil > now
  }
  succeeded(): void {
    this.failures = 0
    this.openUntil = 0
  }
  failed(now: number): void {
    this.failures++
    if (this.failures >= this.threshold) this.openUntil = now + this.cooldownMillis
  }
  /** A 429: nothing more until `Retry-After` has passed. */
  rateLimited(now: number, waitMillis: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, now + waitMillis)
  }
}
/** Connects to the configured upstreams (no request is made yet). */
export const connect = (
  upstreams: ReadonlyArray<UpstreamConfig.Upstream>,
  tuning: UpstreamConfig.Tuning
) =>
  Effect.forEach(upstreams, (config) => {
    const circuit = () => new Circuit(tuning.breakerFailures, Duration.toMillis(tuning.breakerCooldown))
    if (config.access.kind === "reloadly") {
      return Effect.map(
        Reloadly.make(config, config.access, tuning.timeout),
        (client): Connected => ({ config, client, circuit: circuit() })
      )
    }
    return BundlesClient.make({
      apiKey: config.access.apiKey,
      baseUrl: config.url,
      timeout: Duration.toMillis(tuning.timeout),
      // Every retry is the worker's, recorded in the database; one attempt per call here.
      retry: false,
      autoReference: false,
      userAgent: "bundles-server-upstream"
    }).pipe(
      Effect.map((client): Connected => ({ config, client, circuit: circuit() })),
      Effect.mapError((error) => new Error(`upstream "${config.name}": ${error.message}`))
    )
  }).pipe(Effect.provide(OutsideAnswers.httpClient))

/** The upstreams the server was configured with, connected. */
export class Upstreams extends Effect.Tag("server/Upstreams")<Upstreams, {
  readonly all: ReadonlyArray<Connected>
  readonly tuning: UpstreamConfig.Tuning
  /** Where operator alerts go (`BUNDLES_OPERATOR_WEBHOOK_URL`), when set. */
  readonly operator: Option.Option<UpstreamConfig.OperatorWebhook>
}>() {
  /** From the environment; empty unless `BUNDLES_PROVIDER` is `upstream` or `reloadly`. */
  static readonly layer = Layer.effect(
    Upstreams,
    Effect.gen(function*() {
      const configured = yield* UpstreamConfig.configured
      const tuning = yield* UpstreamConfig.tuning
      const operator = yield* UpstreamConfig.operatorWebhook
      return { all: yield* connect(configured, tuning), tuning, operator }
    })
  )
}
