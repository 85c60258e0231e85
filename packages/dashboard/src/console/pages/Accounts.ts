/**
 * Accounts: search (name, the holder's email or phone, the account number), and one
 * account's detail: balances, the ledger, keys by prefix, limits, webhook health; suspend
 * and reactivate, the price group, per-account limit overrides.
 */
import type { Page } from "../../App.js"
import { ghs, h, replace, when } from "../../Dom.js"
import { form } from "../../Form.js"
import { balances, statusBadge } from "../../pages/Home.js"
import { filterForm, pager } from "../../pages/Orders.js"
import { type AccountDetail, api } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { actionButton, queryOf, table } from "../Ui.js"

export const accounts: Page = {
  title: "Accounts",
  render: async ({ app, query }) => {
    const filters = queryOf(query, ["search", "status"])
    const page = Number(query.get("page") ?? "1") || 1
    const answer = await api.accounts({ query: { ...filters, page, per_page: 25 } })
    return h(
      "div",
      null,
      h("h1", null, "Accounts"),
      filterForm(app.go, consolePath("accounts"), query, [
        { name: "search", label: "Search", type: "search", hint: "Name, email, phone or account number" },
        {
          name: "status",
          label: "Status",
          options: [{ value: "", label: "Any" }, { value: "active", label: "Active" }, {
            value: "suspended",
            label: "Suspended"
          }]
        }
      ]),
      h("p", { class: "muted" }, `${answer.pagination.total} account(s)`),
      table(
        "Accounts",
        ["Account", "Name", "Status", "Price group", ["Main balance", true]],
        answer.accounts.map((a) => [
          h("a", { href: consolePath("account", { id: String(a.id) }) }, `#${a.id}`),
          a.name,
          statusBadge(a.status),
          a.price_group ?? "default",
          ghs(a.balance.main)
        ]),
        { empty: "No account matches.", testId: "accounts" }
      ),
      pager(consolePath("accounts"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}

const LIMIT_SCOPES = [
  ["all", "Requests a minute"],
  ["orders", "Orders a minute"],
  ["balance", "Balance checks a minute"]
] as const

/** The settings forms of one account; each change re-renders the page with the answer. */
const settings = (detail: AccountDetail, reload: () => void): Node => {
  const suspended = detail.status === "suspended"
  const status = actionButton(suspended ? "Reactivate the account" : "Suspend the account", {
    kind: suspended ? "secondary" : "danger",
    pending: suspended ? "Reactivating…" : "Suspending…",
    once: true,
    run: async () => {
      if (!suspended && !confirm(`Suspend ${detail.name}? Its API keys stop working at once.`)) {
        throw new Error("Not suspended.")
      }
      await api.updateAccount({
        path: { account_id: detail.id },
        payload: { status: suspended ? "active" : "suspended" }
      })
      setTimeout(reload, 600)
      return suspended ? "Reactivated." : "Suspended: its API keys are refused from now on."
    }
  })
  const group = form({
    label: "Price group",
    submit: "Save price group",
    pending: "Saving…",
    fields: [{
      name: "price_group",
      label: "Price group",
      required: false,
      value: detail.price_group ?? "",
      hint: "Empty: the default prices."
    }],
    onSubmit: async (values, f) => {
      const answer = await api.updateAccount({
        path: { account_id: detail.id },
        payload: { price_group: values.price_group!.trim() === "" ? null : values.price_group!.trim() }
      })
      f.setMessage(`Saved: ${answer.price_group ?? "default"} prices.`, "ok")
    }
  })
  const limits = form({
    label: "Limits",
    submit: "Save limits",
    pending: "Saving…",
    fields: LIMIT_SCOPES.map(([scope, label]) => ({
      name: scope,
      label,
      type: "number",
      inputmode: "numeric",
      required: false,
      value: detail.limits[scope] === undefined ? "" : String(detail.limits[scope]),
      hint: "Empty: the server's default.",
      attrs: { min: "1" }
    })),
    onSubmit: async (values, f) => {
      const patch: Record<string, number | null> = {}
      for (const [scope] of LIMIT_SCOPES) patch[scope] = values[scope] === "" ? null : Number(values[scope])
      await api.updateAccount({ path: { account_id: detail.id }, payload: { limits: patch } })
      f.setMessage("Saved.", "ok")
    }
  })
  return h(
    "div",
    null,
    h("h2", null, "Status"),
    h("p", null, "This account is ", statusBadge(detail.status), "."),
    status.element,
    h("h2", null, "Price group"),
    group.element,
    h("h2", null, "Limits"),
    limits.element
  )
}

export const account: Page = {
  title: "Account",
  render: async ({ params, query, app }) => {
    const id = Number(params.id)
    const page = Number(query.get("page") ?? "1") || 1
    const [detail, ledger, health] = await Promise.all([
      api.account({ path: { account_id: id } }),
      api.ledger({ path: { account_id: id }, query: { page, per_page: 20 } }),
      api.webhooks().then((answer) => answer.endpoints.find((e) => e.account_id === id)).catch(() => undefined)
    ])
    const reload = () => app.go(location.pathname + location.search, { replace: true })
    const webhook = h("div")
    replace(
      webhook,
      h(
        "dl",
        { class: "detail card" },
        h("dt", null, "URL"),
        h("dd", null, detail.webhook_url ?? "none (deliveries off)"),
        h("dt", null, "Waiting"),
        h("dd", null, String(health?.backlog ?? 0)),
        h("dt", null, "Failing since"),
        h("dd", null, when(health?.failing_since)),
        h("dt", null, "Abandoned"),
        h("dd", null, String(health?.abandoned ?? 0)),
        h("dt", null, "Last answer"),
        h("dd", null, health?.last_status ? `HTTP ${health.last_status} at ${when(health.last_attempt_at)}` : "—")
      ),
      (health?.abandoned ?? 0) > 0
        ? h("p", null, h("a", { href: `${consolePath("webhooks")}?account=${id}` }, "Abandoned events and resend"))
        : null
    )
    return h(
      "div",
      null,
      h("h1", null, `Account #${detail.id}: ${detail.name}`),
      h(
        "p",
        null,
        statusBadge(detail.status),
        ` · ${detail.price_group ?? "default"} prices · since ${when(detail.created_at)} · `,
        h("a", { href: `${consolePath("money")}?account=${id}` }, "Fund or adjust"),
        " · ",
        h("a", { href: `${consolePath("orders")}?account_id=${id}` }, "Orders"),
        " · ",
        h("a", { href: `${consolePath("actions")}?account_id=${id}` }, "Actions")
      ),
      balances(detail.balance),
      settings(detail, reload),
      h("h2", null, "API keys"),
      table(
        "Keys by prefix",
        ["Prefix", "Created", "Last used", "State"],
        detail.keys.map((k) => [
          h("code", null, `${k.prefix}…`),
          when(k.created_at),
          when(k.last_used_at),
          k.revoked_at ? `revoked ${when(k.revoked_at)}` : "active"
        ]),
        { empty: "No keys." }
      ),
      h("h2", null, "Webhook"),
      webhook,
      h("h2", null, "Ledger"),
      table(
        "Wallet movements, newest first",
        ["When", "Wallet", "What", ["Amount", true], ["Balance", true]],
        ledger.entries.map((e) => [
          when(e.created_at),
          e.wallet,
          [e.reason, e.order_number ? ` ${e.order_number}` : "", e.note ? ` · ${e.note}` : ""].join(""),
          ghs(e.amount),
          ghs(e.balance_after)
        ]),
        { empty: "No entries.", testId: "ledger" }
      ),
      pager(location.pathname, query, ledger.pagination.current_page, ledger.pagination.last_page)
    )
  }
}
