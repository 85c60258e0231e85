/**
 * The demo mailbox: under `serve --demo` on this machine without an email server, the page
 * shows the email the server just sent (the verification or reset link), so a newcomer needs
 * no terminal. Anywhere else the server answers 404 and nothing is shown.
 */
import { ApiFailure } from "./Api.js"
import { h, replace } from "./Dom.js"
import { api } from "./Endpoints.js"
import type { Life } from "./Life.js"
import { when } from "./Words.js"

/** Tries while the email is not there yet (it is written as the request commits). */
const ATTEMPTS = 5

/**
 * An emailed link (`<public URL>/#/verify-email?token=…`) as a page of this dashboard on this
 * origin (`/verify-email#token=…`): the server's idea of its own address may differ from the
 * one in the address bar, and the token stays in the fragment.
 */
const inApp = (link: string): string => {
  const url = new URL(link)
  if (!url.hash.startsWith("#/")) return link
  const inner = new URL(url.hash.slice(1), location.origin)
  const rest = inner.searchParams.toString()
  return `${inner.pathname}${rest === "" ? "" : `#${rest}`}`
}

/** Opens an in-app link with its fragment: a history entry, then the router renders it. */
const open = (event: Event) => {
  event.preventDefault()
  history.pushState(null, "", (event.currentTarget as HTMLAnchorElement).getAttribute("href")!)
  dispatchEvent(new PopStateEvent("popstate"))
}

/** A region that fills with the demo mailbox of `email`, or stays empty when there is none (while the page lives). */
export const demoMailbox = (email: string, life: Life): HTMLElement => {
  const region = h("section", { "aria-live": "polite", "aria-label": "Demo mailbox", hidden: true })
  const load = async (attempt: number): Promise<void> => {
    let emails
    try {
      emails = (await api.demoMailbox({ query: { email }, signal: life.signal })).emails
    } catch (error) {
      if (error instanceof ApiFailure && error.status !== 404) console.error(error)
      return
    }
    if (emails.length === 0 && attempt < ATTEMPTS) {
      await life.sleep(500 * attempt)
      return load(attempt + 1)
    }
    region.hidden = false
    replace(
      region,
      h("h2", null, "Demo mailbox"),
      h(
        "p",
        null,
        `This server runs the demo, without an email server: here is what it just sent to ${email}.`
      ),
      emails.length === 0 ? h("p", null, "No email yet.") : emails.map((mail) =>
        h(
          "article",
          { class: "card" },
          h("h3", null, mail.subject),
          h("p", null, when(mail.created_at)),
          mail.link === null
            ? h("p", null, mail.body)
            : h("p", null, h("a", { href: inApp(mail.link), onclick: open, class: "button" }, linkLabel(mail.kind)))
        )
      )
    )
  }
  load(1).catch(() => {})
  return region
}

const linkLabel = (kind: string): string =>
  kind === "verify_email" ? "Open the verification link" : kind === "reset_password" ? "Open the reset link" : "Open"
