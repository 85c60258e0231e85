/**
 * Forms as both apps need them everywhere: labelled fields, the API's field errors (the 422
 * envelope's `errors`) under the field they name, said with the field's label rather than the
 * API's field name and never a second time above the button, a form-level message for the
 * rest, and a submit button that is disabled and shows progress while the request is out, so
 * a double click sends one request. Actions that move money also carry an idempotency key
 * that survives a reload (`Pending.ts`).
 *
 * A phone field reads what is typed as the client reads a number (`@databundle/client/Phone`:
 * spaces, dashes, +233 and the rest; mobile numbers only), refuses anything else with the
 * one rule every surface states, and sends the API's `0XXXXXXXXX` form.
 */
import { parsePhone } from "@databundle/client/Phone"
import { MOBILE_RULE } from "@databundle/contract/PhoneTerms"
import { ApiFailure } from "./Api.js"
import { h, uid } from "./Dom.js"
import { PageLeft } from "./Life.js"

/** One field. */
export interface Field {
  readonly name: string
  readonly label: string
  readonly type?: string
  readonly autocomplete?: string
  readonly inputmode?: string
  readonly required?: boolean
  readonly hint?: string
  readonly value?: string
  readonly options?: ReadonlyArray<{ readonly value: string; readonly label: string }>
  readonly attrs?: Record<string, string>
  /** A Ghana mobile number, read as the client reads one and sent in the API's form. */
  readonly phone?: boolean
}

/** A built form and the handles a page needs to drive it. */
export interface FormHandle {
  readonly element: HTMLFormElement
  readonly input: (name: string) => HTMLInputElement | HTMLSelectElement
  /** Shows errors by field (the API's names); unknown names go to the form-level message. */
  readonly showErrors: (errors: Record<string, ReadonlyArray<string>>, message?: string) => void
  readonly setMessage: (message: string, kind?: "error" | "ok") => void
}

/** What `form` takes. */
export interface FormOptions {
  readonly label: string
  readonly fields: ReadonlyArray<Field>
  readonly submit: string
  /** Shown on the button while the request is out. */
  readonly pending?: string
  readonly onSubmit: (values: Record<string, string>, form: FormHandle) => Promise<void>
  /** Extra content between the fields and the button. */
  readonly extra?: Node
}

/** Builds a form. */
export const form = (options: FormOptions): FormHandle => {
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>()
  const errorSlots = new Map<string, HTMLElement>()
  const labels = new Map<string, string>()
  const phones = new Set(options.fields.filter((field) => field.phone).map((field) => field.name))
  const message = h("p", { class: "form-message", role: "alert", "aria-live": "assertive" })
  const button = h("button", { type: "submit" }, options.submit)
  const status = h("span", { class: "progress", role: "status", "aria-live": "polite" })

  const rows = options.fields.map((field) => {
    const id = uid(field.name)
    const errorId = `${id}-error`
    const hintId = `${id}-hint`
    const described = [field.hint ? hintId : undefined, errorId].filter(Boolean).join(" ")
    const common = {
      id,
      name: field.name,
      required: field.required ?? true,
      "aria-describedby": described,
      ...(field.attrs ?? {})
    }
    const input = field.options
      ? h("select", common, field.options.map((o) => h("option", { value: o.value }, o.label)))
      : h("input", {
        ...common,
        type: field.phone ? "tel" : field.type ?? "text",
        autocomplete: field.autocomplete,
        inputmode: field.phone ? "tel" : field.inputmode,
        value: field.value
      })
    if (field.phone) {
      // Shown back in the form it will be sent in, once the visitor moves on.
      input.addEventListener("blur", () => {
        const phone = parsePhone(input.value)
        if (phone !== undefined) input.value = phone.local
      })
    }
    if (field.options && field.value !== undefined) input.value = field.value
    const error = h("p", { id: errorId, class: "field-error" })
    inputs.set(field.name, input)
    errorSlots.set(field.name, error)
    labels.set(field.name, field.label)
    return h(
      "div",
      { class: "field" },
      h("label", { for: id }, field.label),
      field.hint ? h("p", { id: hintId, class: "hint" }, field.hint) : null,
      input,
      error
    )
  })

  const element = h(
    "form",
    { "aria-label": options.label, novalidate: true },
    rows,
    options.extra,
    message,
    h("div", { class: "actions" }, button, status)
  )

  const clear = () => {
    for (const [name, slot] of errorSlots) {
      slot.textContent = ""
      inputs.get(name)!.removeAttribute("aria-invalid")
    }
    message.textContent = ""
    message.className = "form-message"
  }

  const handle: FormHandle = {
    element,
    input: (name) => inputs.get(name)!,
    showErrors: (errors, text) => {
      const loose: Array<string> = []
      let first: HTMLElement | undefined
      for (const [name, messages] of Object.entries(errors)) {
        const slot = errorSlots.get(name)
        if (slot === undefined) {
          loose.push(...messages)
          continue
        }
        // The API names its fields ("payer_number must be ..."); the visitor knows the label.
        slot.textContent = messages.map((m) =>
          m.startsWith(`${name} `) ? `${labels.get(name)}${m.slice(name.length)}` : m
        )
          .join(" ")
        const input = inputs.get(name)!
        input.setAttribute("aria-invalid", "true")
        first ??= input
      }
      // The envelope's message repeats the first field error: said once, by its field.
      const all = [first === undefined ? text : undefined, ...loose].filter((m): m is string =>
        m !== undefined && m.length > 0
      )
      if (all.length > 0) handle.setMessage(all.join(" "))
      ;(first ?? (all.length > 0 ? message : undefined))?.focus()
    },
    setMessage: (text, kind = "error") => {
      message.textContent = text
      message.className = `form-message ${kind}`
      if (kind === "error") message.setAttribute("tabindex", "-1")
    }
  }

  let busy = false
  element.addEventListener("submit", (event) => {
    event.preventDefault()
    if (busy) return
    clear()
    // The browser's own checks first, with their messages in the same place as the API's.
    const local: Record<string, Array<string>> = {}
    const values: Record<string, string> = {}
    for (const [name, input] of inputs) {
      if (!input.checkValidity()) local[name] = [input.validationMessage]
      values[name] = input.value
      if (phones.has(name) && input.value.trim() !== "" && local[name] === undefined) {
        const phone = parsePhone(input.value)
        if (phone === undefined) local[name] = [`${labels.get(name)} ${MOBILE_RULE}`]
        else values[name] = phone.local
      }
    }
    if (Object.keys(local).length > 0) return handle.showErrors(local)
    busy = true
    button.disabled = true
    element.setAttribute("aria-busy", "true")
    status.textContent = options.pending ?? "Working…"
    status.classList.add("on")
    options.onSubmit(values, handle).catch((error: unknown) => {
      if (error instanceof PageLeft) return
      if (error instanceof ApiFailure) handle.showErrors(error.errors ?? {}, error.message)
      else handle.setMessage(error instanceof Error ? error.message : String(error))
    }).finally(() => {
      busy = false
      button.disabled = false
      element.removeAttribute("aria-busy")
      status.textContent = ""
      status.classList.remove("on")
    })
  })
  return handle
}

/**
 * The form a signed-in user (a holder or an operator) changes their own password with: the
 * current one, a new one of at least 10 characters; `change` sends them and answers with
 * the message to show.
 */
export const changePasswordForm = (
  change: (payload: { readonly current_password: string; readonly new_password: string }) => Promise<{
    readonly message: string
  }>
): FormHandle =>
  form({
    label: "Change your password",
    submit: "Change password",
    pending: "Saving…",
    fields: [
      { name: "current_password", label: "Current password", type: "password", autocomplete: "current-password" },
      {
        name: "new_password",
        label: "New password",
        type: "password",
        autocomplete: "new-password",
        hint: "At least 10 characters. Your other sessions are signed out.",
        attrs: { minlength: "10" }
      }
    ],
    onSubmit: async (values, f) => {
      const answer = await change({ current_password: values.current_password!, new_password: values.new_password! })
      f.element.reset()
      f.setMessage(answer.message, "ok")
    }
  })
