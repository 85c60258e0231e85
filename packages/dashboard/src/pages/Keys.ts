/**
 * API keys, the profile's section: create with a name and a mode (the key shown once, with a
 * copy button), list with their modes, revoke.
 */
import type { Page } from "../App.js"
import { h, replace } from "../Dom.js"
import { api, type Key } from "../Endpoints.js"
import { changePasswordForm, form } from "../Form.js"
import { list as listOf, status } from "../List.js"
import { testing } from "../TestMode.js"
import { when } from "../Words.js"

export const keys: Page = {
  title: "API keys",
  render: async ({ life }) => {
    const list = h("div")
    const shown = h("div", { "aria-live": "polite" })
    const load = async () => renderKeys((await api.keys({ signal: life.signal })).keys)
    const renderKeys = (all: ReadonlyArray<Key>) =>
      replace(
        list,
        listOf({
          caption: "Your API keys, newest first",
          empty: "No keys yet.",
          testId: "keys",
          rows: all,
          columns: [
            { label: "Name", place: "title", cell: (key) => key.name ?? "(no name)" },
            {
              label: "Mode",
              place: "badge",
              cell: (key) => h("span", { class: `mode mode-${key.mode}` }, key.mode === "test" ? "Test" : "Live")
            },
            { label: "Key", place: "line", cell: (key) => h("code", null, `${key.prefix}…`) },
            { label: "State", place: "amount", cell: (key) => status(key.revoked_at ? "revoked" : "active") },
            { label: "Created", cell: (key) => when(key.created_at) },
            { label: "Last used", cell: (key) => key.last_used_at ? when(key.last_used_at) : "never" },
            { label: "Revoked", cell: (key) => key.revoked_at ? when(key.revoked_at) : "" },
            {
              label: "Action",
              place: "action",
              cell: (key) => {
                if (key.revoked_at) return null
                const revoke = h("button", { type: "button", class: "danger" }, "Revoke")
                revoke.setAttribute("aria-label", `Revoke ${key.name ?? key.prefix}`)
                revoke.addEventListener("click", async () => {
                  if (!confirm(`Revoke ${key.name ?? key.prefix}? Programs using it stop working at once.`)) return
                  revoke.disabled = true
                  revoke.textContent = "Revoking…"
                  try {
                    await api.revokeKey({ path: { key_id: key.id }, signal: life.signal })
                  } finally {
                    await load()
                  }
                })
                return revoke
              }
            }
          ]
        })
      )
    const create = form({
      label: "Create an API key",
      submit: "Create key",
      pending: "Creating…",
      fields: [
        { name: "name", label: "Key name", hint: "Where you will use it, such as “shop website”" },
        {
          name: "mode",
          label: "Mode",
          options: [
            { value: "live", label: "Live: real orders from your wallet" },
            { value: "test", label: "Test: simulated orders from a test wallet of play money" }
          ],
          value: testing() ? "test" : "live",
          hint: "Build and test your integration with a test key, then switch to a live key."
        }
      ],
      onSubmit: async (values, f) => {
        const created = await api.createKey({
          payload: { name: values.name!, mode: values.mode === "test" ? "test" : "live" },
          signal: life.signal
        })
        f.element.reset()
        const copy = h("button", { type: "button", class: "secondary" }, "Copy key")
        const copied = h("span", { role: "status" })
        copy.addEventListener("click", async () => {
          try {
            await navigator.clipboard.writeText(created.api_key)
            copied.textContent = "Copied."
          } catch {
            copied.textContent = "Copy it by hand: select the key above."
          }
        })
        replace(
          shown,
          h(
            "div",
            { class: "card" },
            h("h2", { tabindex: "-1" }, created.key.mode === "test" ? "Your new test key" : "Your new key"),
            h("p", { class: "warning" }, "This is the only time the key is shown. Copy it now and keep it safe."),
            h("code", { class: "secret", "data-testid": "new-key" }, created.api_key),
            h("div", { class: "actions" }, copy, copied)
          )
        )
        ;(shown.querySelector("h2") as HTMLElement).focus()
        await load()
      }
    })
    const password = changePasswordForm((payload) => api.changePassword({ payload }))
    await load()
    return h(
      "div",
      null,
      h("h1", null, "API keys"),
      h("p", { class: "muted" }, "Programs that buy through the API use a key; each key can be revoked on its own."),
      create.element,
      shown,
      h("h2", null, "Your keys"),
      list,
      h("h2", null, "Your password"),
      password.element
    )
  }
}
