/**
 * Commissions: what the agent and referral programmes pay into the agent and referral wallets,
 * and the operator's referral rate.
 */
import { ParseResult, Schema } from "effect"
import { AccountId } from "./Account.js"
import { Succeeded } from "./ApiError.js"
import { Cedis } from "./Money.js"

/** A referral rate: a percent from 0 to 100 with at most two decimals on the wire, basis points inside. */
export const ReferralPercent: Schema.Schema<number, number> = Schema.transformOrFail(
  Schema.Number,
  Schema.Int.pipe(Schema.between(0, 10_000)),
  {
    strict: true,
    decode: (percent, _, ast) =>
      percent >= 0 && percent <= 100 && /^\d{1,3}(\.\d{1,2})?$/.test(String(percent))
        ? ParseResult.succeed(Math.round(percent * 100))
        : ParseResult.fail(
          new ParseResult.Type(ast, percent, "must be a percent from 0 to 100 with at most two decimals")
        ),
    encode: (bps) => ParseResult.succeed(bps / 100)
  }
).annotations({ description: "Percent of amount_paid, 0 to 100, at most two decimals (0: off)" })

/** The operator's commission settings. */
export const CommissionRates = Schema.Struct({
  referral_percent: ReferralPercent.annotations({
    description: "What a referrer earns of each successful order of an account it referred, in percent of " +
      "amount_paid, rounded down to the pesewa"
  })
}).annotations({ identifier: "CommissionRates" })

/** The type of `CommissionRates` (the rate in basis points). */
export type CommissionRates = typeof CommissionRates.Type

/** The body of PUT /commissions. */
export const SetCommissionsPayload = Schema.Struct({
  referral_percent: ReferralPercent
}).annotations({ parseOptions: { errors: "all" } })

/** 200 of GET and PUT /commissions. */
export const CommissionsResponse = Schema.Struct({ success: Succeeded, commissions: CommissionRates })

/** An account that earns its agent or referrer commissions, with what it earned them so far. */
export const EarnedFrom = Schema.Struct({
  account_id: AccountId,
  name: Schema.String,
  earned: Cedis.annotations({ description: "Commissions it earned this account, reversals taken off" })
}).annotations({ identifier: "EarnedFrom" })

/** The holder's programmes: its referral code, the accounts it referred and its sub-accounts. */
export const Earnings = Schema.Struct({
  referral_code: Schema.String.annotations({ description: "Others register under it with /?ref=CODE" }),
  referral_percent: ReferralPercent,
  referred: Schema.Array(EarnedFrom).annotations({ description: "Accounts it referred (at most 200)" }),
  sub_accounts: Schema.Array(EarnedFrom).annotations({ description: "Accounts selling under it (at most 200)" })
}).annotations({ identifier: "Earnings" })

/** 200 of GET /dashboard/v1/earnings. */
export const EarningsResponse = Schema.Struct({ success: Succeeded, earnings: Earnings })
