/** The operator's sign-in: their own email and password, never the admin token. */
import type { Page } from "../../App.js"
import { h } from "../../Dom.js"
import { form } from "../../Form.js"
import { api, client } from "../Endpoints.js"
import { setMe } from "../Me.js"
import { consolePath, consoleRoute } from "../Paths.js"

export const signIn: Page = {
  title: "Operator sign in",
  public: true,
  guestOnly: true,
  render: ({ app, query }) => {
    const notice = app.takeNotice()
    const signInForm = form({
      label: "Operator sign in",
      submit: "Sign in",
      pending: "Signing in…",
      fields: [
        { name: "email", label: "Email", type: "email", autocomplete: "username", inputmode: "email" },
        { name: "password", label: "Password", type: "password", autocomplete: "current-password" }
      ],
      onSubmit: async (values) => {
        const session = await api.signIn({ payload: { email: values.email!, password: values.password! } })
        client.setCsrfToken(session.csrf_token)
        setMe(session.operator)
        app.setSignedIn(true, session.operator.name)
        const next = query.get("next")
        // Only back to a console page: a `next` is never a way off the console.
        app.go(next !== null && consoleRoute(next.split("?")[0]!) !== undefined ? next : consolePath("overview"))
      }
    })
    return h(
      "div",
      null,
      h("h1", null, "Operator sign in"),
      h(
        "p",
        { class: "muted" },
        "For the people who run the service. Resellers sign in ",
        h("a", { href: "/sign-in" }, "here"),
        "."
      ),
      notice === undefined ? null : h("p", { class: "warning", role: "alert" }, notice),
      signInForm.element
    )
  }
}
