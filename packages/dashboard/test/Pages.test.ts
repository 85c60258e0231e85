/**
 * Every page of both apps, on a phone (360x640) and a desktop (1280x800), with real data in
 * their lists: a holder who paid in every way (one payment still waiting for the operator,
 * one for its one-time code), bought (successful, failed and pending orders, and a test
 * order), made keys and a webhook; an operator with accounts, a waiting funding request,
 * pending orders, a failing webhook endpoint, the action log and another operator.
 *
 * On every page: nothing needs sideways scrolling on the phone (neither the page nor any
 * element in it), every button and field is at least 44 px tall on the phone, axe-core finds
 * no serious or critical violation, and no script error is logged. With
 * `DASHBOARD_SCREENSHOTS=1` each page is saved at both sizes to docs/dashboard/.
 */
import { startServer, type TestServer } from "@databundle/client/testing"
import { targets } from "@databundle/core/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  DESKTOP,
  launch,
  PHONE,
  screenshot,
  scriptErrors,
  seriousViolations,
  sidewaysScrolling,
  smallTargets,
  type TestBrowser
} from "./Browser.js"
import { admin, buy, type Holder, holder, pay, receiver, until } from "./Seed.js"

const DEVICES = [["phone", PHONE], ["desktop", DESKTOP]] as const

describe.each(targets)("every page of both apps, on a phone and a desktop ($name)", (target) => {
  let server: TestServer
  let browser: TestBrowser
  let ama: Holder
  let hooks: Awaited<ReturnType<typeof receiver>>
  let failing: Awaited<ReturnType<typeof receiver>>
  let orderNumber: string
  let bulkFile: string
  const operator = { email: `kwame.${Date.now()}@example.com`, password: "operator's own password" }
  const shooting = target.name === "pglite"

  beforeAll(async () => {
    // Orders to numbers ending 9999 stay pending for an hour; payers ending 1234 are asked for a code.
    server = await startServer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "3600" })
    browser = await launch(PHONE)
    hooks = await receiver()
    failing = await receiver(() => 500)

    ama = await holder(server, "Ama Mensah", "0241234567")
    await pay(ama, { method: "mtn_momo", amount: 200, payer_number: "0241234567" })
    await pay(ama, { method: "telecel_cash", amount: 20, payer_number: "0201230000" })
    await pay(ama, { method: "telecel_cash", amount: 15, payer_number: "0201231234" })
    await pay(ama, { method: "manual_transfer", amount: 50, note: "GCB transfer 7731" })
    const mtn = server.bundle("MTN 1GB").id
    const telecel = [...server.bundles.values()].find((b) => b.isActive && b.name.startsWith("Telecel"))!.id
    for (const [bundle, phone] of [[mtn, "0241112222"], [mtn, "0551113333"], [telecel, "0201114444"]] as const) {
      orderNumber = (await buy(ama, bundle, phone)).order.order_number
    }
    await buy(ama, mtn, "0241110000") // fails, refunded
    await buy(ama, mtn, "0241119999") // stays pending
    await buy(ama, mtn, "0541115555", "test")
    await ama.call("POST", "/keys", { name: "Shop website" })
    await ama.call("POST", "/keys", { name: "Sandbox", mode: "test" })
    const old = await ama.call("POST", "/keys", { name: "Old till" })
    await ama.call("DELETE", `/keys/${old.key.id}`)
    await ama.call("PUT", "/webhook", { url: hooks.url })
    await ama.call("POST", "/webhook/test", { type: "order.successful" })
    await until(async () => hooks.received.length > 0, "the test event")

    // An account whose webhook endpoint fails, for the console.
    const kofi = await holder(server, "Kofi Boateng", "0541234567")
    await pay(kofi, { method: "mtn_momo", amount: 40, payer_number: "0541234567" })
    await kofi.call("PUT", "/webhook", { url: failing.url })
    await buy(kofi, mtn, "0541116666")
    await until(async () => {
      const { endpoints } = await admin(server, "GET", "/webhooks")
      return endpoints.some((e: any) => e.account_id === kofi.accountId && e.last_status === 500)
    }, "a failing delivery")
    await admin(server, "POST", "/accounts", { name: "Zebra Data Hub", price_group: "agent" })
    await admin(server, "POST", "/operators", { name: "Kwame Asante", ...operator })
    await admin(server, "POST", "/operators", {
      email: `abena.${Date.now()}@example.com`,
      name: "Abena Osei",
      password: "abena's first password"
    })

    // A spreadsheet as Excel saves it where the decimal mark is a comma: semicolons, a BOM, CRLF.
    bulkFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bulk-")), "december.csv")
    fs.writeFileSync(bulkFile, `\uFEFFbundle_id;phone_number\r\n${mtn};024 111 7777\r\n${mtn};+233 55 111 8888\r\n`)
  })
  afterAll(async () => {
    hooks?.close()
    failing?.close()
    await browser?.close()
    await server?.dispose()
  })

  /** Waits for the page's heading and its requests, then checks it and keeps its screenshot. */
  const checked = async (page: Page, device: "phone" | "desktop", heading: string | RegExp, shot?: string) => {
    await page.getByRole("heading", { name: heading, level: 1 }).waitFor()
    await page.waitForLoadState("networkidle")
    const where = `${page.url()} (${device})`
    expect(await seriousViolations(page), where).toEqual([])
    expect(await sidewaysScrolling(page), where).toEqual([])
    if (device === "phone") expect(await smallTargets(page), where).toEqual([])
    if (shooting && shot !== undefined) await screenshot(page, `${shot}-${device}`)
  }

  /** A page of a fresh walk: signed out, at the device's size, its script errors recorded. */
  const freshPage = async (viewport: { readonly width: number; readonly height: number }) => {
    await browser.context.clearCookies()
    const page = await browser.context.newPage()
    await page.setViewportSize(viewport)
    return { page, errors: scriptErrors(page) }
  }

  const visit = async (
    page: Page,
    device: "phone" | "desktop",
    to: string,
    heading: string | RegExp,
    shot?: string
  ) => {
    await page.goto(`${server.origin}${to}`)
    await checked(page, device, heading, shot)
  }

  it.each(DEVICES)("walks the holder's pages (%s)", async (device, viewport) => {
    const { errors, page } = await freshPage(viewport)

    await visit(page, device, "/register", "Create an account", "register")
    await visit(page, device, "/reset-password", "Reset your password", "reset-password")
    await visit(page, device, "/verify-email", "Verify your email", "verify-email")
    await visit(page, device, "/sign-in", "Sign in", "sign-in")
    await page.getByLabel("Email").fill(ama.email)
    await page.getByLabel("Password").fill(ama.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await checked(page, device, "Home", "home")
    // The bar: the name, the balance, the menu (opened on a phone).
    await page.getByRole("link", { name: /^Main wallet: GH₵/ }).waitFor()
    if (device === "phone") {
      await page.getByRole("button", { name: "Menu" }).click()
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Orders" }).waitFor()
      expect(await smallTargets(page)).toEqual([])
      expect(await sidewaysScrolling(page)).toEqual([])
      if (shooting) await screenshot(page, "menu-phone")
      await page.keyboard.press("Escape")
    }

    await visit(page, device, "/orders", "Orders", "orders")
    await page.getByTestId("orders").getByText("0241119999").waitFor()
    await visit(page, device, `/orders/${orderNumber}`, `Order ${orderNumber}`, "order")
    await visit(page, device, "/wallet", "Wallet", "wallet")
    await page.getByTestId("ledger").getByText(/Refund/).first().waitFor()
    await visit(page, device, "/fund", "Fund your wallet", "fund")
    await page.getByTestId("payments").getByRole("button", { name: /^Enter the code/ }).waitFor()
    await visit(page, device, "/buy", "Buy a bundle")
    await page.getByLabel("Phone number").fill("020 111 9999")
    await page.getByText(/belongs to Telecel, but .* is on the MTN network/).waitFor()
    await checked(page, device, "Buy a bundle", "buy")
    await visit(page, device, "/bulk", "Bulk purchase")
    await page.getByLabel("CSV file").setInputFiles(bulkFile)
    await page.getByRole("button", { name: "Check the file" }).click()
    await page.getByTestId("bulk-review").getByRole("button", { name: /^Buy 2 bundles for GH₵/ }).waitFor()
    await checked(page, device, "Bulk purchase", "bulk")
    await visit(page, device, "/keys", "API keys", "keys")
    await page.getByTestId("keys").getByText("Sandbox").waitFor()
    await visit(page, device, "/webhooks", "Webhooks", "webhooks")
    await page.getByTestId("deliveries").getByText("delivered").first().waitFor()

    // Test mode: the test side's balance and orders, marked as test everywhere.
    await visit(page, device, "/", "Home")
    if (device === "phone") await page.getByRole("button", { name: "Menu" }).click()
    await page.getByRole("button", { name: "Test mode: off" }).click()
    await checked(page, device, "Home (test mode)", "home-test")
    await page.getByRole("note").getByText("Test mode:").waitFor()
    await page.getByRole("link", { name: /^Test main wallet: / }).waitFor()
    await visit(page, device, "/orders", "Orders (test mode)")
    await page.getByTestId("orders").getByText("0541115555").waitFor()
    expect(await page.getByTestId("orders").getByText("0241112222").count()).toBe(0)
    await page.getByRole("button", { name: "Back to live" }).click()
    await page.getByRole("heading", { name: "Orders", exact: true, level: 1 }).waitFor()

    if (device === "phone") await page.getByRole("button", { name: "Menu" }).click()
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor()
    expect(errors).toEqual([])
    await page.close()
  })

  it.each(DEVICES)("walks the console's pages (%s)", async (device, viewport) => {
    const { errors, page } = await freshPage(viewport)

    await visit(page, device, "/console/sign-in", "Operator sign in", "console-sign-in")
    await page.getByLabel("Email").fill(operator.email)
    await page.getByLabel("Password").fill(operator.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await checked(page, device, "Overview", "console-overview")
    await page.getByText(/funding requests? waiting/).waitFor()
    await visit(page, device, "/console/money", "Money", "console-money")
    // A funding request shows who asked, by name.
    await page.getByTestId("funding-requests").getByRole("link", { name: /^Ama Mensah/ }).waitFor()
    await visit(page, device, "/console/orders", "Orders", "console-orders")
    await page.getByTestId("pending-orders").getByText("0241119999").waitFor()
    await visit(page, device, "/console/accounts", "Accounts", "console-accounts")
    await visit(page, device, `/console/accounts/${ama.accountId}`, /^Ama Mensah/, "console-account")
    await page.getByTestId("holder").getByText(ama.email).waitFor()
    await page.getByTestId("holder").getByText("0241234567").waitFor()
    await visit(page, device, "/console/catalog", "Catalogue", "console-catalog")
    await visit(page, device, "/console/webhooks", "Webhooks", "console-webhooks")
    await page.getByTestId("endpoints").getByText(/HTTP 500/).waitFor()
    await visit(page, device, "/console/actions", "Action log", "console-actions")
    await visit(page, device, "/console/operators", "Operators", "console-operators")
    // Nobody can disable themselves: their own row has no button.
    await page.getByText("Kwame Asante (you)").waitFor()
    expect(await page.getByRole("button", { name: `Disable ${operator.email}` }).count()).toBe(0)

    if (device === "phone") await page.getByRole("button", { name: "Menu" }).click()
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Operator sign in", level: 1 }).waitFor()
    expect(errors).toEqual([])
    await page.close()
  })
})
