/**
 * `admin orders`: the orders of every account, and settling a stuck pending one by hand.
 */
import { AdminApi, Order, Phone, Wallet } from "@databundle/contract"
import { usage } from "@databundle/terminal/Failure"
import * as Output from "@databundle/terminal/Output"
import { Command, Options } from "@effect/cli"
import { Effect, Either, Option } from "effect"
import type * as AdminClient from "../AdminClient.js"
import { execute, moneyRequest, request } from "./Call.js"
import {
  accountIdOption,
  checked,
  decodeWith,
  idempotencyKeyOption,
  listing,
  modeOption,
  orderNumberArg,
  shared,
  type UrlParamsOf
} from "./Options.js"
import { date, ghs, orNone, pageLine } from "./Text.js"

const orderText = (order: Order.AdminOrder, s: Output.Style) =>
  Output.fields([
    ["order", order.order_number],
    ["status", Output.status(order.status, s)],
    ["account", String(order.account_id)],
    ["mode", order.mode],
    ["network", order.network],
    ["bundle", order.bundle],
    ["phone", order.phone_number],
    ["amount paid", ghs(order.amount_paid)],
    ["reference", orNone(order.reference)],
    ["created", date(order.created_at)]
  ], "")

const ordersListing = listing<UrlParamsOf<AdminClient.Client["ordersAdmin"]["list"]>>(
  AdminApi.OrdersAdminGroup.endpoints.list
)

const ordersList = Command.make("list", {
  ...shared,
  status: Options.choice("status", Order.OrderStatus.literals).pipe(
    Options.withDescription("Only orders with this status"),
    Options.optional
  ),
  account: accountIdOption.pipe(Options.optional),
  phone: Options.text("phone").pipe(
    Options.withDescription("Only orders for this number (024 123 4567, 233241234567, +233 ...)"),
    // Spaces, dashes and a leading + or 00 as people write numbers; the contract checks the rest.
    checked("phone", (text: string) =>
      Either.mapLeft(
        decodeWith(Phone.PhoneNumber)(text.replace(/[\s().\-/]/g, "").replace(/^\+|^00(?=233)/, "")),
        () => "is not a Ghana mobile number (024 123 4567 or 233241234567)"
      )),
    Options.optional
  ),
  reference: Options.text("reference").pipe(
    Options.withDescription("Only the order with this reference (as the reseller gave it)"),
    Options.optional
  ),
  olderThan: Options.integer("older-than").pipe(
    Options.withDescription("Only orders placed more than this many minutes ago"),
    Options.optional
  ),
  oldestFirst: Options.boolean("oldest-first").pipe(
    Options.withDescription("Oldest first (the pending queue's order) instead of newest first")
  ),
  mode: modeOption("test lists the orders of test keys, never mixed with live ones (default live)"),
  ...ordersListing.options
}, (options) =>
  execute(
    options,
    ordersListing.params(options, {
      status: options.status,
      account_id: options.account,
      phone_number: options.phone,
      reference: options.reference,
      older_than: options.olderThan,
      sort: options.oldestFirst ? Option.some("oldest") : Option.none(),
      mode: options.mode
    }).pipe(
      Effect.flatMap((urlParams) => request(options, (client) => client.ordersAdmin.list({ urlParams })))
    ),
    AdminApi.AdminOrdersPage,
    ({ orders, pagination }, s) =>
      orders.length === 0 ? ["No orders."] : [
        ...Output.table<Order.AdminOrder>(
          [
            { title: "ORDER", value: (o) => o.order_number },
            { title: "DATE", value: (o) => date(o.created_at) },
            { title: "ACCOUNT", value: (o) => String(o.account_id), right: true },
            { title: "NETWORK", value: (o) => o.network },
            { title: "BUNDLE", value: (o) => o.bundle },
            { title: "PHONE", value: (o) => o.phone_number },
            { title: "AMOUNT", value: (o) => ghs(o.amount_paid), right: true },
            { title: "STATUS", value: (o) => Output.status(o.status, s) },
            { title: "REFERENCE", value: (o) => orNone(o.reference, "") },
            { title: "MODE", value: (o) => o.mode }
          ],
          orders,
          s
        ),
        pageLine(pagination, "order")
      ]
  )).pipe(Command.withDescription("Orders of every account, newest first"))

const ordersShow = Command.make("show", { ...shared, orderNumber: orderNumberArg }, (options) =>
  execute(
    options,
    request(options, (client) => client.ordersAdmin.get({ path: { order_number: options.orderNumber } })),
    AdminApi.AdminOrderResponse,
    ({ order }, s) => orderText(order, s)
  )).pipe(Command.withDescription("One order, with its account"))

const ordersResolve = Command.make("resolve", {
  ...shared,
  orderNumber: orderNumberArg,
  status: Options.choice("status", ["successful", "failed"] as const).pipe(
    Options.withDescription("How the order ended; failing it refunds the main wallet")
  ),
  note: Options.text("note").pipe(
    Options.withDescription("Why it failed; kept in the ledger on the refund (with --status failed)"),
    checked("note", decodeWith(Wallet.AdjustWalletPayload.fields.note)),
    Options.optional
  ),
  idempotencyKey: idempotencyKeyOption
}, (options) =>
  Effect.gen(function*() {
    if (Option.isSome(options.note) && options.status === "successful") {
      return yield* usage("--note is kept on the refund: give it with --status failed (a success moves no money)")
    }
    return yield* execute(
      options,
      moneyRequest(options, (client, headers) =>
        client.ordersAdmin.resolve({
          path: { order_number: options.orderNumber },
          headers,
          payload: {
            status: options.status,
            ...Option.match(options.note, { onNone: () => ({}), onSome: (note) => ({ note }) })
          }
        })),
      AdminApi.AdminOrderResponse,
      ({ order }, s) => [`Order ${order.order_number} resolved: ${order.status}.`, ...orderText(order, s)]
    )
  })).pipe(Command.withDescription("Settle a stuck pending order"))

/** `admin orders`: list, show, resolve. */
export const orders = Command.make("orders").pipe(
  Command.withDescription("Orders of every account"),
  Command.withSubcommands([ordersList, ordersShow, ordersResolve])
)
