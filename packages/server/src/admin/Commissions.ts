/**
 * `admin commissions`: the referral rate. Agents earn the difference between their price
 * group's prices and what their sub-accounts pay, so theirs is set by the catalogue.
 */
import { AdminApi, Commission } from "@databundle/contract"
import * as Output from "@databundle/terminal/Output"
import { Command, Options } from "@effect/cli"
import { execute, request } from "./Call.js"
import { checked, decodeWith, shared } from "./Options.js"

const ratesText = (rates: Commission.CommissionRates) =>
  Output.fields([
    [
      "referral",
      rates.referral_percent === 0
        ? "0 % (off)"
        : `${rates.referral_percent / 100} % of each successful order of a referred account, rounded down`
    ],
    ["agent", "the agent's price group's price difference on each successful order of its sub-accounts"]
  ])

const show = Command.make("show", shared, (options) =>
  execute(
    options,
    request(options, (client) => client.commissions.show()),
    AdminApi.CommissionsResponse,
    ({ commissions }) => ratesText(commissions)
  )).pipe(Command.withDescription("Show the referral rate"))

const set = Command.make("set", {
  ...shared,
  referral: Options.text("referral").pipe(
    Options.withPseudoName("PERCENT"),
    Options.withDescription("Percent of amount_paid a referrer earns, 0 to 100 with at most two decimals (0: off)"),
    checked(
      "referral",
      (text: string) =>
        decodeWith(Commission.ReferralPercent)(text.trim() === "" ? Number.NaN : Number(text.replace(/%$/, "")))
    )
  )
}, (options) =>
  execute(
    options,
    request(options, (client) => client.commissions.set({ payload: { referral_percent: options.referral } })),
    AdminApi.CommissionsResponse,
    ({ commissions }) => ["Commissions set.", ...ratesText(commissions)]
  )).pipe(Command.withDescription("Set the referral rate"))

/** `admin commissions`: show, set. */
export const commissions = Command.make("commissions").pipe(
  Command.withDescription("The referral programme's rate"),
  Command.withSubcommands([show, set])
)
