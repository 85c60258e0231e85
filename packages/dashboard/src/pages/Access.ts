/** The pages before a session: sign in, register, verify the email, reset a forgotten password. */
import { setCsrfToken } from "../Api.js"
import type { Page } from "../App.js"
import { demoMailbox } from "../DemoMailbox.js"
import { h } from "../Dom.js"
import { api } from "../Endpoints.js"
import { form } from "../Form.js"
import { pathOf } from "../Paths.js"
import { showBalance } from "../TestMode.js"

/** The token of an emailed link: it travels in the fragment, which is never sent to a server. */
const linkToken = (): string => new URLSearchParams(location.hash.slice(1)).get("token") ?? ""

export const signIn: Page = {
  title: "Sign in",
  public: true,
  guestOnly: true,
  render: ({ app, query }) => {
    // Why the visitor is here, when a page sent them (their session ended, their account was suspended).
    const notice = app.takeNotice()
    const signInForm = form({
      label: "Sign in",
      submit: "Sign in",
      pending: "Signing in…",
      fields: [
        { name: "email", label: "Email", type: "email", autocomplete: "username", inputmode: "email" },
        { name: "password", label: "Password", type: "password", autocomplete: "current-password" }
      ],
      onSubmit: async (values) => {
        const session = await api.signIn({ payload: { email: values.email!, password: values.password! } })
        setCsrfToken(session.csrf_token)
        app.setSignedIn(true, session.user.name)
        showBalance(session.account.balance.main)
        const next = query.get("next")
        app.go(next !== null && next.startsWith("/") && !next.startsWith("//") ? next : pathOf("home"))
      }
    })
    return h(
      "div",
      null,
      h("h1", null, "Sign in"),
      notice === undefined ? null : h("p", { class: "warning", role: "alert" }, notice),
      signInForm.element,
      h(
        "ul",
        { class: "plain links" },
        h("li", null, h("a", { href: pathOf("register") }, "Create an account")),
        h("li", null, h("a", { href: pathOf("resetPassword") }, "Forgot your password?")),
        h("li", null, h("a", { href: pathOf("verifyEmail") }, "Resend the verification email"))
      )
    )
  }
}

export const register: Page = {
  title: "Create an account",
  public: true,
  guestOnly: true,
  render: ({ life, query }) => {
    const done = h("div", { role: "status" })
    const referral = query.get("ref") ?? ""
    const registerForm = form({
      label: "Create an account",
      submit: "Create account",
      pending: "Creating your account…",
      fields: [
        { name: "name", label: "Name", autocomplete: "name" },
        { name: "email", label: "Email", type: "email", autocomplete: "email", inputmode: "email" },
        {
          name: "phone",
          label: "Phone number",
          phone: true,
          autocomplete: "tel",
          hint: "Your Ghana mobile number, such as 024 123 4567"
        },
        {
          name: "password",
          label: "Password",
          type: "password",
          autocomplete: "new-password",
          hint: "At least 10 characters",
          attrs: { minlength: "10" }
        },
        {
          name: "referral_code",
          label: "Referral code (optional)",
          required: false,
          value: referral,
          autocomplete: "off",
          hint: "The code of the reseller who sent you here, if any"
        }
      ],
      onSubmit: async (values) => {
        const code = values.referral_code?.trim() ?? ""
        const answer = await api.register({
          payload: {
            name: values.name!,
            email: values.email!,
            phone: values.phone!,
            password: values.password!,
            ...(code === "" ? {} : { referral_code: code })
          }
        })
        registerForm.element.hidden = true
        // What truly happened to the email (sent, in the demo mailbox, or kept for the operators) is the server's to say.
        done.replaceChildren(
          h("h2", { tabindex: "-1" }, "Almost done: verify your address"),
          h("p", null, answer.message),
          h("p", null, h("a", { href: pathOf("signIn"), class: "button" }, "Sign in")),
          demoMailbox(values.email!, life)
        )
        ;(done.querySelector("h2") as HTMLElement).focus()
      }
    })
    return h(
      "div",
      null,
      h("h1", null, "Create an account"),
      registerForm.element,
      done,
      h("p", null, "Already registered? ", h("a", { href: pathOf("signIn") }, "Sign in"))
    )
  }
}

export const verifyEmail: Page = {
  title: "Verify your email",
  public: true,
  render: async ({ life }) => {
    const token = linkToken()
    const parts: Array<Node> = [h("h1", null, "Verify your email")]
    if (token !== "") {
      // Out of the address bar and the history, now that it is read.
      history.replaceState(null, "", location.pathname)
      try {
        await api.verifyEmail({ payload: { token } })
        parts.push(
          h("p", { class: "form-message ok", role: "status" }, "Your email is verified. You can sign in now."),
          h("p", null, h("a", { href: pathOf("signIn") }, "Sign in"))
        )
        return h("div", null, parts)
      } catch (error) {
        parts.push(
          h("p", { class: "form-message", role: "alert" }, error instanceof Error ? error.message : String(error))
        )
      }
    }
    const resend = form({
      label: "Resend the verification email",
      submit: "Send a new link",
      pending: "Sending…",
      fields: [{ name: "email", label: "Email", type: "email", autocomplete: "email", inputmode: "email" }],
      onSubmit: async (values, f) => {
        const answer = await api.resendVerification({ payload: { email: values.email! } })
        f.setMessage(answer.message, "ok")
        mailbox.replaceChildren(demoMailbox(values.email!, life))
      }
    })
    const mailbox = h("div")
    parts.push(h("p", null, "Open your verification link, or ask for a new one."), resend.element, mailbox)
    return h("div", null, parts)
  }
}

export const resetPassword: Page = {
  title: "Reset your password",
  public: true,
  render: ({ app, life }) => {
    const token = linkToken()
    if (token === "") {
      const forgot = form({
        label: "Forgotten password",
        submit: "Email me a reset link",
        pending: "Sending…",
        fields: [{ name: "email", label: "Email", type: "email", autocomplete: "email", inputmode: "email" }],
        onSubmit: async (values, f) => {
          const answer = await api.forgotPassword({ payload: { email: values.email! } })
          f.setMessage(answer.message, "ok")
          mailbox.replaceChildren(demoMailbox(values.email!, life))
        }
      })
      const mailbox = h("div")
      return h("div", null, h("h1", null, "Reset your password"), forgot.element, mailbox)
    }
    history.replaceState(null, "", location.pathname)
    const reset = form({
      label: "Choose a new password",
      submit: "Set the new password",
      pending: "Saving…",
      fields: [{
        name: "password",
        label: "New password",
        type: "password",
        autocomplete: "new-password",
        hint: "At least 10 characters",
        attrs: { minlength: "10" }
      }],
      onSubmit: async (values, f) => {
        const answer = await api.resetPassword({ payload: { token, password: values.password! } })
        app.setSignedIn(false)
        f.setMessage(`${answer.message} Sign in with the new password.`, "ok")
      }
    })
    return h(
      "div",
      null,
      h("h1", null, "Reset your password"),
      reset.element,
      h("p", null, h("a", { href: pathOf("signIn") }, "Sign in"))
    )
  }
}
