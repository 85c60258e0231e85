/** The action log: who changed what and when, through the console or the admin API. */
import type { ActionName } from "@databundle/contract/OperatorAction"
import type { Page } from "../../App.js"
import { h } from "../../Dom.js"
import { filters, list, pageOf, pager, queryOf } from "../../List.js"
import { count, when } from "../../Words.js"
import { api } from "../Endpoints.js"
import { consolePath } from "../Paths.js"

/** Every action the log names (checked against the contract: one missing or extra fails the type check). */
const ACTIONS = Object.keys(
  {
    "account.create": true,
    "account.update": true,
    "key.create": true,
    "key.revoke": true,
    "wallet.fund": true,
    "wallet.adjust": true,
    "order.resolve": true,
    "payment.approve": true,
    "payment.decline": true,
    "catalog.import": true,
    "catalog.sync": true,
    "network.update": true,
    "bundle.update": true,
    "webhook.resend": true,
    "operator.create": true,
    "operator.disable": true,
    "operator.role": true,
    "operator.password_reset": true,
    "operator.password_change": true,
    "email.requeue": true,
    "commissions.set": true
  } satisfies Record<ActionName, true>
)

export const actions: Page = {
  title: "Action log",
  render: async ({ app, life, query }) => {
    const answer = await api.actions({
      query: { ...queryOf(query, ["action", "actor", "target_id", "account_id"]), page: pageOf(query), per_page: 25 },
      signal: life.signal
    })
    return h(
      "div",
      null,
      h("h1", null, "Action log"),
      filters(app.go, consolePath("actions"), query, [
        {
          name: "action",
          label: "Action",
          options: [{ value: "", label: "Any" }, ...ACTIONS.map((a) => ({ value: a, label: a }))]
        },
        {
          name: "actor",
          label: "Who",
          options: [{ value: "", label: "Anyone" }, { value: "operator", label: "Operators" }, {
            value: "token",
            label: "The admin token (CLI, scripts)"
          }]
        },
        { name: "target_id", label: "Target", hint: "An account number, order or payment number…" },
        { name: "account_id", label: "Account number", type: "number", inputmode: "numeric" }
      ]),
      h("p", { class: "count" }, count(answer.pagination.total, "action")),
      list({
        caption: "Changes, newest first",
        empty: "No action matches.",
        testId: "actions",
        rows: answer.actions,
        columns: [
          { label: "What", place: "title", cell: (a) => a.summary },
          { label: "Action", place: "line", cell: (a) => h("code", null, a.action) },
          {
            label: "Who",
            place: "line",
            cell: (a) =>
              a.actor_kind === "operator" ? (a.operator_email ?? `operator #${a.operator_id}`) : "admin token"
          },
          { label: "When", cell: (a) => when(a.at) },
          { label: "Target", cell: (a) => (a.target_id ? `${a.target_kind} ${a.target_id}` : a.target_kind) }
        ]
      }),
      pager(consolePath("actions"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}
