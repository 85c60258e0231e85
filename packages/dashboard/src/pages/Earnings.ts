/**
 * The wallet page's programmes section (live side only): the holder's referral code and link,
 * moving referral or agent earnings to main, the accounts it referred and its sub-accounts with
 * what each earned it.
 */
import { ApiFailure } from "../Api.js"
import type { App } from "../App.js"
import { h } from "../Dom.js"
import { api, type Earnings } from "../Endpoints.js"
import { form } from "../Form.js"
import type { Life } from "../Life.js"
import { list } from "../List.js"
import { pathOf } from "../Paths.js"
import * as Pending from "../Pending.js"
import { ghs } from "../Words.js"

type EarnedFrom = Earnings["earnings"]["referred"][number]

const earnedList = (rows: ReadonlyArray<EarnedFrom>, caption: string, empty: string, testId: string) =>
  list<EarnedFrom>({
    caption,
    empty,
    testId,
    rows,
    columns: [
      { label: "Account", cell: (row) => `${row.name} (#${row.account_id})`, place: "title" },
      { label: "Earned you", cell: (row) => ghs(row.earned), place: "amount", numeric: true }
    ]
  })

/** The section, after the balances: `held` is what the referral and agent wallets hold. */
export const earningsSection = async (
  app: App,
  life: Life,
  held: { readonly referral: number; readonly agent: number }
): Promise<Node> => {
  const { earnings } = await api.earnings({ signal: life.signal })
  const link = `${location.origin}/?ref=${encodeURIComponent(earnings.referral_code)}`
  const transfer = form({
    label: "Move earnings to the main wallet",
    submit: "Move to main wallet",
    pending: "Moving…",
    fields: [
      {
        name: "from",
        label: "Move from",
        options: [
          { value: "agent", label: `Agent wallet (${ghs(held.agent)})` },
          { value: "referral", label: `Referral wallet (${ghs(held.referral)})` }
        ],
        value: held.agent >= held.referral ? "agent" : "referral"
      },
      {
        name: "amount",
        label: "Amount (GHS)",
        inputmode: "decimal",
        hint: "At most what that wallet holds",
        attrs: { pattern: "\\d{1,12}(\\.\\d{1,2})?" }
      }
    ],
    onSubmit: async (values) => {
      const payload = { from: values.from as "agent" | "referral", amount: Number(values.amount) }
      const key = Pending.keyFor("transfer", payload)
      try {
        await api.transfer({ payload, headers: { "idempotency-key": key }, signal: life.signal })
        Pending.settled("transfer", payload)
        app.go(pathOf("wallet"), { replace: true })
      } catch (error) {
        if (error instanceof ApiFailure && error.status >= 400 && error.status < 500) {
          Pending.settled("transfer", payload)
        }
        throw error
      }
    }
  })
  return h(
    "section",
    { "aria-labelledby": "earnings-heading", "data-testid": "earnings" },
    h("h2", { id: "earnings-heading" }, "Earnings"),
    h(
      "p",
      null,
      "Your referral code: ",
      h("strong", { "data-testid": "referral-code" }, earnings.referral_code),
      earnings.referral_percent > 0
        ? ` (you earn ${earnings.referral_percent} % of what the accounts you refer buy)`
        : " (the referral programme is off for now)"
    ),
    h("p", null, "Share this link: ", h("a", { href: link, "data-testid": "referral-link" }, link)),
    held.agent + held.referral > 0
      ? transfer.element
      : h("p", { class: "muted" }, "Commissions you earn arrive in your referral and agent wallets."),
    h("h3", { class: "after-form" }, "Accounts you referred"),
    earnedList(earnings.referred, "What each earned you", "Nobody registered with your code yet.", "referred"),
    h("h3", { class: "after-form" }, "Your sub-accounts"),
    earnedList(earnings.sub_accounts, "What each earned you", "No account sells under you.", "sub-accounts")
  )
}
