/**
 * Forms as the dashboard needs them everywhere: labelled fields, the API's field errors
 * (the 422 envelope's `errors`) under the field they name, a form-level message for the
 * rest, and a submit button that is disabled and shows progress while the request is out,
 * so a double click sends one request. Actions that move money also carry an idempotency
 * key that survives a reload (`Idempotency.ts`).
 */
import { ApiFailure } from "./Api.js"
import { h, uid } from "./Dom.js"

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
        type: field.type ?? "text",
        autocomplete: field.autocomplete,
        inputmode: field.inputmode,
        value: field.value
      })
    if (field.options && field.value !== undefined) input.value = field.value
    const error = h("p", { id: errorId, class: "field-error" })
    inputs.set(field.name, input)
    errorSlots.set(field.name, error)
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
        slot.textContent = messages.join(" ")
        const input = inputs.get(name)!
        input.setAttribute("aria-invalid", "true")
        first ??= input
      }
      const all = [text, ...loose].filter((m): m is string => m !== undefined && m.length > 0)
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
    for (const [name, input] of inputs) {
      if (!input.checkValidity()) local[name] = [input.validationMessage]
    }
    if (Object.keys(local).length > 0) return handle.showErrors(local)
    const values: Record<string, string> = {}
    for (const [name, input] of inputs) {
      values[name] = input instanceof HTMLInputElement && input.type === "checkbox"
        ? String(input.checked)
        : input.value
    }
    busy = true
    button.disabled = true
    element.setAttribute("aria-busy", "true")
    status.textContent = options.pending ?? "Working…"
    status.classList.add("on")
    options.onSubmit(values, handle).catch((error: unknown) => {
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
