/**
 * Buy one bundle: network, bundle, number. The number is read as the client reads it
 * (`@databundle/client/Phone`), and a number whose prefix belongs to another operator than
 * the chosen network is flagged before paying. Each purchase carries a reference made when
 * the form is first sent with those values and kept until answered, so a double click or a
 * reload and resubmit buys once (the server replays the order).
 */
import { parsePhone } from "@databundle/client/Phone"
import { ApiFailure } from "../Api.js"
import type { Page } from "../App.js"
import { ghs, h, replace } from "../Dom.js"
import { api, type Bundle, type Network, type Order } from "../Endpoints.js"
import { form } from "../Form.js"
import { pathOf } from "../Paths.js"
import * as Pending from "../Pending.js"
import { statusBadge } from "./Home.js"

const NETWORK_OPERATOR: Record<string, string> = {
  mtn: "mtn",
  telecel: "telecel",
  vodafone: "telecel",
  airteltigo: "airteltigo",
  at: "airteltigo",
  glo: "glo"
}

/** The operator id of a network, by its slug or name. */
const operatorOf = (network: Network | undefined): string | undefined => {
  if (network === undefined) return undefined
  const key = `${network.slug} ${network.name}`.toLowerCase()
  for (const [word, id] of Object.entries(NETWORK_OPERATOR)) if (key.split(/[^a-z]+/).includes(word)) return id
  return undefined
}

/** Follows an order until it settles (or a minute passes), showing its status. */
export const watchOrder = async (order: Order, into: HTMLElement): Promise<void> => {
  let current = order
  for (let i = 0; i < 30 && current.status === "pending"; i++) {
    replace(into, orderStatusLine(current))
    await new Promise((resolve) => setTimeout(resolve, 2000))
    current = (await api.order({ path: { order_number: current.order_number } })).order
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
    `: ${order.bundle} to ${order.phone_number}, `,
    statusBadge(order.status),
    order.status === "pending" ? " (checking…)" : order.status === "failed" ? " — refunded to your wallet" : ""
  )

export const buy: Page = {
  title: "Buy a bundle",
  render: async () => {
    const { networks } = await api.networks()
    let bundles: ReadonlyArray<Bundle> = []
    const result = h("div", { role: "status", "aria-live": "polite" })
    const warning = h("p", { class: "warning", hidden: true, id: "network-warning" })
    const buyForm = form({
      label: "Buy a bundle",
      submit: "Buy",
      pending: "Buying…",
      fields: [
        { name: "network", label: "Network", options: networks.map((n) => ({ value: String(n.id), label: n.name })) },
        { name: "bundle_id", label: "Bundle", options: [] },
        {
          name: "phone_number",
          label: "Phone number",
          type: "tel",
          inputmode: "tel",
          autocomplete: "off",
          hint: "The number that receives the data, such as 024 123 4567"
        }
      ],
      extra: warning,
      onSubmit: async (values) => {
        const phone = parsePhone(values.phone_number!)
        // A number the client cannot read goes as typed: the API's 422 names the problem.
        const payloadBase = { bundle_id: Number(values.bundle_id), phone_number: phone?.local ?? values.phone_number! }
        const reference = Pending.keyFor("order", payloadBase, "web-")
        try {
          const placed = await api.placeOrder({ payload: { ...payloadBase, reference } })
          Pending.settled("order", payloadBase)
          replace(
            result,
            h(
              "p",
              null,
              placed.replayed ? "This purchase had already been made: nothing was bought twice." : placed.message
            ),
            h("p", null, `Main wallet balance: ${ghs(placed.wallet_balance)}`),
            h("div", { "data-testid": "order-status" })
          )
          await watchOrder(placed.order, result.querySelector("[data-testid=order-status]") as HTMLElement)
        } catch (error) {
          if (error instanceof ApiFailure && error.status >= 400 && error.status < 500) {
            Pending.settled("order", payloadBase)
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
      const expected = operatorOf(chosen)
      if (phone?.operator !== undefined && expected !== undefined && phone.operator.id !== expected) {
        warning.textContent = `${phone.prefix} numbers are usually ${phone.operator.name}, not ${
          chosen!.name
        }. Check the network before you buy: data sent to the wrong network is lost.`
        warning.hidden = false
      } else {
        warning.hidden = true
        warning.textContent = ""
      }
    }
    const loadBundles = async () => {
      bundle.disabled = true
      const answer = await api.bundles({ path: { network_id: Number(network.value) } })
      bundles = answer.bundles.filter((b) => b.is_active)
      replace(bundle, bundles.map((b) => h("option", { value: String(b.id) }, `${b.name} — ${ghs(b.price)}`)))
      bundle.disabled = false
      checkNetwork()
    }
    network.addEventListener("change", () => void loadBundles())
    number.addEventListener("input", checkNetwork)
    number.addEventListener("blur", () => {
      const phone = parsePhone(number.value)
      if (phone) number.value = phone.local
    })
    if (networks.length > 0) await loadBundles()
    return h(
      "div",
      null,
      h("h1", null, "Buy a bundle"),
      buyForm.element,
      result,
      h("p", null, "Many numbers at once? ", h("a", { href: pathOf("bulk") }, "Upload a CSV file"))
    )
  }
}
