/**
 * Fulfilment: the port through which a paid order reaches the network, and the built-in
 * simulator that stands in for a real upstream.
 *
 * A provider's `deliver` must be idempotent by order number: it submits an order it has
 * not seen and reports the state of one it has. It is called once right after placement
 * and again, from the database-driven worker, for every order still pending when its
 * next check is due (also after a crash), possibly from another server process.
 */
import { Clock, Context, Data, Duration, Effect, Layer, Option } from "effect"
import { Settings } from "./Settings.js"

/** What a provider needs to deliver an order. */
export interface FulfillmentRequest {
  readonly orderNumber: string
  readonly networkSlug: string
  readonly bundleKey: string
  /** The number as the reseller sent it (either accepted form). */
  readonly phoneNumber: string
  readonly amount: bigint
  readonly createdAt: Date
}

/** What a provider says about an order. */
export type FulfillmentOutcome = Data.TaggedEnum<{
  /** The bundle was delivered: the order becomes `successful`. */
  Delivered: {}
  /** The network refused it: the order becomes `failed` and is refunded. */
  Failed: { readonly reason: string }
  /** Not settled yet: ask again after `checkAfter`. */
  Pending: { readonly checkAfter: Duration.Duration }
}>

/** Constructors of `FulfillmentOutcome`. */
export const FulfillmentOutcome = Data.taggedEnum<FulfillmentOutcome>()

/** The fulfilment port; swap its Layer to plug in a real upstream. */
export class FulfillmentProvider extends Context.Tag("core/FulfillmentProvider")<FulfillmentProvider, {
  readonly deliver: (request: FulfillmentRequest) => Effect.Effect<FulfillmentOutcome>
  /**
   * The outcome of an order the provider knows from its number alone, without asking anyone
   * (no I/O, no waiting), when it knows one. Placement then records a delivery in its own
   * transaction rather than in a second one after it. A provider that must call out leaves
   * this out (or answers `None`), and `deliver` is asked after placement commits.
   */
  readonly decide?: (
    request: Pick<FulfillmentRequest, "orderNumber" | "phoneNumber">
  ) => Option.Option<FulfillmentOutcome>
}>() {
  /**
   * The built-in simulator: delivers at once, except that a number ending in `0000` always
   * fails and one ending in `9999` stays pending for `BUNDLES_SIMULATOR_PENDING_SECONDS`
   * after the order was placed. It decides from the order alone, so any process, before or
   * after a restart, gives the same answer.
   */
  static readonly Simulator = Layer.effect(
    FulfillmentProvider,
    Effect.map(Settings, (settings) => simulator(settings))
  ).pipe(Layer.provide(Settings.Default))
}

/**
 * The simulator's provider for some settings: what `FulfillmentProvider.Simulator` provides,
 * and what test-mode orders always use, whatever provider live orders have.
 */
export const simulator = (settings: Settings): FulfillmentProvider["Type"] => {
  // Everything but a `9999` number, whose answer depends on the time.
  const decide = (
    request: Pick<FulfillmentRequest, "orderNumber" | "phoneNumber">
  ): Option.Option<FulfillmentOutcome> =>
    request.phoneNumber.endsWith("0000")
      ? Option.some(FulfillmentOutcome.Failed({ reason: "Simulated network failure (number ends in 0000)" }))
      : request.phoneNumber.endsWith("9999")
      ? Option.none()
      : Option.some(FulfillmentOutcome.Delivered())
  return {
    decide,
    deliver: (request) =>
      Option.match(decide(request), {
        onSome: Effect.succeed,
        onNone: () =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            const due = request.createdAt.getTime() + Duration.toMillis(settings.simulatorPending)
            return now < due
              ? FulfillmentOutcome.Pending({ checkAfter: Duration.millis(due - now) })
              : FulfillmentOutcome.Delivered()
          })
      })
  }
}
