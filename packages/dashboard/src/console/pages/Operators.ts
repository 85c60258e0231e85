/**
 * Operators: who may sign in to the console. Create one with a first password (they change
 * nothing else here), or disable one: their sessions end at once and they can no longer sign in.
 * The signed-in operator changes their own password here too (their other sessions end); one who
 * forgot theirs gets a new one from `bundles-server admin operators reset-password`.
 */
import type { Page } from "../../App.js"
import { h, when } from "../../Dom.js"
import { changePasswordForm, form } from "../../Form.js"
import { api } from "../Endpoints.js"
import { actionButton, table } from "../Ui.js"

export const operators: Page = {
  title: "Operators",
  render: async ({ app }) => {
    const { operators: list } = await api.operators()
    const reload = () => app.go(location.pathname, { replace: true })
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
          payload: { name: values.name!, email: values.email!, password: values.password! }
        })
        f.setMessage(`${operator.name} can sign in now.`, "ok")
        setTimeout(reload, 800)
      }
    })
    const password = changePasswordForm((payload) => api.changePassword({ payload }))
    return h(
      "div",
      null,
      h("h1", null, "Operators"),
      table(
        "Operators",
        ["Name", "Email", "Since", "State", ""],
        list.map((o) => [
          o.name,
          o.email,
          when(o.created_at),
          o.disabled_at ? `disabled ${when(o.disabled_at)}` : "active",
          o.disabled_at ? "" : actionButton("Disable", {
            accessibleName: `Disable ${o.email}`,
            kind: "danger",
            pending: "Disabling…",
            once: true,
            run: async () => {
              if (!confirm(`Disable ${o.name}? Their sessions end at once.`)) throw new Error("Not disabled.")
              await api.disableOperator({ path: { operator_id: o.id } })
              return "Disabled: signed out everywhere."
            }
          }).element
        ]),
        { testId: "operators" }
      ),
      h("h2", null, "Add an operator"),
      create.element,
      h("h2", null, "Your password"),
      password.element
    )
  }
}
