/**
 * Webhooks: every account's endpoint with its backlog, failing since when, abandoned events
 * and last answer; an account's abandoned events with resend (the same event id again).
 */
import type { Page } from "../../App.js"
import { h, when } from "../../Dom.js"
import { api } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { actionButton, table } from "../Ui.js"

export const webhooks: Page = {
  title: "Webhooks",
  render: async ({ query }) => {
    const chosen = Number(query.get("account") ?? "") || undefined
    const [health, abandoned] = await Promise.all([
      api.webhooks(),
      chosen === undefined
        ? Promise.resolve(undefined)
        : api.deliveries({ path: { account_id: chosen }, query: { state: "abandoned", per_page: 50 } })
    ])
    const endpoints = [...health.endpoints].sort((a, b) =>
      (b.failing_since ? 1 : 0) - (a.failing_since ? 1 : 0) || b.abandoned - a.abandoned || b.backlog - a.backlog
    )
    return h(
      "div",
      null,
      h("h1", null, "Webhooks"),
      table(
        "Endpoints, failing first",
        ["Account", "URL", ["Waiting", true], "Oldest waiting", "Failing since", ["Abandoned", true], "Last answer"],
        endpoints.map((e) => [
          h("a", { href: consolePath("account", { id: String(e.account_id) }) }, `#${e.account_id} ${e.account_name}`),
          e.url ?? "none",
          e.backlog,
          when(e.oldest_queued_at),
          e.failing_since ? h("span", { class: "status status-failed" }, when(e.failing_since)) : "—",
          e.abandoned > 0
            ? h("a", { href: `${consolePath("webhooks")}?account=${e.account_id}` }, `${e.abandoned} (show)`)
            : "0",
          e.last_status ? `HTTP ${e.last_status}, ${when(e.last_attempt_at)}` : "—"
        ]),
        { empty: "No account has a webhook URL or events yet.", testId: "endpoints" }
      ),
      chosen === undefined || abandoned === undefined ? null : h(
        "section",
        { "aria-label": "Abandoned events" },
        h("h2", null, `Abandoned events of account #${chosen}`),
        table(
          "Abandoned events, newest first",
          ["Event", "Type", ["Attempts", true], "Last error", "Created", ""],
          abandoned.deliveries.map((d) => [
            h("code", null, d.id),
            d.event_type,
            d.attempts,
            d.last_error ?? (d.last_status ? `HTTP ${d.last_status}` : "—"),
            when(d.created_at),
            actionButton("Resend", {
              accessibleName: `Resend ${d.event_type} ${d.id}`,
              kind: "secondary",
              pending: "Resending…",
              once: true,
              run: async () => {
                const { delivery } = await api.resend({ path: { account_id: chosen, event_id: d.id } })
                return `Queued again (${delivery.state}).`
              }
            }).element
          ]),
          { empty: "No abandoned events." }
        )
      )
    )
  }
}
