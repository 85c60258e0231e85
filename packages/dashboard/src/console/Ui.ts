/** What the console's pages share: tables, action buttons that run once, ages. */
import { ApiFailure } from "../Api.js"
import { h } from "../Dom.js"

/** A table in a box that scrolls sideways on a phone; `numeric` columns align right. */
export const table = (
  caption: string,
  columns: ReadonlyArray<string | readonly [label: string, numeric: true]>,
  rows: ReadonlyArray<ReadonlyArray<Node | string | number | null>>,
  options: { readonly empty?: string; readonly testId?: string } = {}
): Node => {
  if (rows.length === 0) return h("p", { class: "muted" }, options.empty ?? "Nothing to show.")
  const numeric = columns.map((c) => typeof c !== "string")
  return h(
    "div",
    // Focusable, so a keyboard can scroll a table wider than the screen.
    { class: "table-wrap", "data-testid": options.testId, tabindex: "0", role: "region", "aria-label": caption },
    h(
      "table",
      null,
      h("caption", { class: "muted" }, caption),
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          columns.map((c, i) =>
            h("th", { scope: "col", class: numeric[i] ? "num" : undefined }, typeof c === "string" ? c : c[0])
          )
        )
      ),
      h(
        "tbody",
        null,
        rows.map((row) => h("tr", null, row.map((cell, i) => h("td", { class: numeric[i] ? "num" : undefined }, cell))))
      )
    )
  )
}

/**
 * A button for one change: disabled from the first click until the server answered, with the
 * outcome (or the refusal's message) in a status region beside it, so a double click sends
 * one request. `run` returns the text to show; the button stays disabled after a success when
 * `once` (the change is done: approving a payment, resolving an order).
 */
export const actionButton = (
  label: string,
  options: {
    readonly accessibleName?: string
    readonly kind?: "secondary" | "danger"
    readonly pending: string
    readonly once?: boolean
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

/** How long ago an instant was, in the largest whole unit ("3 min", "2 h", "5 d"). */
export const age = (iso: string, now = Date.now()): string => {
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000))
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h`
  return `${Math.floor(seconds / 86400)} d`
}

/** A query's non-empty values by name. */
export const queryOf = (query: URLSearchParams, names: ReadonlyArray<string>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = query.get(name)
    if (value) out[name] = value
  }
  return out
}
