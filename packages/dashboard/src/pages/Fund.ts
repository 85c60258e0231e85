/**
 * Fund the wallet: mobile money (a prompt on the payer's phone, through the payment port) or
 * a manual transfer the operator approves. Each attempt carries an Idempotency-Key kept until
 * the server answers (`Pending.ts`), so a double click or a reload never pays twice; a pending
 * payment is watched until it settles. A wallet that sends the payer a one-time code (some
 * Telecel Cash ones) gets a field for it; a wrong code shows the gateway's message there.
 */
import { ApiFailure } from "../Api.js"
import type { Page } from "../App.js"
import { ghs, h, replace, when } from "../Dom.js"
import { api, type Payment } from "../Endpoints.js"
import { form } from "../Form.js"
import * as Pending from "../Pending.js"
import { statusBadge } from "./Home.js"

const paymentLine = (payment: Payment): Node =>
  h(
    "li",
    null,
    h("strong", null, ghs(payment.amount)),
    " ",
    statusBadge(payment.status),
    " · ",
    payment.payment_number,
    " · ",
    payment.method.replace(/_/g, " "),
    payment.payer_number ? ` from ${payment.payer_number}` : "",
    h("br"),
    h("span", { class: "muted" }, when(payment.created_at)),
    payment.failure_reason ? h("span", null, ` · ${payment.failure_reason}`) : null,
    payment.status === "pending" && payment.instructions ? h("p", { class: "hint" }, payment.instructions) : null,
    payment.awaiting_code ? h("p", { class: "hint" }, payment.code_prompt ?? "") : null
  )

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const fund: Page = {
  title: "Fund your wallet",
  render: async () => {
    const [{ methods }, recent] = await Promise.all([api.paymentMethods(), api.payments({ query: { per_page: 10 } })])
    const list = h("ul", { class: "plain", "aria-live": "polite" })
    const renderList = (payments: ReadonlyArray<Payment>) =>
      replace(list, payments.length === 0 ? h("li", { class: "muted" }, "No payments yet.") : payments.map(paymentLine))
    renderList(recent.payments)
    const result = h("div", { role: "status", "aria-live": "polite" })

    /**
     * Asks for the one-time code of a payment that awaits one; resolves with the payment once
     * the code is taken, or once it no longer awaits a code (settled by a callback, expired).
     */
    const askCode = (payment: Payment) =>
      new Promise<Payment>((resolve) => {
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
                payload: { otp: values.otp!.trim() }
              })
              finish(answer.payment)
            } catch (error) {
              // Settled meanwhile (a callback, another tab): show where it ended.
              if (error instanceof ApiFailure && error.status === 409) {
                return finish((await api.payment({ path: { payment_number: payment.payment_number } })).payment)
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
            null,
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
            await sleep(5000)
            if (done) return
            const current = (await api.payment({ path: { payment_number: payment.payment_number } }).catch(() =>
              undefined
            ))?.payment
            if (current !== undefined && !current.awaiting_code && !done) finish(current)
          }
        })()
      })

    const watch = async (payment: Payment) => {
      let current = payment
      if (current.method === "manual_transfer" && current.status === "pending") {
        replace(
          result,
          h(
            "p",
            { class: "warning" },
            `Payment ${current.payment_number} is waiting for your transfer. `,
            current.instructions ?? ""
          )
        )
        renderList((await api.payments({ query: { per_page: 10 } })).payments)
        return
      }
      // Mobile money answers within a minute or two; the list below keeps the rest.
      for (let i = 0; i < 60 && current.status === "pending"; i++) {
        if (current.awaiting_code) {
          renderList((await api.payments({ query: { per_page: 10 } })).payments)
          current = await askCode(current)
          continue
        }
        replace(
          result,
          h("p", { class: "warning" }, `Payment ${current.payment_number} is pending. `, current.instructions ?? "")
        )
        await sleep(2000)
        current = (await api.payment({ path: { payment_number: current.payment_number } })).payment
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
      renderList((await api.payments({ query: { per_page: 10 } })).payments)
    }

    const fundForm = form({
      label: "Fund your wallet",
      submit: "Pay",
      pending: "Sending the payment…",
      fields: [
        {
          name: "method",
          label: "Pay with",
          options: methods.map((m) => ({ value: m.method, label: m.label })),
          value: methods[0]?.method
        },
        {
          name: "amount",
          label: "Amount (GH₵)",
          type: "number",
          inputmode: "decimal",
          attrs: { min: "1", step: "0.01" }
        },
        {
          name: "payer_number",
          label: "Mobile money number",
          type: "tel",
          inputmode: "tel",
          autocomplete: "tel",
          hint: "The number whose wallet pays; you approve the prompt on that phone"
        },
        { name: "note", label: "Note (manual transfer: your bank reference)", required: false }
      ],
      onSubmit: async (values) => {
        const info = methods.find((m) => m.method === values.method)
        const payload = {
          method: values.method as Payment["method"],
          amount: Number(values.amount),
          ...(info?.needs_payer_number ? { payer_number: values.payer_number! } : {}),
          ...(values.note ? { note: values.note } : {})
        }
        const key = Pending.keyFor("payment", payload)
        try {
          const { payment } = await api.createPayment({ payload, headers: { "idempotency-key": key } })
          Pending.settled("payment", payload)
          await watch(payment)
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
    const payer = fundForm.input("payer_number")
    const syncMethod = () => {
      const info = methods.find((m) => m.method === method.value)
      const row = payer.closest(".field") as HTMLElement
      row.hidden = !info?.needs_payer_number
      payer.required = info?.needs_payer_number ?? false
    }
    method.addEventListener("change", syncMethod)
    syncMethod()
    return h(
      "div",
      null,
      h("h1", null, "Fund your wallet"),
      h("p", { class: "muted" }, "Money paid in goes to your main wallet, from which orders are paid."),
      fundForm.element,
      result,
      h("h2", null, "Recent payments"),
      list
    )
  }
}
