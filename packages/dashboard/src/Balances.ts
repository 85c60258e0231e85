/** The three balances of an account (main, referral, agent), the main one first and largest. */
import { h } from "./Dom.js"
import { pathOf } from "./Paths.js"
import { ghs } from "./Words.js"

/** The balances, as the API gives them (cedis); `test` marks a test wallet's. */
export const balances = (
  balance: { readonly main: number; readonly referral: number; readonly agent: number },
  test = false
): Node =>
  h(
    "section",
    { class: "balances", "aria-label": test ? "Test balances" : "Balances" },
    (["main", "referral", "agent"] as const).map((wallet) =>
      h(
        "div",
        { class: "card" },
        h(
          "span",
          { class: "muted" },
          `${wallet[0]!.toUpperCase()}${wallet.slice(1)} wallet`,
          test && wallet === "main" ? [" ", h("span", { class: "mode mode-test" }, "Test")] : null
        ),
        h("strong", null, ghs(balance[wallet]))
      )
    )
  )

/**
 * What a purchase the wallet cannot pay for is told: the amounts, and the way to fund the
 * wallet (the test wallet is refilled by the operators instead).
 */
export const notEnough = (balance: number, required: number, test: boolean): Node =>
  h(
    "div",
    { class: "form-message", role: "alert", "data-testid": "not-enough" },
    h(
      "p",
      null,
      `Not enough money: this costs ${ghs(required)} and your ${test ? "test " : ""}main wallet has ${ghs(balance)} (${
        ghs(required - balance)
      } short). Nothing was charged.`
    ),
    test
      ? h("p", null, "The test wallet is play money: ask the operators to refill it.")
      : h("p", null, h("a", { href: pathOf("fund"), class: "button" }, "Fund your wallet"))
  )
