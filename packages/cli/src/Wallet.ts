/**
 * The `balance` command: the account's three wallets; and `wallet transactions`, its ledger.
 */
import { BundlesClient, formatGhs, parseCedis } from "@databundle/client"
import { Effect, Option } from "effect"
import type * as Config from "./Config.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** `bundles balance`: main, referral and agent wallets. */
export const balance = (options: Config.Shared) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const wallets = yield* (yield* BundlesClient).balance()
      if (options.json) return yield* Output.printJson({ success: true, balance: wallets })
      const { out } = yield* Output.styles
      yield* Output.printLines(
        Output.fields([
          ["Main wallet", out.bold(formatGhs(wallets.main))],
          ["Referral wallet", formatGhs(wallets.referral)],
          ["Agent wallet", formatGhs(wallets.agent)]
        ], "")
      )
    }))

type Entry = BundlesClient.TransactionsPage["entries"][number]

/** The options of `wallet transactions`. */
export interface TransactionsInput extends Config.Shared {
  readonly wallet: Option.Option<"main" | "referral" | "agent">
  readonly reason: Option.Option<
    "funding" | "adjustment" | "order" | "refund" | "commission" | "commission_reversal" | "transfer"
  >
  readonly from: Option.Option<string>
  readonly to: Option.Option<string>
  readonly page: Option.Option<number>
  readonly perPage: Option.Option<number>
}

const optional = <K extends string, A>(key: K, option: Option.Option<A>): { [P in K]?: A } =>
  Option.match(option, { onNone: () => ({}), onSome: (value) => ({ [key]: value }) as { [P in K]?: A } })

/** `bundles wallet transactions`: the account's ledger, newest first. */
export const transactions = (options: TransactionsInput) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const page = yield* (yield* BundlesClient).transactions({
        ...optional("wallet", options.wallet),
        ...optional("reason", options.reason),
        ...optional("from", options.from),
        ...optional("to", options.to),
        ...optional("page", options.page),
        ...optional("per_page", options.perPage)
      })
      if (options.json) return yield* Output.printJson({ success: true, ...page })
      const { out } = yield* Output.styles
      const { current_page, last_page, total } = page.pagination
      if (page.entries.length === 0) {
        return yield* Output.printLines([total === 0 ? "No transactions." : `No transactions on page ${current_page}.`])
      }
      yield* Output.printLines([
        ...Output.table<Entry>(
          [
            { title: "DATE", value: (e) => Output.date(e.created_at) },
            { title: "WALLET", value: (e) => e.wallet },
            { title: "REASON", value: (e) => e.reason },
            {
              title: "AMOUNT",
              value: (e) => e.amount < 0n ? out.red(`-${formatGhs(-e.amount)}`) : `+${formatGhs(e.amount)}`,
              right: true
            },
            { title: "BALANCE", value: (e) => formatGhs(e.balance_after), right: true },
            { title: "ORDER", value: (e) => Output.clean(e.order_number ?? "") },
            { title: "NOTE", value: (e) => Output.clean(e.note ?? "") }
          ],
          page.entries,
          out
        ),
        `Page ${current_page} of ${Math.max(last_page, 1)} (${total} in all)`
      ])
    }))

/** The options of `wallet transfer`. */
export interface TransferInput extends Config.Shared {
  readonly from: "referral" | "agent"
  /** Cedis, checked by the command line's pattern. */
  readonly amount: string
  readonly idempotencyKey: Option.Option<string>
}

/** `bundles wallet transfer --from agent AMOUNT`: earnings moved to main, once even when retried. */
export const transfer = (options: TransferInput) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const moved = yield* (yield* BundlesClient).transfer({
        from: options.from,
        amount: parseCedis(options.amount),
        idempotencyKey: Option.getOrUndefined(options.idempotencyKey)
      })
      if (options.json) {
        return yield* Output.printJson({ success: true, message: moved.message, balance: moved.balance })
      }
      const { out } = yield* Output.styles
      yield* Output.printLines([
        moved.replayed ? `${moved.message} (already done with this key; nothing moved again).` : `${moved.message}.`,
        ...Output.fields([
          ["Main wallet", out.bold(formatGhs(moved.balance.main))],
          ["Referral wallet", formatGhs(moved.balance.referral)],
          ["Agent wallet", formatGhs(moved.balance.agent)]
        ], "")
      ])
    }))
