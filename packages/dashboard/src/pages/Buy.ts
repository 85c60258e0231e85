/**
 * Buy one bundle: network, bundle, number. The number is read as the client reads it (a
 * phone field: `@databundle/client/Phone`), and a number whose prefix belongs to another
 * operator than the chosen network is flagged before paying (the client's rule, as the CLI
 * warns). Each purchase carries a reference made when the form is first sent with those
 * values and kept until answered, so a double click or a reload and resubmit buys once (the
 * server replays the order). A wallet short of the price is told by how much, with the way
 * to fund it. In test mode the purchase is a test order, paid from the test wallet.
 */
import { parsePhone, prefixNotice } from "@databundle/client/Phone"
import { ApiFailure } from "../Api.js"
import type { Page } from "../App.js"
import { notEnough } from "../Balances.js"
import { h, replace } from "../Dom.js"
import { api, type Bundle, type Order } from "../Endpoints.js"
import { form } from "../Form.js"
import type { Life } from "../Life.js"
import { status } from "../List.js"
import { testMark } from "../OrderList.js"
import { pathOf } from "../Paths.js"
import * as Pending from "../Pending.js"
import { showBalance, side, testing } from "../TestMode.js"
import { capital, ghs } from "../Words.js"

/** Follows an order until it settles (or a minute passes), showing its status; stops when the page is left. */
const watchOrder = async (order: Order, into: HTMLElement, life: Life): Promise<void> => {
  let current = order
  for (let i = 0; i < 30 && current.status === "pending"; i++) {
    replace(into, orderStatusLine(current))
    await life.sleep(2000)
    current = (await api.order({ path: { order_number: current.order_number }, query: side(), signal: life.signal }))
      .order
  }
  replace(into, orderStatusLine(current))
}

const orderStatusLine = (order: Order) =>
  h(
    "p",
    {
      class: order.status === "failed" ? "form-message" : order.status === "successful" ? "form-message ok" : "warning"
    },
    "Order ",
    h("a", { href: pathOf("order", { number: order.order_number }) }, order.order_number),
    " ",
    testMark(),
    `: ${order.bundle} to ${order.phone_number}, `,
    status(order.status),
    order.status === "pending" ? " (checking…)" : order.status === "failed" ? " — refunded to your wallet" : ""
  )

export const buy: Page = {
  title: "Buy a bundle",
  render: async ({ life }) => {
    const { networks } = await api.networks({ signal: life.signal })
    let bundles: ReadonlyArray<Bundle> = []
    const result = h("div", { role: "status", "aria-live": "polite" })
    const warning = h("p", { class: "warning", hidden: true, id: "network-warning" })
    const buyForm = form({
      label: "Buy a bundle",
      submit: testing() ? "Buy with test money" : "Buy",
      pending: "Buying…",
      fields: [
        { name: "network", label: "Network", options: networks.map((n) => ({ value: String(n.id), label: n.name })) },
        { name: "bundle_id", label: "Bundle", options: [] },
        {
          name: "phone_number",
          label: "Phone number",
          phone: true,
          autocomplete: "off",
          hint: "The number that receives the data, such as 024 123 4567"
        }
      ],
      extra: warning,
      onSubmit: async (values) => {
        const attempt = { bundle_id: Number(values.bundle_id), phone_number: values.phone_number!, ...side() }
        const reference = Pending.keyFor("order", attempt, "web-")
        try {
          const placed = await api.placeOrder({ payload: { ...attempt, reference }, signal: life.signal })
          Pending.settled("order", attempt)
          showBalance(placed.wallet_balance)
          const status = h("div", { "data-testid": "order-status" })
          replace(
            result,
            h(
              "p",
              null,
              placed.replayed ? "This purchase had already been made: nothing was bought twice." : placed.message
            ),
            h("p", null, `${testing() ? "Test main" : "Main"} wallet balance: ${ghs(placed.wallet_balance)}`),
            ...placed.warnings.map((w) => h("p", { class: "warning", "data-testid": "order-warning" }, w.message)),
            status
          )
          await watchOrder(placed.order, status, life)
        } catch (error) {
          if (error instanceof ApiFailure && error.status >= 400 && error.status < 500) {
            Pending.settled("order", attempt)
          }
          if (error instanceof ApiFailure && error.tag === "InsufficientBalance") {
            const body = error.body as { balance: number; required: number }
            replace(result, notEnough(body.balance, body.required, testing()))
            return
          }
          throw error
        }
      }
    })
    const network = buyForm.input("network") as HTMLSelectElement
    const bundle = buyForm.input("bundle_id") as HTMLSelectElement
    const number = buyForm.input("phone_number") as HTMLInputElement
    number.setAttribute("aria-describedby", `${number.getAttribute("aria-describedby")} network-warning`)

    const checkNetwork = () => {
      const phone = parsePhone(number.value)
      const chosen = networks.find((n) => String(n.id) === network.value)
      const picked = bundles.find((b) => String(b.id) === bundle.value)
      const mismatch = phone && chosen ? prefixNotice(phone, chosen, picked?.name ?? chosen.name) : undefined
      warning.hidden = mismatch === undefined
      warning.textContent = mismatch === undefined
        ? ""
        : `${capital(mismatch)}. Check the network before you buy: data sent to the wrong network is lost.`
    }
    const loadBundles = async () => {
      bundle.disabled = true
      const answer = await api.bundles({ path: { network_id: Number(network.value) }, signal: life.signal })
      bundles = answer.bundles.filter((b) => b.is_active)
      replace(bundle, bundles.map((b) => h("option", { value: String(b.id) }, `${b.name} — ${ghs(b.price)}`)))
      bundle.disabled = false
      checkNetwork()
    }
    network.addEventListener("change", () => void loadBundles().catch(() => {}))
    bundle.addEventListener("change", checkNetwork)
    number.addEventListener("input", checkNetwork)
    if (networks.length > 0) await loadBundles()
    return h(
      "div",
      null,
      h("h1", null, testing() ? "Buy a bundle (test mode)" : "Buy a bundle"),
      testing()
        ? h("p", { class: "warning" }, "Test mode: this buys a simulated order with the test wallet's play money.")
        : null,
      buyForm.element,
      result,
      h("p", null, "Many numbers at once? ", h("a", { href: pathOf("bulk") }, "Upload a CSV file"))
    )
  }
}
