/**
 * The `balance` command: the account's three wallets.
 */
import { BundlesClient, formatGhs } from "@databundle/client"
import { Effect } from "effect"
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
