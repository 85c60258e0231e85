/**
 * Operators: who may sign in to the console, and with which role. Every operator sees the list
 * and changes their own password here (their other sessions end); one who forgot theirs gets a
 * new one from an owner or `bundles-server admin operators reset-password`. Only an owner adds
 * operators, makes one an owner or an operator, and disables one (their sessions end at once):
 * the server refuses the rest, so the page offers those controls to owners only.
 */
import type { Page } from "../../App.js"
import { h, when } from "../../Dom.js"
import { changePasswordForm, form } from "../../Form.js"
import { api } from "../Endpoints.js"
import { actionButton, table } from "../Ui.js"

const ROLE_LABELS = { owner: "Owner", operator: "Operator" } as const

export const operators: Page = {
  title: "Operators",
  render: async ({ app }) => {
    const [{ operators: list }, me] = await Promise.all([api.operators(), api.session()])
    const owner = me.operator.role === "owner"
    const reload = () => app.go(location.pathname, { replace: true })
    const create = form({
      label: "Add an operator",
      submit: "Add operator",
      pending: "Adding…",
      fields: [
        { name: "name", label: "Name", autocomplete: "off" },
        { name: "email", label: "Email", type: "email", autocomplete: "off", inputmode: "email" },
        {
          name: "role",
          label: "Role",
          options: [
            { value: "operator", label: "Operator: runs the business" },
            { value: "owner", label: "Owner: also manages operators" }
          ]
        },
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
          payload: {
            name: values.name!,
            email: values.email!,
            password: values.password!,
            role: values.role === "owner" ? "owner" : "operator"
          }
        })
        f.setMessage(`${operator.name} can sign in now.`, "ok")
        setTimeout(reload, 800)
      }
    })
    const password = changePasswordForm((payload) => api.changePassword({ payload }))
    const manage = (o: (typeof list)[number]) => {
      if (o.disabled_at !== null) return ""
      const next = o.role === "owner" ? "operator" : "owner"
      const label = next === "owner" ? "Make owner" : "Make operator"
      const role = actionButton(label, {
        accessibleName: `${label}: ${o.email}`,
        kind: "secondary",
        pending: "Changing…",
        once: true,
        run: async () => {
          await api.updateOperator({ path: { operator_id: o.id }, payload: { role: next } })
          setTimeout(reload, 800)
          return `Now ${next === "owner" ? "an owner" : "an operator"}.`
        }
      })
      const disable = actionButton("Disable", {
        accessibleName: `Disable ${o.email}`,
        kind: "danger",
        pending: "Disabling…",
        once: true,
        run: async () => {
          if (!confirm(`Disable ${o.name}? Their sessions end at once.`)) throw new Error("Not disabled.")
          await api.disableOperator({ path: { operator_id: o.id } })
          return "Disabled: signed out everywhere."
        }
      })
      return h("span", null, role.element, " ", disable.element)
    }
    return h(
      "div",
      null,
      h("h1", null, "Operators"),
      h(
        "p",
        { class: "muted" },
        owner
          ? "You are an owner: you add operators, set their roles and disable them."
          : "You are an operator: you run the business. Only an owner adds, changes or disables operators."
      ),
      table(
        "Operators",
        ["Operator", "Email", "Since", ...(owner ? [""] : [])],
        list.map((o) => [
          // The role and state under the name, so a phone shows them without scrolling sideways.
          h(
            "span",
            null,
            o.id === me.operator.id ? `${o.name} (you)` : o.name,
            h("br"),
            h(
              "span",
              { class: "muted", "data-testid": "role" },
              `${ROLE_LABELS[o.role]}, ${o.disabled_at ? `disabled ${when(o.disabled_at)}` : "active"}`
            )
          ),
          o.email,
          when(o.created_at),
          ...(owner ? [manage(o)] : [])
        ]),
        { testId: "operators" }
      ),
      owner ? [h("h2", null, "Add an operator"), create.element] : [],
      h("h2", null, "Your password"),
      password.element
    )
  }
}
