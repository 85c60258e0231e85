/**
 * An Effect program with `BundlesClient`, the Effect face of `@databundle/client`: the
 * contract's typed errors in the error channel, handled by tag.
 *
 *   BUNDLES_API_KEY=... BUNDLES_BASE_URL=http://127.0.0.1:8080/api/v1 \
 *     pnpm --filter @databundle/examples client:effect [PHONE]
 *
 * It prints the balance and the networks, buys the cheapest active bundle for PHONE (default
 * 0241234567) on its network, follows the order until it settles, and lists the last orders.
 */
import { BundlesClient, formatGhs, normalizePhone, phoneOperator } from "@databundle/client"
import { NodeRuntime } from "@effect/platform-node"
import { Array as Arr, Console, Effect, Option, Order, pipe, Schedule, Stream } from "effect"

/** What the program reports. */
export interface Summary {
  readonly orderNumber: string | undefined
  readonly status: string | undefined
  readonly recent: ReadonlyArray<string>
}

/** Buys the cheapest active bundle for `phone` on its network and reports what happened. */
export const program = (phone: string) =>
  Effect.gen(function*() {
    const client = yield* BundlesClient
    const recipient = normalizePhone(phone)
    const operator = phoneOperator(recipient)

    const balance = yield* client.balance()
    yield* Console.log(`Main wallet: ${formatGhs(balance.main)}`)
    const networks = yield* client.networks()
    yield* Console.log(`Networks: ${networks.map((n) => `${n.name} (${n.bundles_count})`).join(", ")}`)

    const network = networks.find((n) => operator !== undefined && n.slug.startsWith(operator.id))
    if (network === undefined) return yield* Effect.dieMessage(`no network for ${recipient}`)
    // Prices are bigint pesewas, ordered as they are.
    const cheapest = pipe(
      yield* client.bundles(network.id),
      Arr.filter((b) => b.is_active),
      Arr.sort(Order.mapInput(Order.bigint, (b: { readonly price: bigint }) => b.price)),
      Arr.head
    )
    if (Option.isNone(cheapest)) return yield* Effect.dieMessage(`no active bundle on ${network.name}`)

    const placed = yield* client.placeOrder({ bundle_id: cheapest.value.id, phone_number: recipient }).pipe(
      Effect.map(Option.some),
      // Typed errors of the contract, handled by tag; anything else stays in the error channel.
      Effect.catchTags({
        InsufficientBalance: (e) =>
          Effect.as(Console.log(`Not enough money: ${formatGhs(e.balance)} < ${formatGhs(e.required)}`), Option.none()),
        BundleUnavailable: (e) => Effect.as(Console.log(`Unavailable: ${e.message}`), Option.none())
      })
    )
    let status: string | undefined
    if (Option.isSome(placed)) {
      const { order } = placed.value
      yield* Console.log(`Bought ${order.bundle} for ${recipient}: ${order.order_number} (${order.status})`)
      // A pending order settles later: poll until it is terminal, for at most a minute.
      const settled = yield* client.getOrder(order.order_number).pipe(
        Effect.repeat(
          Schedule.identity<{ readonly status: string }>().pipe(
            Schedule.whileOutput((o) => o.status === "pending"),
            Schedule.addDelay(() => "1 second"),
            Schedule.upTo("1 minute")
          )
        )
      )
      status = settled.status
    }

    const recent = yield* client.allOrders({ per_page: 5 }).pipe(
      Stream.take(5),
      Stream.map((o) => `${o.order_number} ${o.bundle} ${o.phone_number} ${formatGhs(o.amount_paid)} ${o.status}`),
      Stream.runCollect
    )
    yield* Console.log(`Last orders:\n  ${Arr.fromIterable(recent).join("\n  ")}`)
    return {
      orderNumber: Option.isSome(placed) ? placed.value.order.order_number : undefined,
      status,
      recent: Arr.fromIterable(recent)
    } satisfies Summary
  })

/** The program with a client made from explicit settings. */
export const main = (options: { readonly apiKey: string; readonly baseUrl: string; readonly phone: string }) =>
  program(options.phone).pipe(
    Effect.provide(BundlesClient.layer({ apiKey: options.apiKey, baseUrl: options.baseUrl }))
  )

if (import.meta.url === `file://${process.argv[1]}`) {
  // The key and base URL come from BUNDLES_API_KEY and BUNDLES_BASE_URL.
  program(process.argv[2] ?? "0241234567").pipe(
    Effect.provide(BundlesClient.layerConfig()),
    NodeRuntime.runMain
  )
}
