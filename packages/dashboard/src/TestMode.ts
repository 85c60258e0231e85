/**
 * The holder's test mode: which side of the account the pages show and act on, live (the
 * real wallet and orders) or test (the test wallet of play money and its simulated orders,
 * the side a test API key acts on). It is kept per tab (sessionStorage), so a new tab always
 * opens live, and it is shown everywhere it applies: the bar turns to the test colours with a
 * "Test mode" banner, the balance says "Test", and every page that shows the test side says
 * so. Funding, keys and webhooks are the account's own in either mode.
 *
 * Also the main balance the bar shows, as the pages last learnt it.
 */
import { h, replace } from "./Dom.js"
import { pathOf } from "./Paths.js"
import { ghs } from "./Words.js"

const KEY = "dashboard-mode"

/** The side the pages act on. */
export type Mode = "live" | "test"

/** The side the pages act on now. */
export const mode = (): Mode => (sessionStorage.getItem(KEY) === "test" ? "test" : "live")

/** True in test mode. */
export const testing = (): boolean => mode() === "test"

/** The query (or payload) field of a request that acts on the side shown: `{ mode: "test" }` or nothing. */
export const side = (): { readonly mode?: "test" } => (testing() ? { mode: "test" } : {})

/** Marks the document for the side (the stylesheet colours the bar by it). */
const mark = () => document.documentElement.classList.toggle("test-mode", testing())

/** Switches side; `then` shows the current page again, on the new side. */
export const setMode = (next: Mode, then: () => void): void => {
  if (next === "test") sessionStorage.setItem(KEY, "test")
  else sessionStorage.removeItem(KEY)
  mark()
  shown = undefined
  paint()
  then()
}

let shown: number | undefined
const chip = h("a", { href: pathOf("wallet"), class: "balance", hidden: true })

const paint = () => {
  chip.hidden = shown === undefined
  replace(
    chip,
    h("span", { class: "visually-hidden" }, testing() ? "Test main wallet: " : "Main wallet: "),
    testing() ? h("span", { class: "mode mode-test", "aria-hidden": "true" }, "Test") : null,
    shown === undefined ? "" : ghs(shown)
  )
}

/** Tells the bar the main balance of the side shown (a page that read or changed it). */
export const showBalance = (cedis: number): void => {
  shown = cedis
  paint()
}

/** The bar's balance, a link to the wallet. */
export const balanceChip = (): Node => {
  mark()
  paint()
  return chip
}

/** The menu's switch between the live and the test side. */
export const modeSwitch = (reload: () => void): Node => {
  const on = testing()
  const button = h("button", {
    type: "button",
    class: "switch",
    "aria-pressed": String(on),
    title: "Test mode shows your test wallet and test orders: play money, orders only simulated"
  }, on ? "Test mode: on" : "Test mode: off")
  button.addEventListener("click", () => setMode(on ? "live" : "test", reload))
  return button
}

/** The banner under the bar in test mode: what the side is, and the way back. */
export const testBanner = (reload: () => void): Node | null => {
  if (!testing()) return null
  const back = h("button", { type: "button", class: "secondary" }, "Back to live")
  back.addEventListener("click", () => setMode("live", reload))
  return h(
    "div",
    { class: "test-banner", role: "note" },
    h("p", null, h("strong", null, "Test mode: "), "play money and simulated orders. Nothing here is charged."),
    back
  )
}

/** A page's heading word for the side: " (test)" in test mode. */
export const sideLabel = (): string => (testing() ? " (test)" : "")
