/**
 * Orders: how one is shown, and the `orders list` and `orders get` commands.
 */
import { BundlesClient, formatGhs } from "@databundle/client"
import type { OrderStatus } from "@databundle/client/OrderTerms"
import { usage } from "@databundle/terminal/Failure"
import { Chunk, Effect, Option, Stream } from "effect"
import type * as Config from "./Config.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** An order as GET /orders lists it. */
export type ListedOrder = BundlesClient.OrdersPage["orders"][number]

/** An order as GET /orders/{order_number} shows it. */
export type OrderView = Effect.Effect.Success<ReturnType<BundlesClient.Service["getOrder"]>>

/** The fields of an order the three views share; `network` and `reference` are in some. */
export interface AnyOrder {
  readonly order_number: string
  readonly bundle: string
  readonly phone_number: string
  readonly amount_paid: bigint
  readonly status: string
  readonly created_at: Date
  readonly network?: string
  readonly reference?: string | null
}

/** An order for people: its number and status, then its fields. */
export const orderLines = (order: AnyOrder, s: Output.Style): Array<string> => [
  `${s.bold(`Order ${Output.clean(order.order_number)}`)}  ${Output.status(order.status, s)}`,
  ...Output.fields([
    ...(order.network === undefined ? [] : [["network", Output.clean(order.network)] as const]),
    ["bundle", Output.clean(order.bundle)],
    ["phone", Output.clean(order.phone_number)],
    ["amount", formatGhs(order.amount_paid)],
    ...(order.reference === undefined ? [] : [["reference", Output.clean(order.reference ?? "none")] as const]),
    ["created", Output.date(order.created_at)]
  ])
]

/** The orders table. */
export const ordersTable = (orders: ReadonlyArray<ListedOrder>, s: Output.Style): Array<string> =>
  Output.table<ListedOrder>(
    [
      { title: "ORDER", value: (o) => Output.clean(o.order_number) },
      { title: "DATE", value: (o) => Output.date(o.created_at) },
      { title: "NETWORK", value: (o) => Output.clean(o.network) },
      { title: "BUNDLE", value: (o) => Output.clean(o.bundle) },
      { title: "PHONE", value: (o) => Output.clean(o.phone_number) },
      { title: "AMOUNT", value: (o) => formatGhs(o.amount_paid), right: true },
      { title: "STATUS", value: (o) => Output.status(o.status, s) },
      { title: "REFERENCE", value: (o) => Output.clean(o.reference ?? "") }
    ],
    orders,
    s
  )

/** The options of `orders list`. */
export interface ListInput extends Config.Shared {
  readonly status: Option.Option<OrderStatus>
  readonly page: Option.Option<number>
  readonly perPage: Option.Option<number>
  readonly all: boolean
  readonly phone: Option.Option<string>
  readonly reference: Option.Option<string>
  readonly from: Option.Option<string>
  readonly to: Option.Option<string>
}

/** `bundles orders list`: one page of orders, newest first, or every page with `--all`. */
export const list = (options: ListInput) =>
  Effect.gen(function*() {
    if (options.all && Option.isSome(options.page)) return yield* usage("--all reads every page: leave out --page")
    const given = <K extends string>(key: K, value: Option.Option<string>) =>
      Option.match(value, { onNone: () => ({}), onSome: (text) => ({ [key]: text } as { [P in K]: string }) })
    const filters = {
      ...Option.match(options.status, { onNone: () => ({}), onSome: (status) => ({ status }) }),
      ...given("phone_number", options.phone),
      ...given("reference", options.reference),
      ...given("from", options.from),
      ...given("to", options.to),
      ...Option.match(options.perPage, { onNone: () => ({}), onSome: (per_page) => ({ per_page }) })
    }
    return yield* Session.run(options, () =>
      Effect.gen(function*() {
        const client = yield* BundlesClient
        const { out } = yield* Output.styles
        if (options.all) {
          const orders = Chunk.toReadonlyArray(yield* Stream.runCollect(client.allOrders(filters)))
          if (options.json) return yield* Output.printJson({ success: true, orders })
          if (orders.length === 0) return yield* Output.printLines(["No orders."])
          return yield* Output.printLines([
            ...ordersTable(orders, out),
            Output.count(orders.length, "order")
          ])
        }
        const page = yield* client.listOrders({
          ...filters,
          ...Option.match(options.page, { onNone: () => ({}), onSome: (page) => ({ page }) })
        })
        if (options.json) return yield* Output.printJson({ success: true, ...page })
        const { current_page, last_page, total } = page.pagination
        if (page.orders.length === 0) {
          return yield* Output.printLines([total === 0 ? "No orders." : `No orders on page ${current_page}.`])
        }
        yield* Output.printLines([
          ...ordersTable(page.orders, out),
          `Page ${current_page} of ${Math.max(last_page, 1)} (${Output.count(total, "order")} in all)`
        ])
      }))
  })

/** `bundles orders get ORDER_NUMBER`: one order. */
export const get = (options: Config.Shared & { readonly orderNumber: string }) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const order = yield* (yield* BundlesClient).getOrder(options.orderNumber)
      if (options.json) return yield* Output.printJson({ success: true, order })
      const { out } = yield* Output.styles
      yield* Output.printLines(orderLines(order, out))
    }))
