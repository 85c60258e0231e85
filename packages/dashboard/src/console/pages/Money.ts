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
import { h, replace } from "../../Dom.js"
import { form } from "../../Form.js"
import type { Life } from "../../Life.js"
import { list } from "../../List.js"
import { keyFor, settled } from "../../Pending.js"
import { age, count, ghs, when } from "../../Words.js"
import { api, type Audit, type Payment } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { accountLink, actionButton } from "../Ui.js"

/** What an operator does with one waiting request: approve, or decline with a reason. */
const decide = (payment: Payment, refresh: () => void, life: Life): Node => {
  const approve = actionButton("Approve", {
    accessibleName: `Approve ${payment.payment_number}`,
    pending: "Approving…",
    once: true,
    run: async () => {
      const { payment: done } = await api.approve({
        path: { payment_number: payment.payment_number },
        signal: life.signal
      })
      decline.button.disabled = true
      reason.disabled = true
      return `Approved: ${ghs(done.amount)} credited to ${done.account_name}.`
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
    confirm: () =>
      `Decline ${payment.payment_number} of ${payment.account_name} (${ghs(payment.amount)})? Nothing is credited.`,
    run: async () => {
      if (reason.value.trim() === "") {
        reason.setAttribute("aria-invalid", "true")
        reason.focus()
        throw new Error("Give the reason the holder will see.")
      }
      reason.removeAttribute("aria-invalid")
      await api.decline({
        path: { payment_number: payment.payment_number },
        payload: { reason: reason.value.trim() },
        signal: life.signal
      })
      approve.button.disabled = true
      refresh()
      return "Declined; nothing was credited."
    }
  })
  return h(
    "div",
    null,
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
      ` ${count(audit.wallets, "wallet")}, ${count(audit.ledger_entries, "ledger entry", "ledger entries")} and ${
        count(audit.orders, "order")
      } checked.`
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
      audit.negative_balances > 0 ? h("li", null, count(audit.negative_balances, "negative balance")) : null,
      audit.orders_without_debit > 0
        ? h("li", null, `${count(audit.orders_without_debit, "order")} without a debit`)
        : null,
      audit.failed_orders_without_refund > 0
        ? h("li", null, `${count(audit.failed_orders_without_refund, "failed order")} without a refund`)
        : null,
      audit.refunds_without_failed_order > 0
        ? h("li", null, `${count(audit.refunds_without_failed_order, "refund")} without a failed order`)
        : null
    )
  )

export const money: Page = {
  title: "Money",
  render: async ({ life, query }) => {
    const waitingNow = () =>
      api.payments({ query: { status: "pending", method: "manual_transfer", per_page: 50 }, signal: life.signal })
    const [waiting, reversed] = await Promise.all([
      waitingNow(),
      api.payments({ query: { reversed: "true", per_page: 50 }, signal: life.signal })
    ])
    const box = h("div")
    const show = (payments: ReadonlyArray<Payment>) =>
      replace(
        box,
        list({
          caption: "Manual transfers waiting, oldest first",
          empty: "No funding request is waiting.",
          testId: "funding-requests",
          rows: [...payments].reverse(),
          rowProps: (p) => ({ "data-payment": p.payment_number }),
          columns: [
            { label: "Holder", place: "title", cell: (p) => accountLink(p.account_id, p.account_name) },
            { label: "Amount", place: "badge", numeric: true, cell: (p) => h("strong", null, ghs(p.amount)) },
            { label: "Payment", place: "line", cell: (p) => h("span", { class: "id" }, p.payment_number) },
            { label: "Asked", place: "line", cell: (p) => `${when(p.created_at)} (${age(p.created_at)} ago)` },
            { label: "Holder's note", cell: (p) => p.note ?? "none" },
            { label: "Decision", place: "action", cell: (p) => decide(p, refresh, life) }
          ]
        })
      )
    const refresh = () => {
      life.sleep(1500).then(waitingNow).then((answer) => show(answer.payments), () => undefined)
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
        // A correction takes money as easily as it gives: it is confirmed with its figures first.
        if (
          values.kind === "adjust" &&
          !confirm(`Adjust the ${wallet} wallet of account #${accountId} by ${ghs(amount)}?`)
        ) {
          return f.setMessage("Not recorded.")
        }
        const intent = { accountId, kind: values.kind, wallet, amount, note: values.note }
        const key = keyFor("console-wallet", intent, "console-")
        const path = { account_id: accountId }
        const headers = { "idempotency-key": key }
        const { signal } = life
        const answer = values.kind === "adjust"
          ? await api.adjust({ path, headers, payload: { amount, wallet, note: values.note! }, signal })
          : await api.fund({
            path,
            headers,
            payload: { amount, wallet, ...(values.note ? { note: values.note } : {}) },
            signal
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
        const report = await api.audit({ signal: life.signal })
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
        list({
          caption: "Payments reversed after crediting",
          empty: "",
          testId: "reversed-payments",
          rows: reversed.payments,
          columns: [
            { label: "Holder", place: "title", cell: (p) => accountLink(p.account_id, p.account_name) },
            { label: "Amount", place: "badge", numeric: true, cell: (p) => h("strong", null, ghs(p.amount)) },
            { label: "Payment", place: "line", cell: (p) => h("span", { class: "id" }, p.payment_number) },
            { label: "Reversed", place: "line", cell: (p) => when(p.reversed_at!) },
            { label: "Reason", cell: (p) => p.reversal_reason ?? "none given" }
          ]
        })
      ],
      h("h2", null, "Funding requests"),
      box,
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
