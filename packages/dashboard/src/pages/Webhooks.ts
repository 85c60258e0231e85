/** Webhooks: the URL, the signing secret (reveal, rotate), a test event, the delivery log and resend. */
import type { Page } from "../App.js"
import { h, replace } from "../Dom.js"
import { api, type Delivery } from "../Endpoints.js"
import { form } from "../Form.js"
import { PageLeft } from "../Life.js"
import { list, status } from "../List.js"
import { count, when } from "../Words.js"

export const webhooks: Page = {
  title: "Webhooks",
  render: async ({ life }) => {
    const settings = await api.webhook({ signal: life.signal })
    const log = h("div", { "aria-live": "polite" })
    const secretBox = h("div")

    const resendButton = (d: Delivery) => {
      const resend = h("button", { type: "button", class: "secondary" }, "Resend")
      resend.setAttribute("aria-label", `Resend ${d.event_type} ${d.id}`)
      resend.addEventListener("click", async () => {
        resend.disabled = true
        resend.textContent = "Resending…"
        try {
          await api.resend({ path: { event_id: d.id }, signal: life.signal })
        } catch (error) {
          replace(
            secretBox,
            h("p", { class: "form-message", role: "alert" }, error instanceof Error ? error.message : String(error))
          )
        } finally {
          await loadLog()
        }
      })
      return resend
    }
    const loadLog = async () => {
      const answer = await api.deliveries({ query: { per_page: 20 }, signal: life.signal })
      replace(
        log,
        list({
          caption: "Deliveries, newest first",
          empty: "No deliveries yet.",
          testId: "deliveries",
          rows: answer.deliveries,
          columns: [
            { label: "Event", place: "title", cell: (d) => d.event_type },
            { label: "State", place: "badge", cell: (d) => status(d.state) },
            { label: "Created", place: "line", cell: (d) => when(d.created_at) },
            { label: "Attempts", numeric: true, cell: (d) => count(d.attempts, "attempt") },
            {
              label: "Last answer",
              cell: (d) =>
                [
                  d.last_status !== null ? `HTTP ${d.last_status}` : "",
                  d.last_error ?? "",
                  d.last_attempt_at ? when(d.last_attempt_at) : ""
                ].filter((part) => part !== "").join(" · ") || "—"
            },
            { label: "Next retry", cell: (d) => (d.next_attempt_at ? when(d.next_attempt_at) : "") },
            { label: "Event id", cell: (d) => h("code", null, d.id) },
            { label: "Action", place: "action", cell: resendButton }
          ]
        })
      )
    }

    const showSecret = (secret: string, rotated: boolean) =>
      replace(
        secretBox,
        h("p", null, rotated ? "New signing secret (the old one stops working now):" : "Signing secret:"),
        h("code", { class: "secret" }, secret)
      )

    const urlForm = form({
      label: "Webhook address",
      submit: "Save URL",
      pending: "Saving…",
      fields: [{
        name: "url",
        label: "Webhook URL",
        type: "url",
        inputmode: "url",
        value: settings.url ?? "",
        required: false,
        hint: "An https:// address that receives order events. Leave empty to stop deliveries."
      }],
      onSubmit: async (values, f) => {
        const saved = await api.setWebhook({
          payload: { url: values.url === "" ? null : values.url! },
          signal: life.signal
        })
        f.setMessage(saved.url === null ? "Deliveries are off." : "Saved.", "ok")
        controls.hidden = !saved.has_secret
      }
    })

    const button = (label: string, run: (b: HTMLButtonElement) => Promise<void>, cls = "secondary") => {
      const b = h("button", { type: "button", class: cls }, label)
      b.addEventListener("click", async () => {
        b.disabled = true
        b.setAttribute("aria-busy", "true")
        try {
          await run(b)
        } catch (error) {
          if (error instanceof PageLeft) return
          replace(
            secretBox,
            h("p", { class: "form-message", role: "alert" }, error instanceof Error ? error.message : String(error))
          )
        } finally {
          b.disabled = false
          b.removeAttribute("aria-busy")
        }
      })
      return b
    }
    const testType = h(
      "select",
      { "aria-label": "Test event type" },
      ["order.successful", "order.failed", "wallet.funded", "wallet.debited"].map((t) => h("option", { value: t }, t))
    )
    const controls = h(
      "div",
      { hidden: !settings.has_secret },
      h("h2", null, "Signing secret"),
      h(
        "div",
        { class: "actions" },
        button(
          "Reveal secret",
          async () => showSecret((await api.revealSecret({ signal: life.signal })).secret, false)
        ),
        button("Rotate secret", async () => {
          if (!confirm("Rotate the signing secret? Your receiver must use the new one from now on.")) return
          showSecret((await api.rotateSecret({ signal: life.signal })).secret, true)
        }, "danger")
      ),
      secretBox,
      h("h2", null, "Test event"),
      h(
        "div",
        { class: "actions test-event" },
        testType,
        button("Send test event", async () => {
          await api.sendTest({ payload: { type: testType.value as "order.successful" }, signal: life.signal })
          await loadLog()
        })
      )
    )
    const refresh = button("Refresh", loadLog)
    await loadLog()
    return h(
      "div",
      null,
      h("h1", null, "Webhooks"),
      urlForm.element,
      controls,
      h("h2", null, "Delivery log"),
      refresh,
      log
    )
  }
}
