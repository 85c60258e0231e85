/**
 * Fund the (live) wallet: mobile money (a prompt on the payer's phone, through the payment
 * port) or a manual transfer the operator approves. The form asks only what the chosen method
 * needs: the paying number for mobile money (read as the client reads numbers), the transfer
 * note and the instructions for a manual transfer. Each attempt carries an Idempotency-Key kept
 * until the server answers (`Pending.ts`), so a double click or a reload never pays twice; a
 * pending payment is watched until it settles, while the page lives. A wallet that sends the
 * payer a one-time code (some Telecel Cash ones) gets a field for it, there and from the list
 * of payments, so a payment left waiting for its code can be finished later.
 */
import { ApiFailure } from "../Api.js"
import type { Page } from "../App.js"
import { h, replace } from "../Dom.js"
import { api, type Payment } from "../Endpoints.js"
import { form } from "../Form.js"
import type { Life } from "../Life.js"
import { list, status } from "../List.js"
import * as Pending from "../Pending.js"
import { showBalance, testing } from "../TestMode.js"
import { ghs, when } from "../Words.js"

export const fund: Page = {
  title: "Fund your wallet",
  render: async ({ life }) => {
    const [{ methods }, recent] = await Promise.all([
      api.paymentMethods({ signal: life.signal }),
      api.payments({ query: { per_page: 10 }, signal: life.signal })
    ])
    const labelOf = (method: string) => methods.find((m) => m.method === method)?.label ?? method
    const result = h("div", { role: "status", "aria-live": "polite" })
    const listBox = h("div")

    const refreshList = async () =>
      showList((await api.payments({ query: { per_page: 10 }, signal: life.signal })).payments)

    const showList = (payments: ReadonlyArray<Payment>) =>
      replace(
        listBox,
        list({
          caption: "Your latest payments, newest first",
          empty: "No payments yet.",
          testId: "payments",
          rows: payments,
          columns: [
            { label: "Payment", place: "title", cell: (p) => h("span", { class: "id" }, p.payment_number) },
            { label: "Status", place: "badge", cell: (p) => status(p.awaiting_code ? "pending" : p.status) },
            {
              label: "Method",
              place: "line",
              cell: (p) => `${labelOf(p.method)}${p.payer_number ? ` from ${p.payer_number}` : ""}`
            },
            { label: "Amount", place: "amount", numeric: true, cell: (p) => ghs(p.amount) },
            { label: "Asked", cell: (p) => when(p.created_at) },
            {
              label: "Details",
              cell: (p) =>
                p.awaiting_code
                  ? "Waiting for the one-time code sent to the payer"
                  : p.failure_reason ?? (p.status === "pending" ? p.instructions ?? "" : "")
            },
            {
              label: "Action",
              place: "action",
              cell: (p) => {
                if (!p.awaiting_code) return null
                const enter = h(
                  "button",
                  { type: "button", "aria-label": `Enter the code for ${p.payment_number}` },
                  "Enter the code"
                )
                enter.addEventListener("click", () => void follow(p, life).catch(() => {}))
                return enter
              }
            }
          ]
        })
      )
    showList(recent.payments)

    /**
     * Asks for the one-time code of a payment that awaits one; resolves with the payment once
     * the code is taken, or once it no longer awaits a code (settled by a callback, expired).
     */
    const askCode = (payment: Payment, life: Life) =>
      new Promise<Payment>((resolve, reject) => {
        let done = false
        const finish = (next: Payment) => {
          if (done) return
          done = true
          resolve(next)
        }
        const codeForm = form({
          label: "Confirm with the payer's code",
          submit: "Confirm payment",
          pending: "Confirming…",
          fields: [{
            name: "otp",
            label: "One-time code",
            inputmode: "numeric",
            autocomplete: "one-time-code",
            hint: payment.code_prompt ?? "Enter the code sent to the payer's phone",
            attrs: { pattern: "[0-9]{4,8}", maxlength: "8" }
          }],
          onSubmit: async (values, handle) => {
            try {
              const answer = await api.submitPaymentCode({
                path: { payment_number: payment.payment_number },
                payload: { otp: values.otp!.trim() },
                signal: life.signal
              })
              finish(answer.payment)
            } catch (error) {
              // Settled meanwhile (a callback, another tab): show where it ended.
              if (error instanceof ApiFailure && error.status === 409) {
                const now = await api.payment({ path: { payment_number: payment.payment_number }, signal: life.signal })
                return finish(now.payment)
              }
              // A wrong code: the gateway's message next to the field, once.
              if (error instanceof ApiFailure && error.errors?.["otp"] !== undefined) {
                return handle.showErrors({ otp: error.errors["otp"] })
              }
              throw error
            }
          }
        })
        replace(
          result,
          h(
            "div",
            { class: "card" },
            h(
              "p",
              { class: "warning" },
              `Payment ${payment.payment_number} needs the one-time code sent to ${
                payment.payer_number ?? "the payer"
              }.`
            ),
            codeForm.element
          )
        )
        codeForm.input("otp").focus()
        // The payment can also settle without the code here (a callback, the worker): look now and then.
        void (async () => {
          while (!done) {
            await life.sleep(5000)
            const current = (await api.payment({
              path: { payment_number: payment.payment_number },
              signal: life.signal
            }).catch((error: unknown) => {
              if (life.signal.aborted) throw error
              return undefined
            }))?.payment
            if (current !== undefined && !current.awaiting_code) finish(current)
          }
        })().catch(reject)
      })

    /** Shows a payment's progress until it settles, asking for its code when it needs one. */
    const follow = async (payment: Payment, life: Life) => {
      let current = payment
      if (current.method === "manual_transfer" && current.status === "pending") {
        replace(
          result,
          h(
            "div",
            { class: "warning" },
            h("p", null, h("strong", null, `Payment ${current.payment_number} is waiting for your transfer.`)),
            h("p", null, current.instructions ?? "")
          )
        )
        return refreshList()
      }
      // Mobile money answers within a minute or two; the list below keeps the rest.
      for (let i = 0; i < 60 && current.status === "pending"; i++) {
        if (current.awaiting_code) {
          await refreshList()
          current = await askCode(current, life)
          continue
        }
        replace(
          result,
          h("p", { class: "warning" }, `Payment ${current.payment_number} is pending. `, current.instructions ?? "")
        )
        await life.sleep(2000)
        current = (await api.payment({ path: { payment_number: current.payment_number }, signal: life.signal })).payment
      }
      replace(
        result,
        current.status === "successful"
          ? h(
            "p",
            { class: "form-message ok" },
            `Payment ${current.payment_number} succeeded: ${ghs(current.amount)} added to your main wallet.`
          )
          : current.status === "failed"
          ? h(
            "p",
            { class: "form-message" },
            `Payment ${current.payment_number} failed: ${current.failure_reason ?? "declined"}. Nothing was charged.`
          )
          : h(
            "p",
            { class: "warning" },
            `Payment ${current.payment_number} is still pending; it is credited once it settles.`
          )
      )
      if (current.status === "successful" && !testing()) {
        void api.ledger({ query: { per_page: 1 }, signal: life.signal }).then(
          (l) => showBalance(l.balance.main),
          () => {}
        )
      }
      await refreshList()
    }

    const first = methods[0]
    const fundForm = form({
      label: "Fund your wallet",
      submit: "Pay",
      pending: "Sending the payment…",
      fields: [
        {
          name: "method",
          label: "Pay with",
          options: methods.map((m) => ({ value: m.method, label: m.label })),
          value: first?.method
        },
        {
          name: "amount",
          label: "Amount (GH₵)",
          type: "number",
          inputmode: "decimal",
          attrs: { min: String(first?.min_amount ?? 1), max: String(first?.max_amount ?? 10000), step: "0.01" }
        },
        {
          name: "payer_number",
          label: "Mobile money number",
          phone: true,
          autocomplete: "tel",
          hint: "The number whose wallet pays; you approve the prompt on that phone"
        },
        {
          name: "note",
          label: "Transfer note",
          required: false,
          hint: "Your bank or transfer reference, so the operators can match your money"
        }
      ],
      extra: h("div", { "data-testid": "method-instructions" }),
      onSubmit: async (values) => {
        const info = methods.find((m) => m.method === values.method)
        const payload = {
          method: values.method as Payment["method"],
          amount: Number(values.amount),
          ...(info?.needs_payer_number ? { payer_number: values.payer_number! } : {}),
          ...(!info?.needs_payer_number && values.note ? { note: values.note } : {})
        }
        const key = Pending.keyFor("payment", payload)
        try {
          const { payment } = await api.createPayment({
            payload,
            headers: { "idempotency-key": key },
            signal: life.signal
          })
          Pending.settled("payment", payload)
          await follow(payment, life)
        } catch (error) {
          // A refusal changed nothing; no answer at all keeps the key for the retry.
          if (error instanceof ApiFailure && error.status >= 400 && error.status < 500) {
            Pending.settled("payment", payload)
          }
          throw error
        }
      }
    })
    const method = fundForm.input("method")
    const amount = fundForm.input("amount") as HTMLInputElement
    const payer = fundForm.input("payer_number")
    const note = fundForm.input("note")
    const instructions = fundForm.element.querySelector("[data-testid=method-instructions]")!
    // Only what the chosen method needs: a paying number for mobile money, a note and where to send for a transfer.
    const syncMethod = () => {
      const info = methods.find((m) => m.method === method.value)
      const momo = info?.needs_payer_number ?? false
      ;(payer.closest(".field") as HTMLElement).hidden = !momo
      payer.required = momo
      ;(note.closest(".field") as HTMLElement).hidden = momo
      if (info !== undefined) {
        amount.min = String(info.min_amount)
        amount.max = String(info.max_amount)
      }
      replace(
        instructions,
        !momo && info?.instructions ? h("p", { class: "hint" }, info.instructions) : null
      )
    }
    method.addEventListener("change", syncMethod)
    syncMethod()
    return h(
      "div",
      null,
      h("h1", null, "Fund your wallet"),
      testing()
        ? h(
          "p",
          { class: "warning" },
          "Payments always fund your live main wallet with real money. The test wallet is play money the operators refill."
        )
        : h("p", { class: "muted" }, "Money paid in goes to your main wallet, from which orders are paid."),
      fundForm.element,
      result,
      h("h2", null, "Recent payments"),
      listBox
    )
  }
}
