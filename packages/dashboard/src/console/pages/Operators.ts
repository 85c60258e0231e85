/**
 * Operators: who may sign in to the console, and with which role. Every operator sees the list
 * and changes their own password here (their other sessions end); one who forgot theirs gets a
 * new one from an owner or `bundles-server admin operators reset-password`. Only an owner adds
 * operators, makes one an owner or an operator, and disables one (their sessions end at once):
 * the server refuses the rest, so the page offers those controls to owners only.
 */
import type { Page } from "../../App.js"
import { h } from "../../Dom.js"
import { changePasswordForm, form } from "../../Form.js"
import { list, status } from "../../List.js"
import { when } from "../../Words.js"
import { api } from "../Endpoints.js"
import { isOwner, me } from "../Me.js"
import { actionButton } from "../Ui.js"

const ROLE_LABELS = { owner: "Owner", operator: "Operator" } as const

export const operators: Page = {
  title: "Operators",
  render: async ({ app, life }) => {
    const { operators: all } = await api.operators({ signal: life.signal })
    const owner = isOwner()
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
          },
          signal: life.signal
        })
        f.setMessage(`${operator.name} can sign in now.`, "ok")
        life.sleep(800).then(app.reload, () => {})
      }
    })
    const password = changePasswordForm((payload) => api.changePassword({ payload }))
    // An owner's controls for another operator: their role, and disabling them (nobody disables
    // themselves: another owner must).
    const manage = (o: (typeof all)[number]) => {
      if (o.disabled_at !== null || o.id === me()) return null
      const next = o.role === "owner" ? "operator" : "owner"
      const label = next === "owner" ? "Make owner" : "Make operator"
      const role = actionButton(label, {
        accessibleName: `${label}: ${o.email}`,
        kind: "secondary",
        pending: "Changing…",
        once: true,
        confirm: () => `Make ${o.name} ${next === "owner" ? "an owner" : "an operator"}?`,
        run: async () => {
          await api.updateOperator({ path: { operator_id: o.id }, payload: { role: next }, signal: life.signal })
          life.sleep(800).then(app.reload, () => {})
          return `Now ${next === "owner" ? "an owner" : "an operator"}.`
        }
      })
      const disable = actionButton("Disable", {
        accessibleName: `Disable ${o.email}`,
        kind: "danger",
        pending: "Disabling…",
        once: true,
        confirm: () => `Disable ${o.name}? Their sessions end at once and they can no longer sign in.`,
        run: async () => {
          await api.disableOperator({ path: { operator_id: o.id }, signal: life.signal })
          return "Disabled: signed out everywhere."
        }
      })
      return h("span", { class: "actions" }, role.element, " ", disable.element)
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
      list({
        caption: "Who may sign in to the console",
        empty: "No operators.",
        testId: "operators",
        rows: all,
        columns: [
          { label: "Name", place: "title", cell: (o) => (o.id === me() ? `${o.name} (you)` : o.name) },
          { label: "State", place: "badge", cell: (o) => status(o.disabled_at ? "disabled" : "active") },
          { label: "Role", place: "line", cell: (o) => h("span", { "data-testid": "role" }, ROLE_LABELS[o.role]) },
          { label: "Email", place: "line", cell: (o) => o.email },
          { label: "Since", cell: (o) => when(o.created_at) },
          { label: "Disabled", cell: (o) => (o.disabled_at ? when(o.disabled_at) : "") },
          ...(owner ? [{ label: "Action", place: "action" as const, cell: manage }] : [])
        ]
      }),
      owner ? [h("h2", null, "Add an operator"), create.element] : [],
      h("h2", null, "Your password"),
      password.element
    )
  }
}
