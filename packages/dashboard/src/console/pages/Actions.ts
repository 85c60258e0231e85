/** The action log: who changed what and when, through the console or the admin API. */
import type { ActionName } from "@databundle/contract/OperatorAction"
import type { Page } from "../../App.js"
import { h, when } from "../../Dom.js"
import { filterForm, pager } from "../../pages/Orders.js"
import { api } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { queryOf, table } from "../Ui.js"

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
    "email.requeue": true
  } satisfies Record<ActionName, true>
)

export const actions: Page = {
  title: "Action log",
  render: async ({ app, query }) => {
    const filters = queryOf(query, ["action", "actor", "target_id", "account_id"])
    const page = Number(query.get("page") ?? "1") || 1
    const answer = await api.actions({ query: { ...filters, page, per_page: 25 } })
    return h(
      "div",
      null,
      h("h1", null, "Action log"),
      filterForm(app.go, consolePath("actions"), query, [
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
      h("p", { class: "muted" }, `${answer.pagination.total} action(s)`),
      table(
        "Changes, newest first",
        ["When", "Who", "Action", "Target", "What"],
        answer.actions.map((a) => [
          when(a.at),
          a.actor_kind === "operator" ? (a.operator_email ?? `operator #${a.operator_id}`) : "admin token",
          h("code", null, a.action),
          a.target_id ? `${a.target_kind} ${a.target_id}` : a.target_kind,
          a.summary
        ]),
        { empty: "No action matches.", testId: "actions" }
      ),
      pager(consolePath("actions"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}
