/**
 * `admin audit`: every wallet against its ledger, every order against its payments.
 */
import { AdminApi } from "@databundle/contract"
import * as Output from "@databundle/terminal/Output"
import { Command } from "@effect/cli"
import { Option } from "effect"
import { execute, request } from "./Call.js"
import { shared } from "./Options.js"
import { ghs } from "./Text.js"

/** `admin audit`: exit status 1 when the audit finds a problem. */
export const audit = Command.make("audit", shared, (options) =>
  execute(
    options,
    request(options, (client) => client.wallets.audit()),
    AdminApi.AuditResponse,
    (report, s) => {
      const checked = [
        Output.count(report.wallets, "wallet"),
        Output.count(report.ledger_entries, "ledger entry", "ledger entries"),
        Output.count(report.orders, "order")
      ].join(", ")
      if (report.ok) return [`Audit OK: ${checked} checked, no problems.`]
      return [
        `Audit FAILED: ${checked} checked.`,
        ...Output.fields([
          ["wallets off their ledger", String(report.mismatches.length)],
          ["negative balances", String(report.negative_balances)],
          ["orders without a debit", String(report.orders_without_debit)],
          ["failed orders without a refund", String(report.failed_orders_without_refund)],
          ["refunds without a failed order", String(report.refunds_without_failed_order)],
          ["commissions of orders not successful", String(report.commissions_without_successful_order)],
          ["reversals without a commission", String(report.reversals_without_commission)],
          ["unbalanced transfers", String(report.unbalanced_transfers)]
        ]),
        ...(report.mismatches.length === 0 ? [] : Output.table<typeof report.mismatches[number]>(
          [
            { title: "ACCOUNT", value: (m) => String(m.account_id), right: true },
            { title: "WALLET", value: (m) => m.wallet },
            { title: "BALANCE", value: (m) => ghs(m.balance), right: true },
            { title: "LEDGER SUM", value: (m) => ghs(m.ledger_sum), right: true }
          ],
          report.mismatches,
          s
        ).map((line) => `  ${line}`))
      ]
    },
    (report) => report.ok ? Option.none() : Option.some("The audit found problems")
  )).pipe(Command.withDescription("Check every wallet against its ledger and every order against its payments"))
