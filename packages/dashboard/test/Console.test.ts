/**
 * The operator's console end to end in Chromium, on a phone's screen, against the real
 * server on a test database. An operator (created through the admin API, as
 * `bundles-server admin operators create` does) signs in with their own password, approves a
 * holder's manual funding request with a double click (the wallet is credited once), resolves
 * a pending order as failed (refunded once, the reason in the ledger note), suspends an
 * account (its API key then gets 401), imports a catalogue change after its preview, and finds
 * each of those changes in the action log under their name. Every destructive change asks
 * first (the test accepts each question). Every page is checked with axe-core and against the
 * 30 KB page-change budget (the screenshots are Pages.test.ts's).
 */
import { startServer, type TestServer } from "@databundle/client/testing"
import { targets } from "@databundle/core/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, onTestFailed, onTestFinished } from "vitest"
import {
  launch,
  navigate,
  openFilters,
  PHONE,
  seriousViolations,
  signOut,
  type TestBrowser,
  transferMeter
} from "./Browser.js"
import { admin, holder, pay, receiver } from "./Seed.js"

const KB = 1024

/**
 * An account holder who registered in the dashboard and asked for a manual transfer of
 * `amount` cedis: their account id and the payment's number.
 */
const holderWithTransfer = async (server: TestServer, amount: number) => {
  const efua = await holder(server, "Efua Owusu", "0241234567")
  const { payment } = await pay(efua, { method: "manual_transfer", amount, note: "Bank transfer, ref GCB-7731" })
  return { accountId: efua.accountId, paymentNumber: payment.payment_number as string }
}

const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { name, level: 1 }).waitFor()

/** The bytes of each page change, printed at the end. */
const changes: Array<string> = []

/** Goes to a console page through its navigation, within the budget, with no serious axe violation. */
const visit = async (
  page: Page,
  meter: { reset(): void; read(): { total: number } },
  link: string,
  title: string | RegExp
) => {
  meter.reset()
  await navigate(page, link)
  await heading(page, title)
  await page.waitForLoadState("networkidle")
  changes.push(`${link} ${meter.read().total} B`)
  expect(meter.read().total, `page change to ${link}`).toBeLessThan(30 * KB)
  expect(await seriousViolations(page), link).toEqual([])
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${link} width`).toBeLessThanOrEqual(
    page.viewportSize()!.width
  )
}

describe.each(targets)("operator console ($name)", (target) => {
  let server: TestServer
  let browser: TestBrowser
  beforeAll(async () => {
    // Orders to numbers ending 9999 stay pending for an hour: the operator resolves one.
    server = await startServer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "3600" })
    browser = await launch(PHONE)
  })
  afterAll(async () => {
    await browser?.close()
    await server?.dispose()
  })

  it("runs a day of business: funding, a stuck order, a suspension, the catalogue, the log", async () => {
    const email = `kwame.${Date.now()}@example.com`
    const password = "operator's own password"
    // An owner: they manage the other operators too.
    await admin(server, "POST", "/operators", { email, name: "Kwame Asante", password, role: "owner" })

    // What the operator will act on: a holder's manual transfer, and a pending order of another account.
    const holder = await holderWithTransfer(server, 25)
    const buyer = await server.account({ funds: 10_000n })
    // The buyer's webhook endpoint fails until told otherwise.
    let hookStatus = 500
    const hooks = await receiver(() => hookStatus)
    onTestFinished(() => {
      hooks.close()
    })
    await server.setWebhook(buyer.id, hooks.url)
    const bundle = [...server.bundles.values()].find((b) => b.isActive)!
    const placed = await fetch(`${server.baseUrl}/orders`, {
      method: "POST",
      headers: { "x-api-key": buyer.key, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ bundle_id: bundle.id, phone_number: "0241119999", reference: `stuck-${Date.now()}` })
    })
    const order: any = await placed.json()
    expect(placed.status, JSON.stringify(order)).toBe(200)
    const orderNumber: string = order.order.order_number
    const paid: number = order.order.amount_paid

    const page = await browser.context.newPage()
    // Every destructive change asks first; here the operator means each one.
    const asked: Array<string> = []
    page.on("dialog", (dialog) => {
      asked.push(dialog.message())
      void dialog.accept()
    })
    const failures: Array<string> = []
    page.on("console", (message) => message.type() === "error" && failures.push(message.text()))
    page.on("response", (r) => r.status() >= 400 && failures.push(`${r.status()} ${r.request().method()} ${r.url()}`))
    const inflight = new Set<string>()
    page.on("request", (r) => inflight.add(r.url()))
    page.on("requestfinished", (r) => inflight.delete(r.url()))
    page.on("requestfailed", (r) => inflight.delete(r.url()))
    // The changes the page asked for, by path: a double click must send one.
    const sent: Array<string> = []
    page.on("request", (r) => r.method() !== "GET" && sent.push(new URL(r.url()).pathname))
    onTestFailed(async () => {
      console.log("in flight:", [...inflight].join(" "))
      console.log(failures.join("\n"), "\n", await page.locator("main").innerText().catch(() => ""))
    })

    // A console page without an operator session asks for the operator's sign-in, not the holder's.
    await page.goto(`${server.origin}/console/money`)
    await heading(page, "Operator sign in")
    expect(new URL(page.url()).pathname).toBe("/console/sign-in")
    expect(await seriousViolations(page)).toEqual([])
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill("not the password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("alert").filter({ hasText: /./ }).first().waitFor()
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    // Back to the page that asked for the sign-in.
    await heading(page, "Money")
    const meter = await transferMeter(page)

    // The operator's cookie is no session on the account holder's API.
    const holderSession = await page.evaluate(async () => {
      const answer = await fetch("/dashboard/v1/session")
      await answer.text()
      return answer.status
    })
    expect(holderSession).toBe(401)

    // Approve the manual transfer with a double click: one credit.
    const row = page.getByTestId("funding-requests").getByRole("row").filter({ hasText: holder.paymentNumber })
    // The request shows who asked, by name.
    await row.getByRole("link", { name: `Efua Owusu (#${holder.accountId})` }).waitFor()
    await row.getByRole("button", { name: `Approve ${holder.paymentNumber}` }).dblclick()
    await row.getByText(/Approved: GH₵ 25\.00 credited to Efua Owusu/).waitFor()
    expect(sent.filter((p) => p.endsWith(`/payments/${holder.paymentNumber}/approve`))).toHaveLength(1)
    const holderLedger = await admin(server, "GET", `/accounts/${holder.accountId}/ledger?wallet=main`)
    expect(holderLedger.entries.filter((e: any) => e.reason === "funding")).toHaveLength(1)
    expect((await admin(server, "GET", `/accounts/${holder.accountId}`)).balance.main).toBe(25)
    const payment = await admin(server, "GET", `/payments/${holder.paymentNumber}`)
    expect(payment.payment.status).toBe("successful")

    // Fund an account with a note: field errors first, then the recorded movement.
    await page.getByLabel("Account number").fill(String(buyer.id))
    await page.getByLabel("Amount (GH₵)").fill("0")
    await page.getByRole("button", { name: "Record" }).click()
    const amountError = page.locator(
      "#" + (await page.getByLabel("Amount (GH₵)").getAttribute("aria-describedby"))!.split(" ").pop()!
    )
    await expect.poll(() => amountError.textContent()).not.toBe("")
    await page.getByLabel("Amount (GH₵)").fill("12.5")
    await page.getByLabel("Note", { exact: true }).fill("Cash at the office")
    await page.getByRole("button", { name: "Record" }).dblclick()
    await page.getByText(/Recorded: GH₵ 12\.50 on the main wallet/).waitFor()
    // The refused zero and the one recorded movement, double click or not.
    expect(sent.filter((p) => p.endsWith(`/accounts/${buyer.id}/wallet/fund`))).toHaveLength(2)
    // The audit, with its result.
    await page.getByRole("button", { name: "Run the audit" }).click()
    await page.getByTestId("audit-result").getByText("The books balance.").waitFor()

    // Resolve the stuck order as failed, with a reason, double-clicked: one refund.
    await visit(page, meter, "Orders", "Orders")
    const pending = page.getByTestId("pending-orders").getByRole("row").filter({ hasText: orderNumber })
    await pending.getByLabel("Outcome").selectOption("failed")
    await pending.getByRole("button", { name: `Resolve ${orderNumber}` }).click()
    // A failure needs its reason, shown next to the field.
    await expect.poll(() => pending.getByLabel("Reason").getAttribute("aria-invalid")).toBe("true")
    await pending.getByLabel("Reason").fill("Upstream never delivered")
    await pending.getByRole("button", { name: `Resolve ${orderNumber}` }).dblclick()
    await pending.getByText(/failed: GH₵ .* refunded/).waitFor()
    expect(sent.filter((p) => p.endsWith(`/orders/${orderNumber}/resolve`))).toHaveLength(1)
    expect(asked).toContain(`Fail ${orderNumber} and refund GH₵ ${paid.toFixed(2)} to account #${buyer.id}?`)
    const refunds = (await server.orderEntries(buyer.id)).filter((e) => e.reason === "refund")
    expect(refunds).toHaveLength(1)
    expect(refunds[0]!.note).toContain("Upstream never delivered")
    expect(Number(refunds[0]!.amount) / 100).toBe(paid)
    // Searching by the number finds it, failed now.
    await openFilters(page)
    await page.getByLabel("Order number").fill(orderNumber)
    await page.getByRole("button", { name: "Apply filters" }).click()
    await page.getByRole("cell", { name: "failed" }).waitFor()
    // By age: the order is seconds old, so none failed more than a day ago.
    await openFilters(page)
    await page.getByLabel("Order number").fill("")
    await page.getByLabel("Status").selectOption("failed")
    await page.getByLabel("Older than (minutes)").fill("1440")
    await page.getByRole("button", { name: "Apply filters" }).click()
    await page.getByText("0 orders", { exact: true }).waitFor()

    // Suspend the buyer's account: its API key is refused from then on.
    await visit(page, meter, "Accounts", "Accounts")
    await openFilters(page)
    await page.getByLabel("Search").fill(String(buyer.id))
    await page.getByRole("button", { name: "Apply filters" }).click()
    await page.getByTestId("accounts").getByRole("link", { name: new RegExp(`\\(#${buyer.id}\\)$`) }).click()
    await heading(page, new RegExp(`\\(#${buyer.id}\\)$`))
    expect(await seriousViolations(page)).toEqual([])
    await page.getByTestId("ledger").getByText(/Upstream never delivered/).waitFor()
    await page.getByRole("button", { name: "Suspend the account" }).click()
    await page.getByText(/Suspended: its API keys are refused/).waitFor()
    await page.getByRole("button", { name: "Reactivate the account" }).waitFor()
    const refused = await fetch(`${server.baseUrl}/balance`, { headers: { "x-api-key": buyer.key } })
    expect(refused.status).toBe(401)

    // Import a catalogue change after its preview.
    const catalog = await admin(server, "GET", "/catalog")
    delete catalog.success
    const changed = catalog.networks[0].bundles[0]
    changed.price = Math.round((changed.price + 1) * 100) / 100
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "catalog-")), "catalog.json")
    fs.writeFileSync(file, JSON.stringify(catalog))
    await visit(page, meter, "Catalogue", "Catalogue")
    expect(await page.getByRole("button", { name: "Apply the import" }).isDisabled()).toBe(true)
    await page.getByLabel("Catalogue file", { exact: true }).setInputFiles(file)
    await page.getByRole("button", { name: "Preview the changes" }).click()
    await page.getByTestId("import-preview").getByRole("cell", { name: changed.key }).waitFor()
    // Nothing changed yet.
    const before = await admin(server, "GET", "/catalog")
    expect(before.networks[0].bundles.find((b: any) => b.key === changed.key).price).not.toBe(changed.price)
    await page.getByRole("button", { name: "Apply the import" }).click()
    // The result says what changed: the bundle, by its key.
    await page.getByTestId("import-result").getByText("Imported: the catalogue changed as follows.").waitFor()
    await page.getByTestId("import-result").getByRole("cell", { name: changed.key }).waitFor()
    const after = await admin(server, "GET", "/catalog")
    expect(after.networks[0].bundles.find((b: any) => b.key === changed.key).price).toBe(changed.price)
    // The list shows the new price; a bundle is deactivated on its own, and no longer sold.
    const network = catalog.networks[0]
    const second = network.bundles.find((b: any) => b.active && b.key !== changed.key)
    const section = page.getByRole("region", { name: network.name, exact: true })
    // A network's bundles are folded on a phone.
    await section.getByText(/bundles? and their prices/).click()
    await section.getByRole("cell", { name: new RegExp(changed.price.toFixed(2)) }).first().waitFor()
    await section.getByRole("button", { name: `Deactivate ${network.name} ${second.size}` }).click()
    await section.getByRole("button", { name: `Activate ${network.name} ${second.size}` }).waitFor()
    expect(asked).toContain(
      `Deactivate ${network.name} ${second.size}? It cannot be bought until it is activated again.`
    )
    // (Polled: once, on Postgres, the list read right after the answer still showed it active.)
    await expect.poll(async () => {
      const listed = await admin(server, "GET", "/networks")
      return listed.networks.flatMap((n: any) => n.bundles).find((b: any) => b.key === second.key).active
    }, { timeout: 5_000 }).toBe(false)

    // Every change is in the action log, under the operator's name.
    await visit(page, meter, "Action log", "Action log")
    const log = page.getByTestId("actions")
    for (
      const [action, target] of [
        ["payment.approve", holder.paymentNumber],
        ["wallet.fund", String(buyer.id)],
        ["order.resolve", orderNumber],
        ["account.update", String(buyer.id)],
        ["catalog.import", undefined]
      ] as const
    ) {
      const rows = log.getByRole("row").filter({ hasText: action })
      await (target === undefined ? rows : rows.filter({ hasText: target })).first().waitFor()
      expect(await rows.first().textContent()).toContain(email)
    }
    // One approval and one resolve, however many clicks.
    expect(await log.getByRole("row").filter({ hasText: "payment.approve" }).count()).toBe(1)
    expect(await log.getByRole("row").filter({ hasText: "order.resolve" }).count()).toBe(1)

    // The overview's charts and the webhooks page.
    await visit(page, meter, "Overview", "Overview")
    expect(await page.locator("figure.chart svg[role=img]").count()).toBeGreaterThanOrEqual(3)
    // Webhooks: the buyer's failing endpoint; its events abandoned (no URL), then resent once it works.
    await visit(page, meter, "Webhooks", "Webhooks")
    const endpoint = page.getByTestId("endpoints").getByRole("row").filter({ hasText: `(#${buyer.id})` })
    await endpoint.getByText(/HTTP 500/).waitFor({ timeout: 30_000 })
    await admin(server, "PATCH", `/accounts/${buyer.id}`, { webhook_url: null })
    await expect.poll(async () => {
      const health = await admin(server, "GET", "/webhooks")
      return health.endpoints.find((e: any) => e.account_id === buyer.id)?.abandoned ?? 0
    }, { timeout: 60_000, interval: 1000 }).toBeGreaterThan(0)
    hookStatus = 200
    await admin(server, "PATCH", `/accounts/${buyer.id}`, { webhook_url: hooks.url })
    const delivered = hooks.received.length
    await navigate(page, "Webhooks")
    await page.getByTestId("endpoints").getByRole("link", { name: /\(show\)/ }).first().click()
    await page.getByRole("heading", { name: `Abandoned events of account #${buyer.id}` }).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole("button", { name: /^Resend / }).first().click()
    await page.getByText(/Queued again/).waitFor()
    await expect.poll(() => hooks.received.length, { timeout: 30_000 }).toBeGreaterThan(delivered)

    // Another operator added from the console signs in elsewhere; disabling them ends that session.
    await visit(page, meter, "Operators", "Operators")
    await page.getByText("You are an owner").waitFor()
    const colleague = `abena.${Date.now()}@example.com`
    await page.getByLabel("Name").fill("Abena Osei")
    await page.getByLabel("Email").fill(colleague)
    await page.getByLabel("First password").fill("short")
    await page.getByRole("button", { name: "Add operator" }).click()
    await expect.poll(() => page.getByLabel("First password").getAttribute("aria-invalid")).toBe("true")
    await page.getByLabel("First password").fill("abena's first password")
    await page.getByRole("button", { name: "Add operator" }).click()
    const operatorsTable = page.getByTestId("operators")
    await operatorsTable.getByRole("cell", { name: colleague, exact: true }).waitFor()
    const colleagueRow = operatorsTable.getByRole("row").filter({ hasText: colleague })
    await colleagueRow.getByTestId("role").getByText("Operator", { exact: true }).waitFor()
    await page.getByRole("button", { name: `Make owner: ${colleague}` }).click()
    await page.getByText("Now an owner.").waitFor()
    await colleagueRow.getByTestId("role").getByText("Owner", { exact: true }).waitFor()
    await page.getByRole("button", { name: `Make operator: ${colleague}` }).click()
    await colleagueRow.getByTestId("role").getByText("Operator", { exact: true }).waitFor()
    const other = await fetch(`${server.origin}/console/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ email: colleague, password: "abena's first password" })
    })
    expect(other.status).toBe(200)
    const otherCookie = other.headers.get("set-cookie")!.split(";")[0]!
    await page.getByRole("button", { name: `Disable ${colleague}` }).click()
    await page.getByText(/Disabled: signed out everywhere/).waitFor()
    const ended = await fetch(`${server.origin}/console/v1/session`, { headers: { cookie: otherCookie } })
    expect(ended.status).toBe(401)

    // The operator changes their own password: a wrong current one is refused at its field; then
    // their session elsewhere ends and this one goes on.
    const elsewhere = await fetch(`${server.origin}/console/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ email, password })
    })
    expect(elsewhere.status).toBe(200)
    const elsewhereCookie = elsewhere.headers.get("set-cookie")!.split(";")[0]!
    const renewed = `${password} renewed`
    await page.getByLabel("Current password", { exact: true }).fill("not my password")
    await page.getByLabel("New password", { exact: true }).fill(renewed)
    await page.getByRole("button", { name: "Change password" }).click()
    await expect.poll(() => page.getByLabel("Current password", { exact: true }).getAttribute("aria-invalid"))
      .toBe("true")
    await page.getByLabel("Current password", { exact: true }).fill(password)
    await page.getByLabel("New password", { exact: true }).fill(renewed)
    await page.getByRole("button", { name: "Change password" }).click()
    await page.getByText(/Password changed; your other sessions were ended/).waitFor()
    const elsewhereNow = await fetch(`${server.origin}/console/v1/session`, { headers: { cookie: elsewhereCookie } })
    expect(elsewhereNow.status).toBe(401)
    await visit(page, meter, "Operators", "Operators")
    // An operator cannot disable themselves: their own row has no button for it.
    expect(await page.getByRole("button", { name: `Disable ${email}` }).count()).toBe(0)

    // Signing out ends the operator's session.
    await signOut(page)
    await heading(page, "Operator sign in")
    await page.goto(`${server.origin}/console/orders`)
    await heading(page, "Operator sign in")
    console.log(`console page changes (${target.name}): ${changes.splice(0).join(", ")}`)
    await page.close()
  })
})
