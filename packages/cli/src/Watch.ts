/**
 * `orders watch`: follows an order until it is `successful` or `failed`, polling with a
 * back-off from 1 s to 5 s (well under the API's 60 requests a minute), with a spinner on a
 * terminal. The exit status is the outcome: 0 successful, 1 failed or still pending at the
 * timeout.
 */
import { BundlesClient } from "@databundle/client"
import { failed } from "@databundle/terminal/Failure"
import * as Progress from "@databundle/terminal/Progress"
import { Clock, Duration, Effect, Option } from "effect"
import type * as Config from "./Config.js"
import { orderLines, type OrderView } from "./Orders.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** The first wait between two looks at the order. */
export const FIRST_POLL = Duration.seconds(1)

/** The longest wait between two looks at the order. */
export const LAST_POLL = Duration.seconds(5)

/** The options of `orders watch`. */
export interface WatchInput extends Config.Shared {
  readonly orderNumber: string
  /** Seconds to wait for the order to settle; none waits as long as it takes. */
  readonly timeout: Option.Option<number>
}

const settled = (order: OrderView) => order.status !== "pending"

/** The timeout as given when under a minute (`0.5 s`), else as durations print. */
const waited = (seconds: number) => seconds < 60 ? `${seconds} s` : Progress.duration(seconds * 1000)

/** `bundles orders watch ORDER_NUMBER`. */
export const watch = (options: WatchInput) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const client = yield* BundlesClient
      const started = yield* Clock.currentTimeMillis
      let order = yield* client.getOrder(options.orderNumber)
      if (!settled(order)) {
        const follow = Effect.gen(function*() {
          const status = yield* Progress.statusLine
          const show = Effect.flatMap(
            Clock.currentTimeMillis,
            (now) => status.set(`${order.order_number} ${order.status} for ${Progress.duration(now - started)}`)
          )
          yield* status.log(`${order.order_number} is pending; waiting until it settles`)
          let wait = FIRST_POLL
          while (!settled(order)) {
            yield* show
            yield* Effect.sleep(wait)
            wait = Duration.min(Duration.times(wait, 1.5), LAST_POLL)
            order = yield* client.getOrder(order.order_number)
          }
        }).pipe(Effect.scoped)
        yield* Option.match(options.timeout, {
          onNone: () => follow,
          onSome: (seconds) => Effect.timeoutOption(follow, Duration.seconds(seconds))
        })
      }
      const failure = order.status === "successful"
        ? undefined
        : order.status === "failed"
        ? `Order ${order.order_number} failed; its amount was refunded to the main wallet`
        : `Order ${order.order_number} is still pending after ${
          waited(Option.getOrElse(options.timeout, () => 0))
        }; watch it again later, or ask the operator`
      // The document agrees with the exit status: `success` is false, and `message` says why, when it is 1.
      if (options.json) {
        yield* Output.printJson(
          failure === undefined ? { success: true, order } : { success: false, message: failure, order }
        )
      } else yield* Output.printLines(orderLines(order, (yield* Output.styles).out))
      if (failure !== undefined) return yield* failed(failure)
    }))
