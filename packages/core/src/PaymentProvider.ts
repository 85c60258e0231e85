/**
 * The payment port: how a mobile money payment is collected from the payer's wallet, and the
 * built-in simulator that stands in for a real gateway (MTN MoMo, Telecel Cash, AirtelTigo
 * Money behind one aggregator).
 *
 * `collect` must be idempotent by payment number: it starts a collection it has not seen and
 * reports the state of one it has. It is called once right after the payment is created and
 * again, from the database-driven worker, while the payment is pending (also after a crash,
 * possibly from another server process).
 */
import type { Payment } from "@databundle/contract"
import { Clock, Context, Data, Duration, Effect, Layer } from "effect"
import { Settings } from "./Settings.js"

/** What a provider needs to collect a payment. */
export interface CollectionRequest {
  readonly paymentNumber: string
  readonly method: Payment.PaymentMethod
  readonly amount: bigint
  readonly payerNumber: string
  readonly createdAt: Date
  /** The account holder's email address (gateways ask for the customer's), when the account has a user. */
  readonly email: string | null
}

/** What a provider says about a payment. */
export type CollectionOutcome = Data.TaggedEnum<{
  /** The payer approved and the money arrived: the wallet is credited. */
  Approved: { readonly providerReference: string }
  /** The payer declined, or the wallet could not pay. */
  Declined: { readonly reason: string }
  /**
   * The money came and went back to the payer (a reversal): for a pending payment a decline;
   * for one already credited, the operator is told (it is shown, never taken back by itself).
   */
  Reversed: { readonly reason: string }
  /** Waiting for the payer: ask again after `checkAfter`. */
  Pending: { readonly checkAfter: Duration.Duration }
  /**
   * Waiting for the one-time code the wallet sent to the payer's phone (`submitCode`);
   * `prompt` is what the gateway displayed (`null` when this answer carried none: the last
   * one is kept). Asked about again after `checkAfter`.
   */
  AwaitingCode: { readonly prompt: string | null; readonly checkAfter: Duration.Duration }
}>

/** Constructors of `CollectionOutcome`. */
export const CollectionOutcome = Data.taggedEnum<CollectionOutcome>()

/** What a provider says to a one-time code: the payment's new state, or that the code was wrong. */
export type CodeOutcome = CollectionOutcome | { readonly _tag: "WrongCode"; readonly message: string }

/** The simulator asks payer numbers ending so for a one-time code... */
const CODE_NUMBER_SUFFIX = "1234"
/** ...and accepts this one. */
export const SIMULATOR_CODE = "123456"

/** The payment port; swap its Layer to plug in a real gateway. */
export class PaymentProvider extends Context.Tag("core/PaymentProvider")<PaymentProvider, {
  readonly collect: (request: CollectionRequest) => Effect.Effect<CollectionOutcome>
  /**
   * Sends the payer's one-time code for a collection that answered `AwaitingCode`. Safe to
   * repeat: a collection that already settled reports its state.
   */
  readonly submitCode: (request: CollectionRequest, code: string) => Effect.Effect<CodeOutcome>
}>() {
  /**
   * The built-in simulator: approves at once, except that a payer number ending in `0000` is
   * declined and one ending in `9999` stays pending for `BUNDLES_SIMULATOR_PENDING_SECONDS`
   * after the payment was made, then is approved, and one ending in `1234` waits for the
   * one-time code `123456` (any other code is wrong). It decides from the payment alone, so
   * any process, before or after a restart, gives the same answer.
   */
  static readonly Simulator = Layer.effect(
    PaymentProvider,
    Effect.gen(function*() {
      const settings = yield* Settings
      return {
        collect: (request) =>
          Effect.gen(function*() {
            if (request.payerNumber.endsWith("0000")) {
              return CollectionOutcome.Declined({ reason: "Declined by the payer (simulated: number ends in 0000)" })
            }
            if (request.payerNumber.endsWith("9999")) {
              const due = request.createdAt.getTime() + Duration.toMillis(settings.simulatorPending)
              const now = yield* Clock.currentTimeMillis
              if (now < due) return CollectionOutcome.Pending({ checkAfter: Duration.millis(due - now) })
            }
            if (request.payerNumber.endsWith(CODE_NUMBER_SUFFIX)) {
              return CollectionOutcome.AwaitingCode({
                prompt: `Enter the code sent to ${request.payerNumber} (simulated: the code is ${SIMULATOR_CODE})`,
                checkAfter: Duration.minutes(1)
              })
            }
            return CollectionOutcome.Approved({ providerReference: `SIM-${request.paymentNumber}` })
          }),
        submitCode: (request, code) =>
          Effect.succeed<CodeOutcome>(
            code === SIMULATOR_CODE
              ? CollectionOutcome.Approved({ providerReference: `SIM-${request.paymentNumber}` })
              : { _tag: "WrongCode", message: "The code is not correct (simulated: it is 123456)" }
          )
      }
    })
  ).pipe(Layer.provide(Settings.Default))
}
