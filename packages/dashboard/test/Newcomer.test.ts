/**
 * The newcomer of `pnpm start` (the demo, on this machine, without an email server), in
 * Chromium on a phone's screen: from `/`, register, open the verification link from the
 * demo mailbox on the page, sign in, fund the wallet through the payment simulator, buy, and
 * see the order successful; then reset a forgotten password the same way. No step reads the
 * outbox, calls the admin API or runs a command.
 */
import { targets } from "@databundle/core/testing"
import { describe, expect, it, onTestFailed } from "vitest"
import { navigate, seriousViolations, serverAndPhone, signOut } from "./Browser.js"

describe.each(targets)("the newcomer's demo ($name)", (target) => {
  // What `serve --demo` sets: the demo mailbox (the test server listens on 127.0.0.1 without SMTP).
  const env = serverAndPhone(target, { BUNDLES_DEMO_MAILBOX: "1" })

  it("goes from registration to a successful order with the demo mailbox, no terminal", async () => {
    const page = await env.browser.context.newPage()
    const failures: Array<string> = []
    // (The signed-out session check's 401 is logged by the browser as a failed resource: not a failure of the page.)
    page.on("pageerror", (error) => failures.push(error.message))
    page.on(
      "console",
      (message) =>
        message.type() === "error" && !message.text().startsWith("Failed to load resource") &&
        failures.push(message.text())
    )
    onTestFailed(async () => {
      console.log(failures.join("\n"), "\n", await page.locator("main").innerText().catch(() => ""))
    })
    const email = `kojo.${Date.now()}@example.com`
    const password = "correct horse battery"

    await page.goto(`${env.server.origin}/`)
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor()
    await page.getByRole("link", { name: "Create an account" }).click()
    await page.getByRole("heading", { name: "Create an account", level: 1 }).waitFor()
    await page.getByLabel("Name").fill("Kojo Asante")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Phone number").fill("024 765 4321")
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Create account" }).click()
    await page.getByRole("heading", { name: "Almost done: verify your address" }).waitFor()

    // The demo mailbox shows the email just sent, with its link.
    const mailbox = page.getByRole("region", { name: "Demo mailbox" })
    await mailbox.getByRole("heading", { name: "Verify your email address" }).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await mailbox.getByRole("link", { name: "Open the verification link" }).click()
    await page.getByText("Your email is verified").waitFor()
    expect(page.url()).not.toContain("token")

    await page.getByRole("link", { name: "Sign in" }).first().click()
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Home", level: 1 }).waitFor()

    // Fund through the payment simulator.
    await navigate(page, "Fund")
    await page.getByRole("heading", { name: "Fund your wallet", level: 1 }).waitFor()
    await page.getByLabel("Pay with").selectOption("mtn_momo")
    await page.getByLabel("Amount (GH₵)").fill("40")
    await page.getByLabel("Mobile money number").fill("0247654321")
    await page.getByRole("button", { name: "Pay" }).click()
    await page.getByText(/succeeded: GH₵ 40\.00 added/).waitFor({ timeout: 30_000 })

    // Buy, and see the order successful.
    await navigate(page, "Buy")
    await page.getByRole("heading", { name: "Buy a bundle", level: 1 }).waitFor()
    await page.getByLabel("Network").selectOption({ label: "MTN" })
    await page.getByLabel("Phone number").fill("024 765 4321")
    await page.getByRole("button", { name: "Buy" }).click()
    await page.getByTestId("order-status").getByText("successful").waitFor({ timeout: 60_000 })

    // A forgotten password: the reset link comes through the demo mailbox too.
    await signOut(page)
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor()
    await page.getByRole("link", { name: "Forgot your password?" }).click()
    await page.getByLabel("Email").fill(email)
    await page.getByRole("button", { name: "Email me a reset link" }).click()
    await page.getByRole("region", { name: "Demo mailbox" }).getByRole("link", { name: "Open the reset link" })
      .click()
    await page.getByRole("textbox", { name: "New password" }).fill("another long password")
    await page.getByRole("button", { name: "Set the new password" }).click()
    await page.getByText(/Sign in with the new password/).waitFor()
    await page.getByRole("link", { name: "Sign in" }).first().click()
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill("another long password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Home", level: 1 }).waitFor()
    expect(failures).toEqual([])
  })
})
