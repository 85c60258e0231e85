/**
 * `admin payments`: payments of every account, and the operator's decision on a manual
 * transfer (approve credits the main wallet once; decline leaves it as it is).
 */
import { AdminApi, Payment } from "@databundle/contract"
import * as Output from "@databundle/terminal/Output"
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type * as AdminClient from "../AdminClient.js"
import { execute, request } from "./Call.js"
import { accountIdOption, listing, shared, type UrlParamsOf } from "./Options.js"
import { date, ghs, orNone, pageLine } from "./Text.js"

const paymentText = (payment: Payment.AdminPayment, s: Output.Style) =>
  Output.fields([
    ["payment", payment.payment_number],
    ["status", Output.status(payment.status, s)],
    ["account", String(payment.account_id)],
    ["method", payment.method],
    ["amount", ghs(payment.amount)],
    ["payer", orNone(payment.payer_number)],
    ["note", orNone(payment.note)],
    ["failure", orNone(payment.failure_reason)],
    ...(payment.reversed_at === null ? [] : [
      [
        "reversed",
        `${date(payment.reversed_at)}: ${payment.reversal_reason ?? "no reason given"} (the wallet is still credited)`
      ] as const
    ]),
    ["created", date(payment.created_at)],
    ["settled", payment.settled_at === null ? "no" : date(payment.settled_at)]
  ], "")

const paymentNumberArg = Args.text({ name: "PAYMENT_NUMBER" }).pipe(
  Args.withDescription("The payment's number (PAY-...), as the account holder quotes it")
)

const paymentsListing = listing<UrlParamsOf<AdminClient.Client["paymentsAdmin"]["list"]>>(
  AdminApi.PaymentsAdminGroup.endpoints.list
)

const paymentsList = Command.make("list", {
  ...shared,
  status: Options.choice("status", Payment.PaymentStatus.literals).pipe(
    Options.withDescription("Only payments with this status (pending: transfers waiting for you)"),
    Options.optional
  ),
  method: Options.choice("method", Payment.PAYMENT_METHODS).pipe(
    Options.withDescription("Only payments made this way"),
    Options.optional
  ),
  account: accountIdOption.pipe(Options.optional),
  reversed: Options.boolean("reversed").pipe(
    Options.withDescription("Only payments the gateway reversed after the wallet was credited")
  ),
  ...paymentsListing.options
}, (options) =>
  execute(
    options,
    paymentsListing.params(options, {
      status: options.status,
      method: options.method,
      account_id: options.account,
      reversed: options.reversed ? Option.some("true") : Option.none()
    }).pipe(Effect.flatMap((urlParams) => request(options, (client) => client.paymentsAdmin.list({ urlParams })))),
    AdminApi.AdminPaymentsPage,
    ({ pagination, payments }, s) =>
      payments.length === 0 ? ["No payments."] : [
        ...Output.table<Payment.AdminPayment>(
          [
            { title: "PAYMENT", value: (p) => p.payment_number },
            { title: "DATE", value: (p) => date(p.created_at) },
            { title: "ACCOUNT", value: (p) => String(p.account_id), right: true },
            { title: "METHOD", value: (p) => p.method },
            { title: "PAYER", value: (p) => orNone(p.payer_number, "") },
            { title: "AMOUNT", value: (p) => ghs(p.amount), right: true },
            { title: "STATUS", value: (p) => p.reversed_at === null ? Output.status(p.status, s) : "REVERSED" },
            { title: "NOTE", value: (p) => orNone(p.note, "") }
          ],
          payments,
          s
        ),
        pageLine(pagination, "payment")
      ]
  )).pipe(Command.withDescription("Payments of every account, newest first"))

const paymentsShow = Command.make("show", { ...shared, paymentNumber: paymentNumberArg }, (options) =>
  execute(
    options,
    request(options, (client) => client.paymentsAdmin.get({ path: { payment_number: options.paymentNumber } })),
    AdminApi.AdminPaymentResponse,
    ({ payment }, s) => paymentText(payment, s)
  )).pipe(Command.withDescription("One payment, with its account"))

const paymentsApprove = Command.make("approve", { ...shared, paymentNumber: paymentNumberArg }, (options) =>
  execute(
    options,
    request(options, (client) => client.paymentsAdmin.approve({ path: { payment_number: options.paymentNumber } })),
    AdminApi.AdminPaymentResponse,
    ({ payment }, s) => [
      `Payment ${payment.payment_number} approved: ${ghs(payment.amount)} credited to account ${payment.account_id}.`,
      ...paymentText(payment, s)
    ]
  )).pipe(Command.withDescription("Approve a pending manual transfer: credits the main wallet, once"))

const paymentsDecline = Command.make("decline", {
  ...shared,
  paymentNumber: paymentNumberArg,
  reason: Options.text("reason").pipe(Options.withDescription("Why, as the account holder will read it"))
}, (options) =>
  execute(
    options,
    request(options, (client) =>
      client.paymentsAdmin.decline({
        path: { payment_number: options.paymentNumber },
        payload: { reason: options.reason }
      })),
    AdminApi.AdminPaymentResponse,
    ({ payment }, s) => [`Payment ${payment.payment_number} declined.`, ...paymentText(payment, s)]
  )).pipe(Command.withDescription("Decline a pending manual transfer"))

/** `admin payments`: list, show, approve, decline. */
export const payments = Command.make("payments").pipe(
  Command.withDescription("Payments that fund wallets; manual transfers wait for your decision"),
  Command.withSubcommands([paymentsList, paymentsShow, paymentsApprove, paymentsDecline])
)
