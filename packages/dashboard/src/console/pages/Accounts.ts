/**
 * Accounts: search (name, the holder's email or phone, the account number), and one
 * account's detail: balances, the ledger, keys by prefix, limits, webhook health; suspend
 * and reactivate, the price group, per-account limit overrides.
 */
import type { Page } from "../../App.js"
import { balances } from "../../Balances.js"
import { h } from "../../Dom.js"
import { form } from "../../Form.js"
import { ledgerList } from "../../LedgerList.js"
import type { Life } from "../../Life.js"
import { filters, list, pageOf, pager, queryOf, status } from "../../List.js"
import { count, ghs, when } from "../../Words.js"
import { type AccountDetail, api } from "../Endpoints.js"
import { consolePath } from "../Paths.js"
import { accountLink, actionButton } from "../Ui.js"

export const accounts: Page = {
  title: "Accounts",
  render: async ({ app, life, query }) => {
    const answer = await api.accounts({
      query: { ...queryOf(query, ["search", "status"]), page: pageOf(query), per_page: 25 },
      signal: life.signal
    })
    return h(
      "div",
      null,
      h("h1", null, "Accounts"),
      filters(app.go, consolePath("accounts"), query, [
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
      h("p", { class: "count" }, count(answer.pagination.total, "account")),
      list({
        caption: "Accounts, oldest first",
        empty: "No account matches.",
        testId: "accounts",
        rows: answer.accounts,
        columns: [
          { label: "Account", place: "title", cell: (a) => accountLink(a.id, a.name) },
          { label: "Status", place: "badge", cell: (a) => status(a.status) },
          { label: "Price group", place: "line", cell: (a) => `${a.price_group ?? "default"} prices` },
          { label: "Main balance", place: "amount", numeric: true, cell: (a) => ghs(a.balance.main) },
          { label: "Since", cell: (a) => when(a.created_at) }
        ]
      }),
      pager(consolePath("accounts"), query, answer.pagination.current_page, answer.pagination.last_page)
    )
  }
}

const LIMIT_SCOPES = [
  ["all", "Requests a minute"],
  ["orders", "Orders a minute"],
  ["balance", "Balance checks a minute"]
] as const

/** The settings forms of one account; a change of status shows the page again with the answer. */
const settings = (
  detail: AccountDetail,
  groups: ReadonlyArray<string>,
  reload: () => void,
  life: Life
): Node => {
  const suspended = detail.status === "suspended"
  const toggle = actionButton(suspended ? "Reactivate the account" : "Suspend the account", {
    kind: suspended ? "secondary" : "danger",
    pending: suspended ? "Reactivating…" : "Suspending…",
    once: true,
    ...(suspended ? {} : {
      confirm: () => `Suspend ${detail.name}? Its holder cannot sign in and its API keys stop working at once.`
    }),
    run: async () => {
      await api.updateAccount({
        path: { account_id: detail.id },
        payload: { status: suspended ? "active" : "suspended" },
        signal: life.signal
      })
      life.sleep(600).then(reload, () => {})
      return suspended ? "Reactivated." : "Suspended: its API keys are refused from now on."
    }
  })
  // The groups the catalogue has; an account's group outside them (none) cannot be typed in by mistake.
  const group = form({
    label: "Price group",
    submit: "Save price group",
    pending: "Saving…",
    fields: [{
      name: "price_group",
      label: "Price group",
      required: false,
      options: [{ value: "", label: "Default prices" }, ...groups.map((g) => ({ value: g, label: g }))],
      value: detail.price_group ?? "",
      hint: "The prices this account buys at; groups are made by catalogue imports."
    }],
    onSubmit: async (values, f) => {
      const answer = await api.updateAccount({
        path: { account_id: detail.id },
        payload: { price_group: values.price_group === "" ? null : values.price_group! },
        signal: life.signal
      })
      f.setMessage(`Saved: ${answer.price_group ?? "default"} prices.`, "ok")
    }
  })
  const programmes = form({
    label: "Agent and referrer",
    submit: "Save agent and referrer",
    pending: "Saving…",
    fields: [
      {
        name: "agent_id",
        label: "Agent (account number)",
        type: "number",
        inputmode: "numeric",
        required: false,
        value: detail.agent_id === null ? "" : String(detail.agent_id),
        hint: "The account it sells under: that account's agent wallet earns the price difference. Empty: none.",
        attrs: { min: "1" }
      },
      {
        name: "referred_by",
        label: "Referred by (account number)",
        type: "number",
        inputmode: "numeric",
        required: false,
        value: detail.referred_by === null ? "" : String(detail.referred_by),
        hint: "That account's referral wallet earns the referral rate of its orders. Empty: none.",
        attrs: { min: "1" }
      }
    ],
    onSubmit: async (values, f) => {
      const idOf = (text: string | undefined) => (text === undefined || text === "" ? null : Number(text))
      const answer = await api.updateAccount({
        path: { account_id: detail.id },
        payload: { agent_id: idOf(values.agent_id), referred_by: idOf(values.referred_by) },
        signal: life.signal
      })
      f.setMessage(
        `Saved: agent ${answer.agent_id === null ? "none" : `#${answer.agent_id}`}, referrer ${
          answer.referred_by === null ? "none" : `#${answer.referred_by}`
        }.`,
        "ok"
      )
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
      await api.updateAccount({ path: { account_id: detail.id }, payload: { limits: patch }, signal: life.signal })
      f.setMessage("Saved.", "ok")
    }
  })
  return h(
    "div",
    null,
    h("h2", null, "Status"),
    h("p", null, "This account is ", status(detail.status), "."),
    toggle.element,
    h("h2", null, "Prices"),
    group.element,
    h("h2", null, "Agent and referrer"),
    programmes.element,
    h("h2", null, "Limits"),
    limits.element
  )
}

export const account: Page = {
  title: "Account",
  render: async ({ app, life, params, query }) => {
    const id = Number(params.id)
    const { signal } = life
    const [detail, ledger, health, groups] = await Promise.all([
      api.account({ path: { account_id: id }, signal }),
      api.ledger({ path: { account_id: id }, query: { page: pageOf(query), per_page: 20 }, signal }),
      api.webhooks({ signal }).then((answer) => answer.endpoints.find((e) => e.account_id === id)).catch(() =>
        undefined
      ),
      api.priceGroups({ signal }).then((answer) => answer.price_groups)
    ])
    const reload = () => app.reload()
    const row = (label: string, value: Node | string) => [h("dt", null, label), h("dd", null, value)]
    const holder = detail.holder
    return h(
      "div",
      null,
      h("h1", null, `${detail.name} (#${detail.id})`),
      h(
        "dl",
        { class: "detail card", "data-testid": "holder" },
        row("Status", status(detail.status)),
        holder === null
          ? row("Holder", "none: made by an operator, no one signs in")
          : [
            row("Holder", holder.name),
            row("Email", h("a", { href: `mailto:${holder.email}` }, holder.email)),
            row("Phone", h("a", { href: `tel:${holder.phone}` }, holder.phone))
          ],
        row("Prices", `${detail.price_group ?? "default"} group`),
        row(
          "Agent",
          detail.agent_id === null
            ? "none"
            : h("a", { href: consolePath("account", { id: String(detail.agent_id) }) }, `#${detail.agent_id}`)
        ),
        row(
          "Referred by",
          detail.referred_by === null
            ? "none"
            : h("a", { href: consolePath("account", { id: String(detail.referred_by) }) }, `#${detail.referred_by}`)
        ),
        row("Referral code", detail.referral_code),
        row("Since", when(detail.created_at))
      ),
      h(
        "p",
        { class: "actions" },
        h("a", { href: `${consolePath("money")}?account=${id}`, class: "button secondary" }, "Fund or adjust"),
        h("a", { href: `${consolePath("orders")}?account_id=${id}`, class: "button secondary" }, "Orders"),
        h("a", { href: `${consolePath("actions")}?account_id=${id}`, class: "button secondary" }, "Actions")
      ),
      balances(detail.balance),
      settings(detail, groups, reload, life),
      h("h2", null, "API keys"),
      list({
        caption: "Keys by prefix, newest first",
        empty: "No keys.",
        rows: detail.keys,
        columns: [
          { label: "Key", place: "title", cell: (k) => h("code", null, `${k.prefix}…`) },
          { label: "State", place: "badge", cell: (k) => status(k.revoked_at ? "revoked" : "active") },
          { label: "Mode", place: "line", cell: (k) => (k.mode === "test" ? "Test" : "Live") },
          { label: "Created", cell: (k) => when(k.created_at) },
          { label: "Last used", cell: (k) => when(k.last_used_at) },
          { label: "Revoked", cell: (k) => (k.revoked_at ? when(k.revoked_at) : "") }
        ]
      }),
      h("h2", null, "Webhook"),
      h(
        "dl",
        { class: "detail card" },
        row("URL", detail.webhook_url ?? "none (deliveries off)"),
        row("Waiting", count(health?.backlog ?? 0, "event")),
        row("Failing since", when(health?.failing_since)),
        row("Abandoned", count(health?.abandoned ?? 0, "event")),
        row("Last answer", health?.last_status ? `HTTP ${health.last_status} at ${when(health.last_attempt_at)}` : "—")
      ),
      (health?.abandoned ?? 0) > 0
        ? h("p", null, h("a", { href: `${consolePath("webhooks")}?account=${id}` }, "Abandoned events and resend"))
        : null,
      h("h2", null, "Ledger"),
      ledgerList(ledger.entries, {
        caption: "Wallet movements, newest first",
        orderHref: (number) => `${consolePath("orders")}?order_number=${encodeURIComponent(number)}`
      }),
      pager(location.pathname, query, ledger.pagination.current_page, ledger.pagination.last_page)
    )
  }
}
