/**
 * Wallet movements as a list (cards on a phone): what moved the money (an order, a payment, a
 * refund, an operator's adjustment) and the signed amount first, then when, on which wallet,
 * the balance after and the note. The holder's wallet page and the console's account page
 * both show a ledger with it.
 */
import { h } from "./Dom.js"
import { list } from "./List.js"
import { capital, ghs, when } from "./Words.js"

/** A ledger entry as either API sends it (the holder's also names the payment). */
export interface Entry {
  readonly wallet: string
  readonly amount: number
  readonly balance_after: number
  readonly reason: string
  readonly order_number: string | null
  readonly payment_number?: string | null
  readonly note: string | null
  readonly created_at: string
}

/** A ledger; `orderHref` links an entry's order to where the app shows it. */
export const ledgerList = (
  entries: ReadonlyArray<Entry>,
  options: { readonly caption: string; readonly orderHref: (orderNumber: string) => string; readonly testId?: string }
): Node =>
  list({
    caption: options.caption,
    empty: "No movements yet.",
    testId: options.testId ?? "ledger",
    rows: entries,
    columns: [
      {
        label: "What",
        place: "title",
        cell: (e) => [
          capital(e.reason.replace("_", " ")),
          // A commission's order is the buyer's, not this account's: named, not linked.
          e.order_number && e.reason.startsWith("commission")
            ? [" ", h("span", { class: "id" }, e.order_number)]
            : e.order_number
            ? [" ", h("a", { href: options.orderHref(e.order_number), class: "id" }, e.order_number)]
            : null,
          e.payment_number ? [" ", h("span", { class: "id" }, e.payment_number)] : null
        ]
      },
      { label: "When", place: "line", cell: (e) => `${capital(e.wallet)} wallet · ${when(e.created_at)}` },
      {
        label: "Amount",
        place: "amount",
        numeric: true,
        cell: (e) =>
          h("span", { class: e.amount < 0 ? "debit" : "credit" }, `${e.amount > 0 ? "+" : ""}${ghs(e.amount)}`)
      },
      { label: "Balance", numeric: true, cell: (e) => ghs(e.balance_after) },
      { label: "Note", cell: (e) => e.note ?? "" }
    ]
  })
