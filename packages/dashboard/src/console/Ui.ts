/** What the console's pages share: action buttons that run once, and a link to an account by its name. */
import { ApiFailure } from "../Api.js"
import { h } from "../Dom.js"
import { PageLeft } from "../Life.js"
import { consolePath } from "./Paths.js"

/**
 * A button for one change: disabled from the first click until the server answered, with the
 * outcome (or the refusal's message) in a status region beside it, so a double click sends
 * one request. `confirm` asks first (every destructive change does); `run` returns the text to
 * show; the button stays disabled after a success when `once` (the change is done: approving
 * a payment, resolving an order).
 */
export const actionButton = (
  label: string,
  options: {
    readonly accessibleName?: string
    readonly kind?: "secondary" | "danger"
    readonly pending: string
    readonly once?: boolean
    /** The question a destructive change asks first; cancelling changes nothing. */
    readonly confirm?: () => string
    readonly run: () => Promise<string>
  }
): { readonly element: Node; readonly button: HTMLButtonElement } => {
  const button = h("button", {
    type: "button",
    class: options.kind,
    "aria-label": options.accessibleName
  }, label)
  const status = h("span", { class: "progress", role: "status", "aria-live": "polite" })
  let busy = false
  button.addEventListener("click", () => {
    if (busy) return
    if (options.confirm !== undefined && !confirm(options.confirm())) return
    busy = true
    button.disabled = true
    status.textContent = options.pending
    status.classList.add("on")
    status.classList.remove("bad")
    options.run().then(
      (text) => {
        status.textContent = text
        if (!options.once) button.disabled = false
      },
      (error: unknown) => {
        if (error instanceof PageLeft) return
        status.textContent = error instanceof ApiFailure || error instanceof Error ? error.message : String(error)
        status.classList.add("bad")
        button.disabled = false
      }
    ).finally(() => {
      busy = false
      status.classList.remove("on")
    })
  })
  return { element: h("span", { class: "actions" }, button, status), button }
}

/** An account by its name and number, linked to its page. */
export const accountLink = (id: number, name?: string): Node =>
  h("a", { href: consolePath("account", { id: String(id) }) }, name === undefined ? `#${id}` : `${name} (#${id})`)
