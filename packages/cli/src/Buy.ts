/**
 * `buy BUNDLE_ID PHONE`: one order. The number is normalised to the API's form, a number
 * whose prefix belongs to another network than the bundle's gets a warning (never a refusal:
 * numbers are ported), and on a terminal the price is confirmed first unless `--yes`.
 */
import { BundlesClient, formatGhs, type GhanaPhone } from "@databundle/client"
import { failed, problem } from "@databundle/terminal/Failure"
import { confirm, Tty } from "@databundle/terminal/Tty"
import { Effect, Option } from "effect"
import * as Catalogue from "./Catalogue.js"
import type * as Config from "./Config.js"
import { orderLines } from "./Orders.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** The options of `buy`. */
export interface BuyInput extends Config.Shared {
  readonly bundleId: number
  readonly phone: GhanaPhone
  readonly reference: Option.Option<string>
  readonly yes: boolean
}

/** `bundles buy BUNDLE_ID PHONE [--reference R] [--yes]`. */
export const buy = (options: BuyInput) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const client = yield* BundlesClient
      const tty = yield* Tty
      const entry = yield* Catalogue.find(client, options.bundleId)
      if (entry === undefined) {
        return yield* problem(
          `No bundle ${options.bundleId} on an active network: see bundles networks, then bundles NETWORK`
        )
      }
      const { bundle, network } = entry
      const name = Output.clean(bundle.name)
      if (!bundle.is_active) return yield* problem(`${name} (bundle ${bundle.id}) is not available at the moment`)
      const mismatch = Catalogue.networkMismatch(options.phone, entry)
      if (mismatch !== undefined) yield* Output.warn(`${mismatch}; buying anyway, as numbers can be ported`)

      if (!options.yes && tty.interactive) {
        const { main } = yield* client.balance()
        const ok = yield* confirm(
          `Buy ${name} (${Output.clean(network.name)}) for ${options.phone.local} at ${formatGhs(bundle.price)}? ` +
            `Main wallet ${formatGhs(main)} → ${formatGhs(main - bundle.price)}.`
        )
        if (!ok) return yield* problem("Cancelled: nothing was bought")
      }

      const placed = yield* client.placeOrder({
        bundle_id: bundle.id,
        phone_number: options.phone.local,
        ...Option.match(options.reference, { onNone: () => ({}), onSome: (reference) => ({ reference }) })
      })
      const { order } = placed
      const failure = order.status === "failed"
        ? `Order ${order.order_number} failed; its amount was refunded to the main wallet`
        : undefined
      if (options.json) {
        // The call succeeded, the purchase did not: the document says so as the exit status does.
        yield* Output.printJson({
          success: failure === undefined,
          message: failure ?? placed.message,
          order,
          wallet_balance: placed.wallet_balance,
          ...(placed.warnings.length > 0 ? { warnings: placed.warnings } : {})
        })
      } else {
        const { out } = yield* Output.styles
        yield* Output.printLines([...orderLines(order, out), `Main wallet: ${formatGhs(placed.wallet_balance)}`])
      }
      // The server's own word on the number, when the check before buying had nothing to say.
      if (mismatch === undefined) {
        for (const warning of placed.warnings) yield* Output.warn(Output.clean(warning.message))
      }
      if (placed.replayed) {
        yield* Output.note(
          `An order with reference ${Output.clean(order.reference ?? "")} already existed; this is it, and nothing ` +
            "was charged again."
        )
      }
      if (order.status === "pending") yield* Output.note(`Follow it with: bundles orders watch ${order.order_number}`)
      if (failure !== undefined) return yield* failed(failure)
    }))
