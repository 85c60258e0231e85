/**
 * What the dashboard costs a phone, measured by the browser: the first load of the sign-in
 * page at most 100 KB on the wire in total, and a later page change under 30 KB. Also the
 * answers' security headers and the 404 of paths that are not pages. The operator's console
 * has the same first-load budget for its sign-in page, and the account holder's pages never
 * load its chunk. (Every page's layout and accessibility, at both sizes: Pages.test.ts.)
 */
import { targets } from "@databundle/core/testing"
import { describe, expect, it } from "vitest"
import { seriousViolations, serverAndPhone, transferMeter } from "./Browser.js"

const KB = 1024

describe.each(targets)("dashboard budgets ($name)", (target) => {
  const env = serverAndPhone(target)

  it("loads the sign-in page within 100 KB and changes page within 30 KB", async () => {
    const page = await env.browser.context.newPage()
    const meter = await transferMeter(page)
    await page.goto(`${env.server.origin}/sign-in`, { waitUntil: "networkidle" })
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    const first = meter.read()
    expect(first.entries.length).toBeGreaterThanOrEqual(3)
    expect(first.total, JSON.stringify(first.entries)).toBeLessThanOrEqual(100 * KB)

    meter.reset()
    await page.getByRole("link", { name: "Create an account" }).click()
    await page.getByRole("heading", { name: "Create an account" }).waitFor()
    await page.waitForLoadState("networkidle")
    expect(meter.read().total).toBeLessThan(30 * KB)
    console.log(
      `sign-in first load: ${first.total} B in ${first.entries.length} requests; page change: ${meter.read().total} B`
    )
    await page.close()
  })

  it("loads the console's sign-in page within 100 KB, and never the console on the holder's pages", async () => {
    const page = await env.browser.context.newPage()
    const meter = await transferMeter(page)
    await page.goto(`${env.server.origin}/sign-in`, { waitUntil: "networkidle" })
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    const holder = meter.read().entries.map((e) => e.url)
    const console_ = (url: string) => /\/assets\/(Console|console)\./.test(url)
    expect(holder.filter(console_), holder.join(" ")).toEqual([])

    // Measured from nothing: an operator's browser has not loaded the holder's files before.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send("Network.clearBrowserCache")
    meter.reset()
    await page.goto(`${env.server.origin}/console/sign-in`, { waitUntil: "networkidle" })
    await page.getByRole("heading", { name: "Operator sign in" }).waitFor()
    const first = meter.read()
    // The console's chunk and stylesheet, and its own session probe (not the holder's).
    expect(first.entries.filter((e) => console_(e.url)).length, JSON.stringify(first.entries)).toBe(2)
    expect(first.entries.some((e) => e.url.endsWith("/console/v1/session"))).toBe(true)
    expect(first.entries.some((e) => e.url.includes("/dashboard/v1/"))).toBe(false)
    expect(first.total, JSON.stringify(first.entries)).toBeLessThanOrEqual(100 * KB)
    expect(await seriousViolations(page)).toEqual([])
    console.log(`console sign-in first load: ${first.total} B in ${first.entries.length} requests`)
    await page.close()
  })

  it("serves the app with its security headers, compressed, and 404s what is not a page", async () => {
    const html = await fetch(`${env.server.origin}/sign-in`, { headers: { "accept-encoding": "br" } })
    expect(html.status).toBe(200)
    expect(html.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(html.headers.get("content-security-policy")).not.toContain("unsafe-inline")
    expect(html.headers.get("cache-control")).toBe("no-cache")
    expect(html.headers.get("x-content-type-options")).toBe("nosniff")
    const script = /src="(\/assets\/app\.[0-9A-Za-z]+\.js)"/.exec(await html.text())![1]!
    const asset = await fetch(`${env.server.origin}${script}`, { headers: { "accept-encoding": "gzip" } })
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(asset.headers.get("content-encoding")).toBe("gzip")
    for (
      const path of [
        "/nothing-here",
        "/sign-in/",
        "/SIGN-IN",
        "/%73ign-in",
        "/orders/",
        "/assets/",
        "/console/",
        "/console/nothing",
        "/console/accounts/"
      ]
    ) {
      expect((await fetch(`${env.server.origin}${path}`)).status, path).toBe(404)
    }
    expect((await fetch(`${env.server.origin}/console/accounts/12`)).status).toBe(200)
    const post = await fetch(`${env.server.origin}/sign-in`, { method: "POST" })
    expect(post.status).toBe(405)
    expect(post.headers.get("allow")).toBe("GET, HEAD")
  })
})
