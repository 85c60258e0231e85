/**
 * The referral programme in Chromium on a phone's screen: a newcomer follows a holder's
 * referral link (`/?ref=CODE`), registers with the code already filled in, and buys; the
 * referrer then sees the account it referred and what it earned on its wallet page, and moves
 * the earnings to its main wallet with the page's button.
 */
import type { Account } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { describe, expect, it, onTestFailed } from "vitest"
import { navigate, screenshot, scriptErrors, serverAndPhone, signOut } from "./Browser.js"
import { admin, holder } from "./Seed.js"

describe.each(targets)("a referral link ($name)", (target) => {
  const env = serverAndPhone(target)

  it("registers the newcomer under the referrer, whose wallet page shows what it earned and moves it", async () => {
    const page = await env.browser.context.newPage()
    const errors = scriptErrors(page)
    onTestFailed(async () => {
      console.log(errors.join("\n"), "\n", await page.locator("main").innerText().catch(() => ""))
    })
    const referrer = await holder(env.server, "Abena Referrer", "0244000001")
    await admin(env.server, "PUT", "/commissions", { referral_percent: 2 })
    const { referral_code: code } = await admin(env.server, "GET", `/accounts/${referrer.accountId}`)

    const email = `yaw.${Date.now()}@example.com`
    const password = "correct horse battery"
    await page.goto(`${env.server.origin}/?ref=${code}`)
    await page.getByRole("heading", { name: "Create an account", level: 1 }).waitFor()
    expect(await page.getByLabel("Referral code (optional)").inputValue()).toBe(code)
    await page.getByLabel("Name").fill("Yaw Newcomer")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Phone number").fill("024 765 4399")
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Create account" }).click()
    await page.getByRole("heading", { name: "Almost done: verify your address" }).waitFor()
    // The emailed link names the configured base URL; its page is in the fragment.
    await page.goto(`${env.server.origin}/${new URL(await env.server.emailedLink(email, "verify-email")).hash}`)
    await page.getByText("Your email is verified").waitFor()
    await page.getByRole("link", { name: "Sign in" }).first().click()
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Home", level: 1 }).waitFor()

    // Registered under the referrer; funded by the operator, then a purchase.
    const session = await page.evaluate(async () => (await fetch("/dashboard/v1/session")).json())
    const newcomer = session.account.id as Account.AccountId
    expect((await admin(env.server, "GET", `/accounts/${newcomer}`)).referred_by).toBe(referrer.accountId)
    await env.server.fund(newcomer, 2_000n)
    await navigate(page, "Buy")
    await page.getByRole("heading", { name: "Buy a bundle", level: 1 }).waitFor()
    await page.getByLabel("Network").selectOption({ label: "MTN" })
    await page.getByLabel("Phone number").fill("024 765 4399")
    await page.getByRole("button", { name: "Buy" }).click()
    await page.getByTestId("order-status").getByText("successful").waitFor({ timeout: 60_000 })
    const earned = (await admin(env.server, "GET", `/accounts/${referrer.accountId}`)).balance.referral as number
    expect(earned).toBeGreaterThan(0)

    // The referrer's wallet page: its code and link, the account it referred with what it earned.
    await signOut(page)
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor()
    await page.getByLabel("Email").fill(referrer.email)
    await page.getByLabel("Password").fill(referrer.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Home", level: 1 }).waitFor()
    await navigate(page, "Wallet")
    await page.getByRole("heading", { name: "Earnings" }).waitFor()
    expect(await page.getByTestId("referral-code").innerText()).toBe(code)
    expect(await page.getByTestId("referral-link").innerText()).toBe(`${env.server.origin}/?ref=${code}`)
    const referred = page.getByTestId("referred")
    await referred.getByText("Yaw Newcomer").waitFor()
    expect(await referred.innerText()).toContain(earned.toFixed(2))
    await screenshot(page, "wallet-earnings-phone")

    // Moved to main with the button: the referral wallet empties into main.
    await page.getByLabel("Move from").selectOption("referral")
    await page.getByLabel("Amount (GHS)").fill(earned.toFixed(2))
    await page.getByRole("button", { name: "Move to main wallet" }).click()
    const balances = async () => (await admin(env.server, "GET", `/accounts/${referrer.accountId}`)).balance
    for (let i = 0; i < 50 && (await balances()).referral !== 0; i++) await page.waitForTimeout(100)
    expect(await balances()).toEqual({ main: earned, referral: 0, agent: 0 })
    await page.getByText("Commissions you earn arrive in your referral and agent wallets.").waitFor()
    expect((await admin(env.server, "GET", "/audit")).ok).toBe(true)
    expect(errors).toEqual([])
  })
})
