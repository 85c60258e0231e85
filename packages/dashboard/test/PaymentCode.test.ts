/**
 * A payment whose wallet sends the payer a one-time code, in Chromium on a phone's screen,
 * through the payment simulator (a payer number ending 1234 asks for the code 123456): the
 * fund page asks for the code, a wrong one shows the gateway's message next to the field and
 * credits nothing, the right one credits the wallet once.
 */
import { targets } from "@databundle/core/testing"
import { describe, expect, it, onTestFailed } from "vitest"
import { navigate, seriousViolations, serverAndPhone } from "./Browser.js"

describe.each(targets)("a payment that needs the payer's code ($name)", (target) => {
  const env = serverAndPhone(target, { BUNDLES_DEMO_MAILBOX: "1" })

  it("asks for the code, shows a wrong one's message by the field, credits once", async () => {
    const page = await env.browser.context.newPage()
    const failures: Array<string> = []
    page.on("pageerror", (error) => failures.push(error.message))
    onTestFailed(async () => {
      console.log(failures.join("\n"), "\n", await page.locator("main").innerText().catch(() => ""))
    })
    const email = `ama.${Date.now()}@example.com`
    const password = "correct horse battery"

    await page.goto(`${env.server.origin}/`)
    await page.getByRole("link", { name: "Create an account" }).click()
    await page.getByLabel("Name").fill("Ama Serwaa")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Phone number").fill("020 123 1234")
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Create account" }).click()
    const mailbox = page.getByRole("region", { name: "Demo mailbox" })
    await mailbox.getByRole("link", { name: "Open the verification link" }).click()
    await page.getByText("Your email is verified").waitFor()
    await page.getByRole("link", { name: "Sign in" }).first().click()
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Home", level: 1 }).waitFor()

    await navigate(page, "Fund")
    await page.getByRole("heading", { name: "Fund your wallet", level: 1 }).waitFor()
    await page.getByLabel("Pay with").selectOption("telecel_cash")
    await page.getByLabel("Amount (GH₵)").fill("15")
    await page.getByLabel("Mobile money number").fill("0201231234")
    await page.getByRole("button", { name: "Pay" }).click()

    const code = page.getByLabel("One-time code", { exact: true })
    await code.waitFor({ timeout: 30_000 })
    await page.getByText(/needs the one-time code sent to 0201231234/).waitFor()
    await page.getByText(/simulated: the code is 123456/).first().waitFor()
    expect(await seriousViolations(page)).toEqual([])

    // A wrong code: the message next to the field, the input marked invalid, nothing credited.
    await code.fill("654321")
    await page.getByRole("button", { name: "Confirm payment" }).click()
    await page.getByText(/The code is not correct/).waitFor()
    expect(await code.getAttribute("aria-invalid")).toBe("true")
    const describedBy = (await code.getAttribute("aria-describedby"))!.split(" ")
    const slot = page.locator(`[id="${describedBy.at(-1)}"]`)
    expect(await slot.innerText()).toContain("The code is not correct")

    // The right code: credited once.
    await code.fill("123456")
    await page.getByRole("button", { name: "Confirm payment" }).click()
    await page.getByText(/succeeded: GH₵ 15\.00 added/).waitFor({ timeout: 30_000 })
    await navigate(page, "Wallet")
    await page.getByRole("cell", { name: /^Funding/ }).first().waitFor()
    expect(await page.getByRole("cell", { name: /^Funding/ }).count()).toBe(1)
    expect(failures).toEqual([])
  })
})
