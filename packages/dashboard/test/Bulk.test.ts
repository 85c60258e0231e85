/**
 * The dashboard's bulk purchase, in Chromium on a phone's screen, as `bundles bulk` behaves: a
 * spreadsheet saved by Excel (semicolons, a BOM, CRLF) is read; every problem of every line is
 * listed and nothing is bought; the total is checked against the balance (a shortfall says by
 * how much) and nothing is bought before the holder confirms; a 429 is waited out and the row
 * bought, never a failed row; and under a low orders limit the run paces itself by the
 * server's rate-limit headers instead of meeting 429s (slow: a whole window, first database
 * only). The summary counts every row once, truthfully.
 */
import { targets } from "@databundle/core/testing"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Page } from "playwright-core"
import { beforeEach, describe, expect, it } from "vitest"
import { scriptErrors, serverAndPhone } from "./Browser.js"
import { admin, type Holder, holder, pay } from "./Seed.js"

const file = (name: string, text: string) => {
  const at = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bulk-")), name)
  fs.writeFileSync(at, text)
  return at
}

/** A funded holder, signed in on the bulk page. */
const onBulkPage = async (page: Page, origin: string, who: Holder) => {
  await page.goto(`${origin}/sign-in?next=/bulk`)
  await page.getByLabel("Email").fill(who.email)
  await page.getByLabel("Password").fill(who.password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { name: "Bulk purchase", level: 1 }).waitFor()
}

const check = async (page: Page, csv: string) => {
  await page.getByLabel("CSV file").setInputFiles(csv)
  await page.getByRole("button", { name: "Check the file" }).click()
}

describe.each(targets)("bulk purchases in the dashboard ($name)", (target) => {
  const env = serverAndPhone(target, { BUNDLES_DASHBOARD_LIMITS: "dashboard=100000,access=100000" })
  beforeEach(() => env.browser.context.clearCookies())

  it("reads an Excel file, lists every problem by line and buys nothing; a shortfall is told and bought never", async () => {
    const page = await env.browser.context.newPage()
    const who = await holder(env.server, "Nana Owusu", "0241234567")
    await pay(who, { method: "mtn_momo", amount: 6, payer_number: "0241234567" })
    await onBulkPage(page, env.server.origin, who)
    const mtn = env.server.bundle("MTN 1GB")
    await check(
      page,
      file(
        "broken.csv",
        `\uFEFFbundle_id;phone_number\r\n${mtn.id};030 123 4567\r\n999999;024 111 2222\r\n${mtn.id};0241113333\r\n`
      )
    )
    const problems = page.getByTestId("bulk-problems")
    await problems.getByText("Line 2: \"030 123 4567\" is not a Ghana mobile number").waitFor()
    await problems.getByText("Line 3: bundle 999999 is not in the catalogue of active networks").waitFor()
    expect(await problems.getByRole("listitem").count()).toBe(2)

    // Two bundles cost more than the wallet holds: the amounts, the way to fund, no button to buy.
    await check(
      page,
      file("march.csv", `bundle_id;phone_number\r\n${mtn.id};024 111 2222\r\n${mtn.id};+233 54 111 3333\r\n`)
    )
    const review = page.getByTestId("bulk-review")
    await review.getByTestId("not-enough").getByText(
      /this costs GH₵ 11\.00 and your main wallet has GH₵ 6\.00 \(GH₵ 5\.00 short\)/
    )
      .waitFor()
    await review.getByRole("link", { name: "Fund your wallet" }).waitFor()
    expect(await review.getByRole("button", { name: /^Buy / }).count()).toBe(0)
    expect((await who.call("GET", "/orders")).orders).toEqual([])
    await page.close()
  })

  it("waits out a 429 and buys the row: never a failed row; the summary counts each row once", async () => {
    const page = await env.browser.context.newPage()
    const errors = scriptErrors(page)
    const who = await holder(env.server, "Kojo Mensah", "0241234567")
    await pay(who, { method: "mtn_momo", amount: 100, payer_number: "0241234567" })
    await onBulkPage(page, env.server.origin, who)
    const mtn = env.server.bundle("MTN 1GB")
    // The second order is refused once for the rate limit, as another client on the account would cause.
    let posts = 0
    await page.route("**/dashboard/v1/orders", async (route) => {
      if (route.request().method() !== "POST" || ++posts !== 2) return route.continue()
      await route.fulfill({
        status: 429,
        headers: { "content-type": "application/json", "retry-after": "1" },
        body: JSON.stringify({ success: false, message: "Rate limit exceeded", _tag: "RateLimited", retry_after: 1 })
      })
    })
    await check(
      page,
      file("april.csv", `bundle_id,phone_number\n${mtn.id},0241112222\n${mtn.id},0241113333\n${mtn.id},0241110000\n`)
    )
    await page.getByRole("button", { name: /^Buy 3 bundles for GH₵ 16\.50$/ }).click()
    // One order fails at the network (a number ending 0000): refunded, counted as such, not as an error.
    await page.getByTestId("bulk-summary").getByText(
      "3 rows: 3 bought now (GH₵ 11.00), 0 bought before, 1 order failed and refunded, 0 errors, 0 not bought."
    ).waitFor({ timeout: 30_000 })
    expect(posts).toBe(4)
    const { orders } = await who.call("GET", "/orders")
    expect(orders.length).toBe(3)
    expect(errors).toEqual([])
    await page.close()
  })

  it.runIf(target === targets[0])("paces itself under a low orders limit instead of meeting 429s", async () => {
    const page = await env.browser.context.newPage()
    const who = await holder(env.server, "Ekow Baah", "0241234567")
    await pay(who, { method: "mtn_momo", amount: 100, payer_number: "0241234567" })
    await admin(env.server, "PATCH", `/accounts/${who.accountId}`, { limits: { orders: 2 } })
    await onBulkPage(page, env.server.origin, who)
    const refused: Array<number> = []
    page.on("response", (response) => {
      if (response.url().endsWith("/dashboard/v1/orders") && response.status() === 429) refused.push(response.status())
    })
    const mtn = env.server.bundle("MTN 1GB")
    await check(page, file("paced.csv", [1, 2, 3].map((i) => `${mtn.id},024444000${i}`).join("\n")))
    await page.getByRole("button", { name: /^Buy 3 bundles/ }).click()
    await page.getByTestId("bulk-progress").getByText(/the rate limit allows 2 orders a minute: waiting/).waitFor({
      timeout: 30_000
    })
    await page.getByTestId("bulk-summary").getByText(/^3 rows: 3 bought now/).waitFor({ timeout: 90_000 })
    expect(refused).toEqual([])
    await page.close()
  }, 150_000)
})
