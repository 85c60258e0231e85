/**
 * Money: the manual funding requests waiting for the operator (approve credits the wallet
 * once: the button is disabled from the first click and the server settles a payment once),
 * funding or adjusting an account with a note (one Idempotency-Key per intent, kept until
 * the server answers, so a retry or a reload and the same submit never credits twice), and
 * the ledger audit with its result. Payments the gateway reversed after the wallet was
 * credited are listed first, when there are any: the wallet keeps the money until the operator
 * adjusts it.
 */
import type { Page } from "../../App.js"
import { ghs, h, replace, when } from "../../Dom.js"
import { form } from "../../Form.js"
import { keyFor, settled } from "../../Pending.js"
import { api, type Audit, type Payment } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { actionButton, age } from "../Ui.js"

const accountLink = (id: number) => h("a", { href: consolePath("account", { id: String(id) }) }, `#${id}`)

/** One waiting request, as a card (a phone has no room for a wide row): approve, or decline with a reason. */
const requestCard = (payment: Payment, refresh: () => void): Node => {
  const approve = actionButton("Approve", {
    accessibleName: `Approve ${payment.payment_number}`,
    pending: "Approving…",
    once: true,
    run: async () => {
      const { payment: done } = await api.approve({ path: { payment_number: payment.payment_number } })
      decline.button.disabled = true
      reason.disabled = true
      return `Approved: ${ghs(done.amount)} credited to account #${done.account_id}.`
    }
  })
  const reason = h("input", {
    type: "text",
    name: "reason",
    required: true,
    maxlength: "200",
    "aria-label": `Reason to decline ${payment.payment_number}`,
    placeholder: "Reason to decline"
  })
  const decline = actionButton("Decline", {
    accessibleName: `Decline ${payment.payment_number}`,
    kind: "danger",
    pending: "Declining…",
    once: true,
    run: async () => {
      if (reason.value.trim() === "") {
        reason.setAttribute("aria-invalid", "true")
        reason.focus()
        throw new Error("Give the reason the holder will see.")
      }
      reason.removeAttribute("aria-invalid")
      await api.decline({ path: { payment_number: payment.payment_number }, payload: { reason: reason.value.trim() } })
      approve.button.disabled = true
      setTimeout(refresh, 1500)
      return "Declined; nothing was credited."
    }
  })
  return h(
    "li",
    { class: "card" },
    h(
      "p",
      null,
      h("strong", null, payment.payment_number),
      ` · ${ghs(payment.amount)} for `,
      accountLink(payment.account_id),
      ` · asked ${when(payment.created_at)} (${age(payment.created_at)} ago)`
    ),
    h("p", { class: "muted" }, `Holder's note: ${payment.note ?? "none"}`),
    h("div", { class: "row-actions" }, approve.element),
    h("div", { class: "row-actions" }, reason, decline.element)
  )
}

/** The audit's result, in words. */
const auditResult = (audit: Audit): Node =>
  h(
    "div",
    { class: `card ${audit.ok ? "ok" : "bad"}`, "data-testid": "audit-result" },
    h(
      "p",
      null,
      h("strong", null, audit.ok ? "The books balance." : "The audit found problems."),
      ` ${audit.wallets} wallets, ${audit.ledger_entries} ledger entries and ${audit.orders} orders checked.`
    ),
    audit.ok ? null : h(
      "ul",
      null,
      audit.mismatches.map((m) =>
        h(
          "li",
          null,
          accountLink(m.account_id),
          ` ${m.wallet}: balance ${ghs(m.balance)}, ledger sum ${ghs(m.ledger_sum)}`
        )
      ),
      audit.negative_balances > 0 ? h("li", null, `${audit.negative_balances} negative balance(s)`) : null,
      audit.orders_without_debit > 0 ? h("li", null, `${audit.orders_without_debit} order(s) without a debit`) : null,
      audit.failed_orders_without_refund > 0
        ? h("li", null, `${audit.failed_orders_without_refund} failed order(s) without a refund`)
        : null,
      audit.refunds_without_failed_order > 0
        ? h("li", null, `${audit.refunds_without_failed_order} refund(s) without a failed order`)
        : null
    )
  )

export const money: Page = {
  title: "Money",
  render: async ({ query }) => {
    const [waiting, reversed] = await Promise.all([
      api.payments({ query: { status: "pending", method: "manual_transfer", per_page: 50 } }),
      api.payments({ query: { reversed: "true", per_page: 50 } })
    ])
    const list = h("div")
    const show = (payments: ReadonlyArray<Payment>) =>
      replace(
        list,
        payments.length === 0
          ? h("p", { class: "muted" }, "No funding request is waiting.")
          : h(
            "ul",
            {
              class: "plain",
              "aria-label": "Manual transfers waiting, oldest first",
              "data-testid": "funding-requests"
            },
            [...payments].reverse().map((p) => requestCard(p, refresh))
          )
      )
    const refresh = () => {
      api.payments({ query: { status: "pending", method: "manual_transfer", per_page: 50 } }).then(
        (answer) => show(answer.payments),
        () => undefined
      )
    }
    show(waiting.payments)

    const result = h("div", { role: "status", "aria-live": "polite" })
    const movement = form({
      label: "Fund or adjust an account",
      submit: "Record",
      pending: "Recording…",
      fields: [
        {
          name: "account_id",
          label: "Account number",
          type: "number",
          inputmode: "numeric",
          value: query.get("account") ?? "",
          attrs: { min: "1" }
        },
        {
          name: "kind",
          label: "What",
          options: [
            { value: "fund", label: "Fund (money received)" },
            { value: "adjust", label: "Adjust (a signed correction)" }
          ]
        },
        {
          name: "wallet",
          label: "Wallet",
          options: [
            { value: "main", label: "Main" },
            { value: "referral", label: "Referral" },
            { value: "agent", label: "Agent" }
          ]
        },
        {
          name: "amount",
          label: "Amount (GH₵)",
          type: "number",
          inputmode: "decimal",
          hint: "An adjustment may be negative: -5 takes GH₵ 5.00 away.",
          attrs: { step: "0.01" }
        },
        {
          name: "note",
          label: "Note",
          hint: "Why: a bank reference, the correction's reason. Required for an adjustment.",
          required: false
        }
      ],
      onSubmit: async (values, f) => {
        const amount = Number(values.amount)
        const accountId = Number(values.account_id)
        const wallet = values.wallet as "main" | "referral" | "agent"
        const intent = { accountId, kind: values.kind, wallet, amount, note: values.note }
        const key = keyFor("console-wallet", intent, "console-")
        const path = { account_id: accountId }
        const headers = { "idempotency-key": key }
        const answer = values.kind === "adjust"
          ? await api.adjust({ path, headers, payload: { amount, wallet, note: values.note! } })
          : await api.fund({
            path,
            headers,
            payload: { amount, wallet, ...(values.note ? { note: values.note } : {}) }
          })
        settled("console-wallet", intent) // The same figures again would be a second credit, on purpose: the form starts afresh.
        ;(f.input("amount") as HTMLInputElement).value = ""
        ;(f.input("note") as HTMLInputElement).value = ""
        f.setMessage(
          `Recorded: ${
            ghs(answer.entry.amount)
          } on the ${answer.entry.wallet} wallet of account #${accountId}; it now holds ${
            ghs(answer.entry.balance_after)
          }.`,
          "ok"
        )
        replace(
          result,
          h(
            "p",
            null,
            h("a", { href: consolePath("account", { id: String(accountId) }) }, `Open account #${accountId}`)
          )
        )
      }
    })

    const auditOut = h("div", { role: "status", "aria-live": "polite" })
    const audit = actionButton("Run the audit", {
      kind: "secondary",
      pending: "Checking every wallet against its ledger…",
      run: async () => {
        const report = await api.audit()
        replace(auditOut, auditResult(report))
        return report.ok ? "Done: no problem found." : "Done: see the problems below."
      }
    })
    return h(
      "div",
      null,
      h("h1", null, "Money"),
      reversed.payments.length === 0 ? null : [
        h("h2", null, "Reversed after crediting"),
        h(
          "p",
          null,
          "The gateway took these payments back from the wallet they credited. The money is still in the " +
            "account's wallet: adjust it below when it should come back."
        ),
        h(
          "ul",
          { class: "plain", "aria-label": "Payments reversed after crediting", "data-testid": "reversed-payments" },
          reversed.payments.map((p) =>
            h(
              "li",
              { class: "card" },
              h("strong", null, p.payment_number),
              ` · ${ghs(p.amount)} for `,
              accountLink(p.account_id),
              ` · reversed ${when(p.reversed_at!)}`,
              h("p", { class: "muted" }, `Reason: ${p.reversal_reason ?? "none given"}`)
            )
          )
        )
      ],
      h("h2", null, "Funding requests"),
      list,
      h("h2", null, "Fund or adjust an account"),
      movement.element,
      result,
      h("h2", null, "Ledger audit"),
      h("p", { class: "muted" }, "Checks every wallet against its ledger and every order against its payments."),
      audit.element,
      auditOut
    )
  }
}
