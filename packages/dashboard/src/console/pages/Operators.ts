/**
 * Operators: who may sign in to the console. Create one with a first password (they change
 * nothing else here), or disable one: their sessions end at once and they can no longer sign in.
 * The signed-in operator changes their own password here too (their other sessions end); one who
 * forgot theirs gets a new one from `bundles-server admin operators reset-password`.
 */
import type { Page } from "../../App.js"
import { h } from "../../Dom.js"
import { changePasswordForm, form } from "../../Form.js"
import { list, status } from "../../List.js"
import { when } from "../../Words.js"
import { api } from "../Endpoints.js"
import { me } from "../Me.js"
import { actionButton } from "../Ui.js"

export const operators: Page = {
  title: "Operators",
  render: async ({ app, life }) => {
    const { operators: all } = await api.operators({ signal: life.signal })
    const create = form({
      label: "Add an operator",
      submit: "Add operator",
      pending: "Adding…",
      fields: [
        { name: "name", label: "Name", autocomplete: "off" },
        { name: "email", label: "Email", type: "email", autocomplete: "off", inputmode: "email" },
        {
          name: "password",
          label: "First password",
          type: "password",
          autocomplete: "new-password",
          hint: "10 to 128 characters; give it to them by another way than email."
        }
      ],
      onSubmit: async (values, f) => {
        const { operator } = await api.createOperator({
          payload: { name: values.name!, email: values.email!, password: values.password! },
          signal: life.signal
        })
        f.setMessage(`${operator.name} can sign in now.`, "ok")
        life.sleep(800).then(app.reload, () => {})
      }
    })
    const password = changePasswordForm((payload) => api.changePassword({ payload }))
    return h(
      "div",
      null,
      h("h1", null, "Operators"),
      list({
        caption: "Who may sign in to the console",
        empty: "No operators.",
        testId: "operators",
        rows: all,
        columns: [
          { label: "Name", place: "title", cell: (o) => (o.id === me() ? `${o.name} (you)` : o.name) },
          { label: "State", place: "badge", cell: (o) => status(o.disabled_at ? "disabled" : "active") },
          { label: "Email", place: "line", cell: (o) => o.email },
          { label: "Since", cell: (o) => when(o.created_at) },
          { label: "Disabled", cell: (o) => (o.disabled_at ? when(o.disabled_at) : "") },
          {
            label: "Action",
            place: "action",
            // Nobody disables themselves (the server refuses it too): another operator must.
            cell: (o) =>
              o.disabled_at || o.id === me() ? null : actionButton("Disable", {
                accessibleName: `Disable ${o.email}`,
                kind: "danger",
                pending: "Disabling…",
                once: true,
                confirm: () => `Disable ${o.name}? Their sessions end at once and they can no longer sign in.`,
                run: async () => {
                  await api.disableOperator({ path: { operator_id: o.id }, signal: life.signal })
                  return "Disabled: signed out everywhere."
                }
              }).element
          }
        ]
      }),
      h("h2", null, "Add an operator"),
      create.element,
      h("h2", null, "Your password"),
      password.element
    )
  }
}
