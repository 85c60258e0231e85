/**
 * Webhooks: every account's endpoint with its backlog, failing since when, abandoned events
 * and last answer; an account's abandoned events with resend (the same event id again).
 */
import type { Page } from "../../App.js"
import { h } from "../../Dom.js"
import { list, status } from "../../List.js"
import { count, when } from "../../Words.js"
import { api } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { accountLink, actionButton } from "../Ui.js"

export const webhooks: Page = {
  title: "Webhooks",
  render: async ({ life, query }) => {
    const chosen = Number(query.get("account") ?? "") || undefined
    const [health, abandoned] = await Promise.all([
      api.webhooks({ signal: life.signal }),
      chosen === undefined ? Promise.resolve(undefined) : api.deliveries({
        path: { account_id: chosen },
        query: { state: "abandoned", per_page: 50 },
        signal: life.signal
      })
    ])
    const endpoints = [...health.endpoints].sort((a, b) =>
      (b.failing_since ? 1 : 0) - (a.failing_since ? 1 : 0) || b.abandoned - a.abandoned || b.backlog - a.backlog
    )
    return h(
      "div",
      null,
      h("h1", null, "Webhooks"),
      list({
        caption: "Endpoints, failing first",
        empty: "No account has a webhook URL or events yet.",
        testId: "endpoints",
        rows: endpoints,
        rowProps: (e) => ({ "data-account": String(e.account_id) }),
        columns: [
          { label: "Account", place: "title", cell: (e) => accountLink(e.account_id, e.account_name) },
          {
            label: "Health",
            place: "badge",
            cell: (e) => status(e.failing_since ? "failing" : e.abandoned > 0 ? "abandoned" : "healthy")
          },
          { label: "URL", cell: (e) => e.url ?? "none" },
          { label: "Waiting", numeric: true, cell: (e) => count(e.backlog, "event") },
          { label: "Oldest waiting", cell: (e) => when(e.oldest_queued_at) },
          { label: "Failing since", cell: (e) => when(e.failing_since) },
          {
            label: "Abandoned",
            numeric: true,
            cell: (e) =>
              e.abandoned > 0
                ? h(
                  "a",
                  { href: `${consolePath("webhooks")}?account=${e.account_id}` },
                  `${count(e.abandoned, "event")} (show)`
                )
                : "none"
          },
          {
            label: "Last answer",
            cell: (e) => (e.last_status ? `HTTP ${e.last_status}, ${when(e.last_attempt_at)}` : "—")
          }
        ]
      }),
      chosen === undefined || abandoned === undefined ? null : h(
        "section",
        { "aria-label": "Abandoned events" },
        h("h2", null, `Abandoned events of account #${chosen}`),
        list({
          caption: "Abandoned events, newest first",
          empty: "No abandoned events.",
          rows: abandoned.deliveries,
          columns: [
            { label: "Type", place: "title", cell: (d) => d.event_type },
            { label: "Attempts", place: "badge", numeric: true, cell: (d) => count(d.attempts, "attempt") },
            { label: "Event", place: "line", cell: (d) => h("code", null, d.id) },
            { label: "Last error", cell: (d) => d.last_error ?? (d.last_status ? `HTTP ${d.last_status}` : "—") },
            { label: "Created", cell: (d) => when(d.created_at) },
            {
              label: "Action",
              place: "action",
              cell: (d) =>
                actionButton("Resend", {
                  accessibleName: `Resend ${d.event_type} ${d.id}`,
                  kind: "secondary",
                  pending: "Resending…",
                  once: true,
                  run: async () => {
                    const { delivery } = await api.resend({
                      path: { account_id: chosen, event_id: d.id },
                      signal: life.signal
                    })
                    return `Queued again (${delivery.state}).`
                  }
                }).element
            }
          ]
        })
      )
    )
  }
}
