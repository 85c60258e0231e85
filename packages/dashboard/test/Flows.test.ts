/**
 * The dashboard end to end in Chromium, on a phone's screen, against the real server on a
 * test database: a newcomer registers, verifies the address from the emailed link, signs in,
 * funds the wallet through the payment simulator (and sees a declined and a pending payment),
 * creates an API key, buys and watches the order turn successful (a double click buys once),
 * uploads a bulk file twice (each row bought once), sets a webhook and sees its delivery
 * (resend, rotate), revokes the key; and another resets a forgotten password.
 * Every signed-in page is checked with axe-core and page changes are measured against the
 * 30 KB budget (the screenshots are Pages.test.ts's).
 */
import { startServer, type TestServer } from "@databundle/client/testing"
import { targets } from "@databundle/core/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest"
import { launch, navigate, PHONE, seriousViolations, signOut, type TestBrowser, transferMeter } from "./Browser.js"
import { receiver } from "./Seed.js"

const KB = 1024

const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { name, level: 1 }).waitFor()

/** Goes to a page through the navigation and checks it with axe-core. */
const visit = async (
  page: Page,
  link: string,
  title: string | RegExp,
  meter?: { reset(): void; read(): { total: number } }
) => {
  meter?.reset()
  await navigate(page, link)
  await heading(page, title)
  await page.waitForLoadState("networkidle")
  if (meter) {
    changes.push(`${link} ${meter.read().total} B`)
    expect(meter.read().total, `page change to ${link}`).toBeLessThan(30 * KB)
  }
  expect(await seriousViolations(page), link).toEqual([])
}

/** The bytes of each page change, printed at the end. */
const changes: Array<string> = []

describe.each(targets)("dashboard flows ($name)", (target) => {
  let server: TestServer
  let browser: TestBrowser
  let hooks: Awaited<ReturnType<typeof receiver>>
  beforeAll(async () => {
    server = await startServer(target)
    browser = await launch(PHONE)
    hooks = await receiver()
  })
  afterAll(async () => {
    hooks?.close()
    await browser?.close()
    await server?.dispose()
  })

  it("takes a newcomer from registration to a successful order, and on to bulk and webhooks", async () => {
    const page = await browser.context.newPage()
    // What the page showed, when a step fails.
    const failures: Array<string> = []
    page.on("console", (message) => message.type() === "error" && failures.push(message.text()))
    page.on(
      "response",
      (response) => response.status() >= 400 && failures.push(`${response.status()} ${response.url()}`)
    )
    onTestFailed(async () => {
      console.log(failures.join("\n"), "\n", await page.locator("main").innerText().catch(() => ""))
    })
    const email = `ama.${Date.now()}@example.com`
    const password = "correct horse battery"

    // Register: the API's field errors show next to their fields first.
    await page.goto(`${server.origin}/register`)
    await heading(page, "Create an account")
    await page.getByLabel("Name").fill("Ama Mensah")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Phone number").fill("12345")
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Create account" }).click()
    const phoneError = page.locator(
      "#" + (await page.getByLabel("Phone number").getAttribute("aria-describedby"))!.split(" ").pop()!
    )
    await expect.poll(() => phoneError.textContent()).not.toBe("")
    expect(await page.getByLabel("Phone number").getAttribute("aria-invalid")).toBe("true")
    await page.getByLabel("Phone number").fill("024 123 4567")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.getByRole("heading", { name: "Almost done: verify your address" }).waitFor()

    // Signing in before verifying is refused with the reason.
    await page.goto(`${server.origin}/sign-in`)
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("alert").filter({ hasText: /verif/i }).waitFor()

    // The emailed link verifies the address; then sign in.
    // (The link names the public URL, unknown to a server on a port chosen at start: opened on this one.)
    const link = new URL(await server.emailedLink(email, "verify-email"))
    await page.goto(`${server.origin}${link.pathname}${link.search}${link.hash}`)
    await page.getByText("Your email is verified").waitFor()
    expect(page.url()).not.toContain("token")
    await page.getByRole("link", { name: "Sign in" }).first().click()
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await heading(page, "Home")
    await expect.poll(() => page.getByText("GH₵ 0.00", { exact: true }).count()).toBe(3)
    expect(await seriousViolations(page)).toEqual([])
    const meter = await transferMeter(page)

    // Fund by mobile money: approved, declined (payer ending 0000), pending then settled (9999).
    await visit(page, "Fund", "Fund your wallet", meter)
    const pay = async (amount: string, payer: string) => {
      await page.getByLabel("Pay with").selectOption("mtn_momo")
      await page.getByLabel("Amount (GH₵)").fill(amount)
      await page.getByLabel("Mobile money number").fill(payer)
      await page.getByRole("button", { name: "Pay" }).click()
    }
    await pay("50", "0241234567")
    await page.getByText(/succeeded: GH₵ 50\.00 added/).waitFor({ timeout: 30_000 })
    await pay("20", "0241230000")
    await page.getByText(/failed: .*Nothing was charged/).waitFor({ timeout: 30_000 })
    await pay("30", "0241239999")
    await page.getByText(/is pending/).waitFor({ timeout: 30_000 })
    await page.getByText(/succeeded: GH₵ 30\.00 added/).waitFor({ timeout: 60_000 })

    // The answer is lost on the way back (the server did take the payment): paying again with
    // the same details sends the same Idempotency-Key, and the server returns that payment.
    await page.route("**/dashboard/v1/payments", async (route) => {
      if (route.request().method() !== "POST") return route.continue()
      await route.fetch()
      await route.abort("connectionreset")
    })
    await pay("10", "0241234567")
    await page.getByRole("alert").getByText(/No answer from the server/).waitFor()
    await page.unroute("**/dashboard/v1/payments")
    await page.getByRole("button", { name: "Pay" }).click()
    await page.getByText(/succeeded: GH₵ 10\.00 added/).waitFor({ timeout: 30_000 })
    const payments: any = await page.evaluate(async () =>
      (await fetch("/dashboard/v1/payments?per_page=50", { headers: { accept: "application/json" } })).json()
    )
    expect(payments.payments.filter((p: any) => p.amount === 10)).toHaveLength(1)
    await heading(page, "Fund your wallet")

    // An API key, shown once.
    await visit(page, "API keys", "API keys", meter)
    await page.getByLabel("Key name").fill("till 2")
    await page.getByRole("button", { name: "Create key" }).click()
    const key = (await page.getByTestId("new-key").textContent())!
    expect(key.length).toBeGreaterThan(20)
    await page.getByRole("button", { name: "Copy key" }).waitFor()
    await page.getByTestId("keys").getByText("till 2", { exact: true }).waitFor()
    // The list shows the key's prefix, never the key.
    const prefix = (await page.getByTestId("keys").locator("code").first().textContent())!.replace("…", "")
    expect(key.startsWith(prefix)).toBe(true)
    expect(await page.locator("code", { hasText: key }).count()).toBe(1)
    const balance = await fetch(`${server.baseUrl}/balance`, {
      headers: { "x-api-key": key, accept: "application/json" }
    })
    expect(balance.status).toBe(200)
    // A test key: its own wallet of play money, the mode shown in the list.
    await page.getByLabel("Key name").fill("sandbox")
    await page.getByLabel("Mode").selectOption("test")
    await page.getByRole("button", { name: "Create key" }).click()
    await page.getByRole("heading", { name: "Your new test key" }).waitFor()
    const testKey = (await page.getByTestId("new-key").textContent())!
    expect(testKey.startsWith("dbk_test_")).toBe(true)
    await page.getByTestId("keys").getByRole("row").filter({ hasText: "sandbox" }).getByText("Test", { exact: true })
      .waitFor()
    const testBalance = await fetch(`${server.baseUrl}/balance`, {
      headers: { "x-api-key": testKey, accept: "application/json" }
    })
    expect((await testBalance.json()).balance.main).toBe(1000)

    // Buy: a number of another operator is flagged; a double click buys once; the order turns successful.
    await visit(page, "Buy", "Buy a bundle", meter)
    await page.getByLabel("Network").selectOption({ label: "MTN" })
    await page.getByLabel("Phone number").fill("020 111 9999")
    await page.getByText(/The prefix of 0201119999 \(020\) belongs to Telecel, but MTN .* is on the MTN network/)
      .waitFor()
    await page.getByLabel("Phone number").fill("028 111 9999")
    await page.getByText(/The prefix of 0281119999 \(028\) belongs to no Ghana mobile network we know/).waitFor()
    await page.getByLabel("Phone number").fill("024 111 9999")
    await expect.poll(() => page.locator("#network-warning").isHidden()).toBe(true)
    await page.getByRole("button", { name: "Buy" }).dblclick()
    await page.getByTestId("order-status").getByText("successful").waitFor({ timeout: 60_000 })

    // Bulk: the file checked, its total confirmed, then bought; the same file again buys nothing.
    const csv = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bulk-")), "november.csv")
    const bundleId = await page.getByLabel("Bundle", { exact: true }).inputValue()
    fs.writeFileSync(csv, `bundle_id,phone_number\n${bundleId},0241112222\n${bundleId},0541113333\n`)
    await visit(page, "Bulk", "Bulk purchase", meter)
    await page.getByLabel("CSV file").setInputFiles(csv)
    await page.getByRole("button", { name: "Check the file" }).click()
    await page.getByRole("button", { name: /^Buy 2 bundles for GH₵/ }).click()
    await page.getByTestId("bulk-summary").getByText("2 rows: 2 bought now").waitFor({ timeout: 60_000 })
    const download = page.waitForEvent("download")
    await page.getByRole("button", { name: "Download results (CSV)" }).click()
    const results = fs.readFileSync((await (await download).path())!, "utf8")
    expect(results.split("\r\n")[0]).toBe(
      "row,bundle_id,phone_number,reference,order_number,status,amount,bought,error"
    )
    expect(results.split("\r\n")[1]).toMatch(
      /^2,\d+,0241112222,b:november:[0-9a-f]{32},ORD-\w+,successful,\d+\.\d\d,now,$/
    )
    await page.getByLabel("CSV file").setInputFiles(csv)
    await page.getByRole("button", { name: "Check the file" }).click()
    await page.getByTestId("bulk-review").getByText(/Every row of this batch was bought before/).waitFor()

    // Orders: one order per purchase (the double click and the second upload bought nothing).
    await visit(page, "Orders", "Orders", meter)
    await page.getByText("3 orders", { exact: true }).waitFor()
    await page.getByRole("link", { name: /^ORD/ }).first().click()
    await heading(page, /^Order /)
    expect(await seriousViolations(page)).toEqual([])

    // The wallet: 80 paid in, three orders paid out, each movement named.
    await visit(page, "Wallet", "Wallet", meter)
    await page.getByRole("cell", { name: /^Funding/ }).first().waitFor()
    await page.getByRole("cell", { name: /^Order/ }).first().waitFor()

    // Webhooks: set the URL, send a test event, see it delivered; reveal the secret.
    await visit(page, "Webhooks", "Webhooks", meter)
    await page.getByLabel("Webhook URL").fill(hooks.url)
    await page.getByRole("button", { name: "Save URL" }).click()
    await page.getByText("Saved.").waitFor()
    await page.getByRole("button", { name: "Send test event" }).click()
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh" }).click()
      return page.getByTestId("deliveries").getByText("delivered").count()
    }, { timeout: 30_000 }).toBeGreaterThan(0)
    expect(hooks.received.length).toBeGreaterThan(0)
    await page.getByRole("button", { name: "Reveal secret" }).click()
    await page.locator("code.secret").waitFor()
    const secret = await page.locator("code.secret").textContent()
    expect(await seriousViolations(page)).toEqual([])
    // Resend delivers the same event again; rotating gives another secret.
    const before = hooks.received.length
    await page.getByRole("button", { name: /^Resend order\.successful/ }).first().click()
    await expect.poll(() => hooks.received.length, { timeout: 30_000 }).toBeGreaterThan(before)
    page.once("dialog", (dialog) => void dialog.accept())
    await page.getByRole("button", { name: "Rotate secret" }).click()
    await page.getByText(/New signing secret/).waitFor()
    expect(await page.locator("code.secret").textContent()).not.toBe(secret)

    // Revoking the key stops it at once.
    await visit(page, "API keys", "API keys", meter)
    page.once("dialog", (dialog) => void dialog.accept())
    await page.getByRole("button", { name: "Revoke till 2" }).click()
    await page.getByTestId("keys").getByRole("row").filter({ hasText: "till 2" }).getByText("revoked").first().waitFor()
    const refused = await fetch(`${server.baseUrl}/balance`, {
      headers: { "x-api-key": key, accept: "application/json" }
    })
    expect(refused.status).toBe(401)

    // Home lists what was bought; signing out ends the session.
    await visit(page, "Home", "Home", meter)
    await signOut(page)
    await heading(page, "Sign in")
    await page.goto(`${server.origin}/orders`)
    await heading(page, "Sign in")
    console.log(`page changes (${target.name}): ${changes.splice(0).join(", ")}`)
    await page.close()
  })

  it("resets a forgotten password from the emailed link", async () => {
    const page = await browser.context.newPage()
    const email = `kofi.${Date.now()}@example.com`
    await page.goto(`${server.origin}/register`)
    await page.getByLabel("Name").fill("Kofi Boateng")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Phone number").fill("+233 54 123 4567")
    await page.getByLabel("Password").fill("first password here")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.getByRole("heading", { name: "Almost done: verify your address" }).waitFor()
    const verify = new URL(await server.emailedLink(email, "verify-email"))
    await page.goto(`${server.origin}/${verify.hash}`)
    await page.getByText("Your email is verified").waitFor()

    await page.goto(`${server.origin}/sign-in`)
    await page.getByRole("link", { name: "Forgot your password?" }).click()
    await heading(page, "Reset your password")
    await page.getByLabel("Email").fill(email)
    await page.getByRole("button", { name: "Email me a reset link" }).click()
    await page.locator(".form-message.ok").waitFor()
    const reset = new URL(await server.emailedLink(email, "reset-password"))
    await page.goto(`${server.origin}/${reset.hash}`)
    await heading(page, "Reset your password")
    expect(page.url()).not.toContain("token")
    await page.getByLabel("New password", { exact: true }).fill("short")
    await page.getByRole("button", { name: "Set the new password" }).click()
    expect(await page.getByLabel("New password", { exact: true }).getAttribute("aria-invalid")).toBe("true")
    await page.getByLabel("New password", { exact: true }).fill("second password here")
    await page.getByRole("button", { name: "Set the new password" }).click()
    await page.locator(".form-message.ok").waitFor()

    await page.goto(`${server.origin}/sign-in`)
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill("second password here")
    await page.getByRole("button", { name: "Sign in" }).click()
    await heading(page, "Home")
    await page.close()
  })
})
