/**
 * A real browser for the dashboard's tests: Debian's Chromium (/usr/bin/chromium, installed
 * by .ci/run when missing) driven by playwright-core over CDP, with a fresh profile per
 * launch, and the bytes each page load moved, from the browser's own network log (CDP
 * `Network.loadingFinished.encodedDataLength`: headers and compressed bodies as they came
 * over the wire).
 */
import { startServer, type TestServer } from "@databundle/client/testing"
import type { Target } from "@databundle/core/testing"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll } from "vitest"

/** The Chromium binary. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** A phone (360x640) and a desktop viewport. */
export const PHONE = { width: 360, height: 640 } as const
export const DESKTOP = { width: 1280, height: 800 } as const

/** A browser with one fresh profile. */
export interface TestBrowser {
  readonly context: BrowserContext
  readonly close: () => Promise<void>
}

/** Launches Chromium headless with a fresh user-data-dir. */
export const launch = async (viewport: { readonly width: number; readonly height: number } = DESKTOP) => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "dashboard-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  return {
    context,
    close: async () => {
      await context.close()
      fs.rmSync(profile, { recursive: true, force: true })
    }
  } satisfies TestBrowser
}

/** Counts what a page moves over the network, as the browser itself reports it. */
export const transferMeter = async (page: Page) => {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send("Network.enable")
  // Nothing from the cache: every load is measured as a first visit would be... unless asked.
  const urls = new Map<string, string>()
  let total = 0
  const entries: Array<{ url: string; bytes: number }> = []
  cdp.on("Network.requestWillBeSent", (event) => urls.set(event.requestId, event.request.url))
  cdp.on("Network.loadingFinished", (event) => {
    total += event.encodedDataLength
    entries.push({ url: urls.get(event.requestId) ?? "?", bytes: event.encodedDataLength })
  })
  return {
    /** Bytes since the last reset, and by URL. */
    read: () => ({ total, entries: [...entries] }),
    reset: () => {
      total = 0
      entries.length = 0
    }
  }
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** axe-core's violations of the page as it is now, of serious or critical impact. */
export const seriousViolations = async (page: Page) => {
  // Injected through the DevTools protocol, so the page's CSP (no inline scripts) stays as served.
  await page.evaluate(axeSource)
  const result = await page.evaluate(async () => {
    const axe = (globalThis as any).axe
    return (await axe.run(document, { resultTypes: ["violations"] })).violations as Array<
      { id: string; impact: string; help: string; nodes: Array<{ target: Array<string> }> }
    >
  })
  return result
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
}

/**
 * Saves a PNG of the page into docs/dashboard/ when `DASHBOARD_SCREENSHOTS` is set (the
 * committed ones were then reduced with `pngquant`).
 */
export const screenshot = async (page: Page, name: string) => {
  if (!process.env.DASHBOARD_SCREENSHOTS) return
  const dir = path.resolve(import.meta.dirname, "../../../docs/dashboard")
  fs.mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true })
}

/**
 * For the tests of a `describe` block: a test server on `target` (with `settings`) and
 * Chromium on a phone's screen, started before them and closed after them.
 */
export const serverAndPhone = (target: Target, settings: Record<string, string> = {}) => {
  const started: { server?: TestServer; browser?: TestBrowser } = {}
  beforeAll(async () => {
    started.server = await startServer(target, settings)
    started.browser = await launch(PHONE)
  })
  afterAll(async () => {
    await started.browser?.close()
    await started.server?.dispose()
  })
  return {
    get server(): TestServer {
      return started.server!
    },
    get browser(): TestBrowser {
      return started.browser!
    }
  }
}

/**
 * What on the page as it is now would make a phone's reader scroll sideways: the page wider
 * than the screen, an element whose own content scrolls sideways, or one that reaches past
 * the screen's right edge. Each as a short description of the element.
 */
export const sidewaysScrolling = (page: Page) =>
  page.evaluate(() => {
    const width = document.documentElement.clientWidth
    const problems: Array<string> = []
    const name = (e: Element) =>
      `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${
        e.className && typeof e.className === "string" ? `.${e.className.trim().split(/\s+/).join(".")}` : ""
      } "${(e.textContent ?? "").trim().slice(0, 40)}"`
    if (document.documentElement.scrollWidth > width) {
      problems.push(`the page is ${document.documentElement.scrollWidth} px wide on a ${width} px screen`)
    }
    for (const e of Array.from(document.body.querySelectorAll("*"))) {
      const style = getComputedStyle(e)
      if (style.display === "none" || style.visibility === "hidden") continue
      if ((style.overflowX === "auto" || style.overflowX === "scroll") && e.scrollWidth > e.clientWidth + 1) {
        problems.push(`${name(e)} scrolls sideways (${e.scrollWidth} px in ${e.clientWidth})`)
      }
      const box = e.getBoundingClientRect()
      if (box.width > 0 && box.height > 0 && box.right > width + 1 && box.left < width) {
        problems.push(`${name(e)} reaches ${Math.round(box.right)} px on a ${width} px screen`)
      }
    }
    return problems
  })

/** Buttons and fields (and the links dressed as buttons) shorter than a thumb's 44 px. */
export const smallTargets = (page: Page) =>
  page.evaluate(() =>
    Array.from(document.querySelectorAll("button, input:not([type=hidden]), select, textarea, summary, a.button"))
      .filter((e) => {
        const box = e.getBoundingClientRect()
        return box.width > 0 && box.height > 0 && box.height < 43.5
      })
      .map((e) =>
        `${e.tagName.toLowerCase()} "${(e.textContent || (e as HTMLInputElement).name || "").trim().slice(0, 30)}" ${
          Math.round(e.getBoundingClientRect().height)
        } px`
      )
  )

/** Records the script errors a page logs (uncaught errors and console errors, bar failed resource loads: a 4xx answer is the browser's log line). */
export const scriptErrors = (page: Page): Array<string> => {
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text())
  })
  return errors
}

/** Follows a link of the main navigation, opening the menu first where it is folded (a phone). */
export const navigate = async (page: Page, link: string) => {
  const menu = page.getByRole("button", { name: "Menu" })
  if (await menu.isVisible()) await menu.click()
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: link, exact: true }).click()
}

/** Signs out through the menu. */
export const signOut = async (page: Page) => {
  const menu = page.getByRole("button", { name: "Menu" })
  if (await menu.isVisible()) await menu.click()
  await page.getByRole("button", { name: "Sign out" }).click()
}

/** Unfolds a listing's filters (folded on a phone until asked for). */
export const openFilters = async (page: Page) => {
  const box = page.locator("details.filter-box")
  if ((await box.getAttribute("open")) === null) await box.locator("summary").click()
}
