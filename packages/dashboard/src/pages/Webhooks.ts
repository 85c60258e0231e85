/** Webhooks: the URL, the signing secret (reveal, rotate), a test event, the delivery log and resend. */
import type { Page } from "../App.js"
import { h, replace, when } from "../Dom.js"
import { api, type Delivery } from "../Endpoints.js"
import { form } from "../Form.js"
import { statusBadge } from "./Home.js"

export const webhooks: Page = {
  title: "Webhooks",
  render: async () => {
    const settings = await api.webhook()
    const log = h("div", { "aria-live": "polite" })
    const secretBox = h("div")

    const deliveryItem = (d: Delivery) => {
      const resend = h("button", { type: "button", class: "secondary" }, "Resend")
      resend.setAttribute("aria-label", `Resend ${d.event_type} ${d.id}`)
      resend.addEventListener("click", async () => {
        resend.disabled = true
        resend.textContent = "Resending…"
        try {
          await api.resend({ path: { event_id: d.id } })
        } catch (error) {
          replace(
            secretBox,
            h("p", { class: "form-message", role: "alert" }, error instanceof Error ? error.message : String(error))
          )
        } finally {
          await loadLog()
        }
      })
      return h(
        "li",
        null,
        h("strong", null, d.event_type),
        " ",
        statusBadge(d.state),
        h("br"),
        h(
          "span",
          { class: "muted" },
          `${d.id} · ${when(d.created_at)} · ${d.attempts} attempt(s)`,
          d.last_attempt_at ? ` · last ${when(d.last_attempt_at)}` : "",
          d.last_status !== null ? ` · status ${d.last_status}` : "",
          d.last_error ? ` · ${d.last_error}` : "",
          d.next_attempt_at ? ` · next retry ${when(d.next_attempt_at)}` : ""
        ),
        h("div", null, resend)
      )
    }
    const loadLog = async () => {
      const answer = await api.deliveries({ query: { per_page: 20 } })
      replace(
        log,
        answer.deliveries.length === 0
          ? h("p", { class: "muted" }, "No deliveries yet.")
          : h("ul", { class: "plain", "data-testid": "deliveries" }, answer.deliveries.map(deliveryItem))
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
        const saved = await api.setWebhook({ payload: { url: values.url === "" ? null : values.url! } })
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
      { class: "actions", hidden: !settings.has_secret },
      button("Reveal secret", async () => showSecret((await api.revealSecret()).secret, false)),
      button("Rotate secret", async () => {
        if (!confirm("Rotate the signing secret? Your receiver must use the new one from now on.")) return
        showSecret((await api.rotateSecret()).secret, true)
      }, "danger"),
      testType,
      button("Send test event", async () => {
        await api.sendTest({ payload: { type: testType.value as "order.successful" } })
        await loadLog()
      })
    )
    const refresh = button("Refresh", loadLog)
    await loadLog()
    return h(
      "div",
      null,
      h("h1", null, "Webhooks"),
      urlForm.element,
      controls,
      secretBox,
      h("h2", null, "Delivery log"),
      refresh,
      log
    )
  }
}
