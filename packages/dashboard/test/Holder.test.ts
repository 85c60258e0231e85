/**
 * The account holder's flows as a newcomer meets them, in Chromium on a phone's screen: a
 * suspended account told so, with what to do; one rule for a typed phone number (spaces
 * accepted, a fixed line refused, one message by the field, no API field names); a purchase
 * the wallet cannot pay told by how much, with the way to fund; the fund form asking only
 * what the method needs; a payment left waiting for its code finished from the list; a bad
 * webhook URL told once; the unverified sign-in told once; the email's fate said truly
 * without SMTP; leaving a page stops its polling; the test side of the account.
 */
import { targets } from "@databundle/core/testing"
import type { Page } from "playwright-core"
import { beforeEach, describe, expect, it } from "vitest"
import { navigate, scriptErrors, serverAndPhone, signOut } from "./Browser.js"
import { admin, buy, type Holder, holder, pay } from "./Seed.js"

/** Signs a seeded holder in through the form (whoever was signed in before is forgotten). */
const signIn = async (page: Page, origin: string, who: { email: string; password: string }) => {
  await page.context().clearCookies()
  await page.goto(`${origin}/sign-in`)
  await page.getByLabel("Email").fill(who.email)
  await page.getByLabel("Password").fill(who.password)
  await page.getByRole("button", { name: "Sign in" }).click()
}

const heading = (page: Page, name: string | RegExp) => page.getByRole("heading", { name, level: 1 }).waitFor()

/** How many times a text shows on the page. */
const times = (page: Page, text: string | RegExp) => page.getByText(text).count()

describe.each(targets)("the holder's flows ($name)", (target) => {
  // Orders to numbers ending 9999 and payments from payers ending 9999 stay pending for an hour;
  // every holder signs up from one address (the forms' own limit has its server test).
  const env = serverAndPhone(target, {
    BUNDLES_SIMULATOR_PENDING_SECONDS: "3600",
    BUNDLES_DASHBOARD_LIMITS: "dashboard=100000,access=100000"
  })
  // Each test starts signed out.
  beforeEach(() => env.browser.context.clearCookies())

  /** A new holder, signed in on a new page at home; `before` runs between the seeding and the sign-in. */
  const signedIn = async (name: string, phone = "0241234567", before?: (who: Holder) => Promise<unknown>) => {
    const page = await env.browser.context.newPage()
    const who = await holder(env.server, name, phone)
    await before?.(who)
    await signIn(page, env.server.origin, who)
    await heading(page, "Home")
    return { page, who }
  }

  it("tells a suspended holder so, at sign-in and on an open session, with what to do", async () => {
    const { page, who } = await signedIn("Yaw Darko")
    await admin(env.server, "PATCH", `/accounts/${who.accountId}`, { status: "suspended" })
    // The open session's next page: back to sign-in, told why.
    await navigate(page, "Orders")
    await heading(page, "Sign in")
    await page.getByRole("alert").getByText(/This account is suspended.*Contact them/).waitFor()
    // Signing in again: refused, said plainly, once.
    await page.getByLabel("Email").fill(who.email)
    await page.getByLabel("Password").fill(who.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.locator(".form-message").getByText(/This account is suspended/).waitFor()
    expect(await page.locator(".form-message").getByText(/suspended/).count()).toBe(1)
    await page.close()
  })

  it("reads a typed number by the client's rule everywhere: spaces accepted, a fixed line refused once", async () => {
    const page = await env.browser.context.newPage()
    const errors = scriptErrors(page)
    await page.goto(`${env.server.origin}/register`)
    await page.getByLabel("Name").fill("Esi Amoah")
    await page.getByLabel("Email").fill(`esi.${Date.now()}@example.com`)
    await page.getByLabel("Phone number").fill("030 123 4567")
    await page.getByLabel("Password").fill("correct horse battery")
    await page.getByRole("button", { name: "Create account" }).click()
    const rule = "Phone number must be a Ghana mobile number, such as 024 123 4567"
    await page.getByText(rule).waitFor()
    expect(await times(page, /must be a Ghana mobile number/)).toBe(1)

    const who = await holder(env.server, "Esi Amoah", "0241234567")
    await signIn(page, env.server.origin, who)
    await heading(page, "Home")
    await navigate(page, "Fund")
    await page.getByLabel("Pay with").selectOption("mtn_momo")
    await page.getByLabel("Amount (GH₵)").fill("12")
    await page.getByLabel("Mobile money number").fill("0301234567")
    await page.getByRole("button", { name: "Pay" }).click()
    await page.getByText("Mobile money number must be a Ghana mobile number, such as 024 123 4567").waitFor()
    expect(await times(page, /must be a Ghana mobile number/)).toBe(1)
    expect(await times(page, /payer_number/)).toBe(0)
    // Written with spaces, as people write it: taken, and sent in the API's form.
    await page.getByLabel("Mobile money number").fill("024 555 0101")
    await page.getByRole("button", { name: "Pay" }).click()
    await page.getByText(/succeeded: GH₵ 12\.00 added/).waitFor({ timeout: 30_000 })
    const { payments } = await who.call("GET", "/payments")
    expect(payments[0].payer_number).toBe("0245550101")

    await navigate(page, "Buy")
    await heading(page, "Buy a bundle")
    await page.getByLabel("Phone number").fill("0301234567")
    await page.getByRole("button", { name: "Buy", exact: true }).click()
    await page.getByText(rule).waitFor()
    expect((await who.call("GET", "/orders")).orders).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it("shows what a purchase costs and what the wallet has, with the way to fund it", async () => {
    const { page } = await signedIn("Kwesi Appiah")
    await navigate(page, "Buy")
    await page.getByLabel("Network").selectOption({ label: "MTN" })
    await page.getByLabel("Phone number").fill("024 111 2233")
    await page.getByRole("button", { name: "Buy", exact: true }).click()
    const refusal = page.getByTestId("not-enough")
    await refusal.getByText(/Not enough money: this costs GH₵ \d+\.\d\d and your main wallet has GH₵ 0\.00/).waitFor()
    await refusal.getByRole("link", { name: "Fund your wallet" }).click()
    await heading(page, "Fund your wallet")
    await page.close()
  })

  it("asks only what the payment method needs, and finishes a payment waiting for its code from the list", async () => {
    // Left waiting for its one-time code (the simulator asks payers ending 1234 for 123456).
    let waiting: any
    const { page } = await signedIn("Adjoa Mensah", "0201231234", async (who) => {
      waiting = (await pay(who, { method: "telecel_cash", amount: 15, payer_number: "0201231234" })).payment
    })
    expect(waiting.awaiting_code).toBe(true)
    await navigate(page, "Fund")
    await page.getByLabel("Pay with").selectOption("manual_transfer")
    await page.getByLabel("Transfer note").waitFor()
    expect(await page.getByLabel("Mobile money number").isVisible()).toBe(false)
    await page.getByTestId("method-instructions").getByText(/quote the payment number/).waitFor()
    await page.getByLabel("Pay with").selectOption("mtn_momo")
    await page.getByLabel("Mobile money number").waitFor()
    expect(await page.getByLabel("Transfer note").isVisible()).toBe(false)
    expect(await page.getByTestId("method-instructions").textContent()).toBe("")

    await page.getByRole("button", { name: `Enter the code for ${waiting.payment_number}` }).click()
    await page.getByLabel("One-time code", { exact: true }).fill("123456")
    await page.getByRole("button", { name: "Confirm payment" }).click()
    await page.getByText(/succeeded: GH₵ 15\.00 added/).waitFor({ timeout: 30_000 })
    await page.close()
  })

  it("says a bad webhook URL once, in words; the unverified sign-in once; no 'we sent' without SMTP", async () => {
    const page = await env.browser.context.newPage()
    await page.goto(`${env.server.origin}/register`)
    const email = `abla.${Date.now()}@example.com`
    await page.getByLabel("Name").fill("Abla Kumi")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Phone number").fill("+233 24 765 4321")
    await page.getByLabel("Password").fill("correct horse battery")
    await page.getByRole("button", { name: "Create account" }).click()
    await page.getByRole("heading", { name: "Almost done: verify your address" }).waitFor()
    // This server has no SMTP: the page says where the link is, never that it was sent.
    await page.getByText(/this server sends no email yet/).waitFor()
    expect(await times(page, /we sent/i)).toBe(0)

    await page.goto(`${env.server.origin}/sign-in`)
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill("correct horse battery")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("alert").getByText(/Verify your email address first/).waitFor()
    expect(await times(page, /verification link/)).toBe(1)

    const who = await holder(env.server, "Abla Kumi", "0247654321")
    await signIn(page, env.server.origin, who)
    await heading(page, "Home")
    await navigate(page, "Webhooks")
    await page.getByLabel("Webhook URL").fill("ftp://example.com/hooks")
    await page.getByRole("button", { name: "Save URL" }).click()
    await page.getByText("Webhook URL must be an http or https URL").waitFor()
    expect(await times(page, /must be/)).toBe(1)
    expect(await times(page, /must be null|more error/)).toBe(0)
    await page.close()
  })

  it("stops a page's polling when the holder leaves it", async () => {
    const { page } = await signedIn("Akosua Frimpong")
    await navigate(page, "Fund")
    await page.getByLabel("Pay with").selectOption("mtn_momo")
    await page.getByLabel("Amount (GH₵)").fill("30")
    await page.getByLabel("Mobile money number").fill("0241239999")
    await page.getByRole("button", { name: "Pay" }).click()
    await page.getByText(/is pending/).waitFor({ timeout: 30_000 })
    const polls: Array<string> = []
    page.on("request", (request) => {
      if (/\/dashboard\/v1\/payments\/PAY-/.test(request.url())) polls.push(request.url())
    })
    await page.waitForTimeout(2500)
    expect(polls.length, "the page follows its pending payment").toBeGreaterThan(0)
    await navigate(page, "Home")
    await heading(page, "Home")
    polls.length = 0
    await page.waitForTimeout(5000)
    expect(polls, "nothing polls once the page is left").toEqual([])
    await page.close()
  })

  it("switches to the test side: its balance and orders, bought with the test wallet, marked as test", async () => {
    const { page, who } = await signedIn(
      "Fiifi Ansah",
      "0241234567",
      (who) => buy(who, env.server.bundle("MTN 1GB").id, "0241112222", "test")
    )
    const menu = page.getByRole("button", { name: "Menu" })
    await menu.click()
    await page.getByRole("button", { name: "Test mode: off" }).click()
    await heading(page, "Home (test mode)")
    await page.getByRole("note").getByText("Test mode:").waitFor()
    await navigate(page, "Buy")
    await heading(page, "Buy a bundle (test mode)")
    await page.getByLabel("Network").selectOption({ label: "MTN" })
    await page.getByLabel("Phone number").fill("024 333 4444")
    await page.getByRole("button", { name: "Buy with test money" }).click()
    await page.getByTestId("order-status").getByText("successful").waitFor({ timeout: 60_000 })
    await page.getByTestId("order-status").getByText("Test", { exact: true }).waitFor()
    await navigate(page, "Orders")
    await heading(page, "Orders (test mode)")
    await page.getByText("2 orders", { exact: true }).waitFor()
    // The live side never saw a thing.
    expect((await who.call("GET", "/orders")).orders).toEqual([])
    expect((await who.call("GET", "/ledger")).balance.main).toBe(0)
    await page.getByRole("button", { name: "Back to live" }).click()
    await heading(page, "Orders")
    await page.getByText("0 orders", { exact: true }).waitFor()
    await signOut(page)
    await page.close()
  })
})
