/**
 * Bulk purchases from a spreadsheet, as `bundles bulk` makes them, with the same client module
 * (`@databundle/client/Bulk`): the file read as spreadsheets save it (commas, semicolons or
 * tabs, a BOM, CRLF; a workbook refused with how to save it as CSV), every row checked before
 * anything is bought, each row's reference derived from the batch (the file's name by default)
 * so the same file again, here or with the CLI, buys only the rows not bought yet.
 *
 * 1. Check: every problem of every line at once, nothing bought while there are any.
 * 2. Review: what the batch already bought, what is left to buy, its total against the main
 *    wallet; a shortfall says by how much, with the way to fund. Nothing is bought until the
 *    visitor confirms.
 * 3. Buy, paced under the rate limit by the `X-RateLimit-*` headers of each answer, as the CLI
 *    paces: the next order waits for the window instead of being refused, and a 429 all the
 *    same is waited out and the row tried again (a refused request did nothing: never a
 *    failed row). No money, no answer or no session stops the run; the same file resumes it.
 * 4. The summary counts every row once, under what truly became of it, and the results file
 *    has the CLI's columns. Leaving the page stops the run (the same file resumes it).
 */
import * as Bulk from "@databundle/client/Bulk"
import { MAX_PER_PAGE } from "@databundle/client/OrderTerms"
import * as Pacing from "@databundle/client/Pacing"
import { ApiFailure } from "../Api.js"
import type { Page } from "../App.js"
import { notEnough } from "../Balances.js"
import { h, replace } from "../Dom.js"
import { download } from "../Download.js"
import { api, type Bundle, type Network, type Order } from "../Endpoints.js"
import { form } from "../Form.js"
import type { Life } from "../Life.js"
import { list } from "../List.js"
import { pathOf } from "../Paths.js"
import { showBalance, side, testing } from "../TestMode.js"
import { capital, count, duration, ghs } from "../Words.js"

/** A bundle of the catalogue, priced for the account (cedis), with its network. */
interface Entry {
  readonly bundle: Bundle
  readonly network: Network
}

type Row = Bulk.Row<Entry>
type Result = Bulk.Result<number, Entry>

/** What the results say of a row, in a word. */
const resultWord = (outcome: Bulk.Outcome<number>): string => {
  switch (outcome._tag) {
    case "Bought":
      return outcome.order.status === "failed" ? "failed" : outcome.replayed ? "bought before" : "bought"
    case "Earlier":
      return outcome.order.status === "failed" ? "failed" : "bought before"
    case "Error":
      return "error"
    case "NotBought":
      return "not bought"
  }
}

/** The refusals after which the next rows cannot go better: no money, no session, no answer. */
const stopsTheRun = (error: ApiFailure): boolean =>
  error.status === 0 || error.status === 401 || error.status === 403 || error.tag === "InsufficientBalance" ||
  error.status >= 500

/** The orders of the batch that exist already, by reference, found as `Bulk.batchLookup` plans. */
const alreadyBought = async (rows: ReadonlyArray<Row>, batch: string, life: Life) => {
  const found = new Map<string, Order>()
  const keep = (wanted: ReadonlySet<string>, orders: ReadonlyArray<Order>) => {
    for (const order of orders) {
      if (order.reference !== null && wanted.has(order.reference)) found.set(order.reference, order)
    }
  }
  const listOrders = (query: Record<string, string | number>) =>
    api.orders({ query: { ...query, ...side() }, signal: life.signal })
  const total = Bulk.needsOrderCount(rows) ? (await listOrders({ per_page: 1 })).pagination.total : 0
  const plan = Bulk.batchLookup(rows, batch, total, MAX_PER_PAGE)
  for (const { filter, wanted } of plan.listings) {
    for (let page = 1, last = 1; page <= last; page++) {
      const answer = await listOrders({ ...filter, per_page: MAX_PER_PAGE, page })
      keep(wanted, answer.orders)
      last = answer.pagination.last_page
    }
  }
  const wanted = new Set(plan.single)
  for (const reference of plan.single) keep(wanted, (await listOrders({ reference, per_page: 1 })).orders)
  return found
}

const issueList = (issues: ReadonlyArray<Bulk.Issue>) =>
  h("ul", null, issues.map((issue) => h("li", null, `Line ${issue.line}: ${issue.message}`)))

export const bulk: Page = {
  title: "Bulk purchase",
  render: async ({ life }) => {
    const { networks } = await api.networks({ signal: life.signal })
    const byId = new Map<number, Entry>()
    for (const network of networks) {
      for (const bundle of (await api.bundles({ path: { network_id: network.id }, signal: life.signal })).bundles) {
        byId.set(bundle.id, { bundle, network })
      }
    }
    const review = h("div", { "aria-live": "polite" })
    const upload = form({
      label: "Bulk purchase",
      submit: "Check the file",
      pending: "Checking every row…",
      fields: [
        {
          name: "file",
          label: "CSV file",
          type: "file",
          attrs: { accept: ".csv,.txt,text/csv,text/plain" },
          hint: "Columns bundle_id, phone_number and optionally reference, saved from any spreadsheet"
        },
        {
          name: "batch",
          label: "Batch name",
          required: false,
          hint: "Defaults to the file's name. The same file and batch never buy a row twice."
        }
      ],
      onSubmit: async (values, f) => {
        replace(review)
        const file = (f.input("file") as HTMLInputElement).files?.[0]
        if (!file) return f.showErrors({ file: ["Choose a CSV file"] })
        const decoded = Bulk.decodeFile(new Uint8Array(await file.arrayBuffer()), file.name)
        if (decoded._tag === "Refused") return f.showErrors({ file: [decoded.message] })
        const batch = (values.batch ?? "").trim() || Bulk.defaultBatch(file.name)
        const checked = await Bulk.check(decoded.text, byId, batch)
        if (checked.errors.length > 0) {
          f.showErrors({ file: [`${count(checked.errors.length, "problem")} in the file: nothing was bought.`] })
          replace(
            review,
            h(
              "section",
              { class: "card", "aria-labelledby": "problems", "data-testid": "bulk-problems" },
              h("h2", { id: "problems" }, `Fix ${count(checked.errors.length, "problem")}, then check the file again`),
              issueList(checked.errors)
            )
          )
          return
        }
        const found = await alreadyBought(checked.rows, batch, life)
        const conflicts = Bulk.reusedReferences(checked.rows, found)
        if (conflicts.length > 0) {
          f.showErrors({ file: [`${count(conflicts.length, "problem")} in the file: nothing was bought.`] })
          replace(review, h("section", { class: "card", "data-testid": "bulk-problems" }, issueList(conflicts)))
          return
        }
        const { balance } = await api.ledger({ query: { ...side(), per_page: 1 }, signal: life.signal })
        showBalance(balance.main)
        showReview(batch, checked, found, balance.main)
      }
    })

    /** Step 2: what the file holds, what it costs, and the button that buys it. */
    const showReview = (
      batch: string,
      checked: Bulk.Checked<Entry>,
      found: ReadonlyMap<string, Order>,
      main: number
    ) => {
      const results: Array<Result> = checked.rows.map((row) => {
        const order = found.get(row.reference)
        return { row, outcome: order === undefined ? { _tag: "NotBought" } : { _tag: "Earlier", order } }
      })
      const toBuy = results.flatMap((result, index) => result.outcome._tag === "NotBought" ? [index] : [])
      // In pesewas, so a sum of prices is exact.
      const total = toBuy.reduce((sum, index) => sum + Math.round(results[index]!.row.entry.bundle.price * 100), 0) /
        100
      const wallet = testing() ? "test main wallet" : "main wallet"
      const buyButton = h("button", { type: "button" }, `Buy ${count(toBuy.length, "bundle")} for ${ghs(total)}`)
      const cancel = h("button", { type: "button", class: "secondary" }, "Cancel")
      cancel.addEventListener("click", () => {
        replace(review)
        upload.element.reset()
      })
      buyButton.addEventListener("click", () => {
        buyButton.disabled = true
        cancel.disabled = true
        void buyAll(batch, results, toBuy).catch(() => {})
      })
      replace(
        review,
        h(
          "section",
          { class: "card", "aria-labelledby": "review", "data-testid": "bulk-review" },
          h("h2", { id: "review", tabindex: "-1" }, `Batch ${batch}`, testing() ? " (test mode)" : ""),
          h(
            "dl",
            { class: "detail" },
            h("dt", null, "Rows"),
            h("dd", null, count(checked.rows.length, "row"), ", all valid"),
            h("dt", null, "Bought before"),
            h("dd", null, count(found.size, "row"), found.size > 0 ? " (skipped)" : ""),
            h("dt", null, "To buy"),
            h("dd", null, `${count(toBuy.length, "row")} for ${ghs(total)}`),
            h("dt", null, capital(wallet)),
            h(
              "dd",
              null,
              h("span", { class: "nowrap" }, ghs(main)),
              total <= main ? [" → ", h("span", { class: "nowrap" }, `${ghs(main - total)} after`)] : null
            )
          ),
          checked.warnings.length > 0
            ? h(
              "details",
              null,
              h("summary", null, `${count(checked.warnings.length, "warning")}: worth a look, nothing stops the batch`),
              issueList(checked.warnings)
            )
            : null,
          toBuy.length === 0
            ? h(
              "p",
              { class: "form-message ok" },
              "Every row of this batch was bought before: nothing to buy. To buy them again, give another batch name."
            )
            : total > main
            ? notEnough(main, total, testing())
            : h(
              "div",
              null,
              h(
                "p",
                null,
                "Stay on this page while it buys. Leaving stops it; the same file again carries on where it stopped."
              ),
              h("div", { class: "actions" }, buyButton, cancel)
            )
        )
      )
      ;(review.querySelector("h2") as HTMLElement).focus()
    }

    /** Step 3: buys the rows one by one, paced under the rate limit. */
    const buyAll = async (batch: string, results: Array<Result>, toBuy: ReadonlyArray<number>) => {
      const pacer = Pacing.makePacer()
      const progress = h("progress", { max: String(toBuy.length), value: "0", "aria-label": "Bulk purchase progress" })
      const line = h("p", { role: "status", "data-testid": "bulk-progress" })
      replace(review, h("section", { class: "card" }, h("h2", null, `Buying batch ${batch}`), progress, line))
      let done = 0
      let spent = 0
      let stoppedBy: string | undefined
      const say = (extra = "") => {
        const eta = pacer.eta(toBuy.length - done, Date.now())
        line.textContent = `${done} of ${count(toBuy.length, "row")} done · ${ghs(spent)} spent${
          eta === undefined || done === toBuy.length ? "" : ` · about ${duration(eta)} left`
        }${extra}`
      }
      /** Waits `millis`, counting down on the status line, as long as the page lives. */
      const wait = async (millis: number, why: string) => {
        const end = Date.now() + millis
        for (let left = millis; left > 0; left = end - Date.now()) {
          say(` · ${why}: waiting ${duration(left)}`)
          await life.sleep(Math.min(left, 1000))
        }
      }
      try {
        for (const index of toBuy) {
          say()
          const delay = pacer.delay(Date.now())
          if (delay > 0) await wait(delay, `the rate limit allows ${pacer.window()?.limit ?? "?"} orders a minute`)
          const { row } = results[index]!
          for (;;) {
            const started = Date.now()
            try {
              const placed = await api.placeOrder({
                payload: {
                  bundle_id: row.entry.bundle.id,
                  phone_number: row.phone,
                  reference: row.reference,
                  ...side()
                },
                signal: life.signal,
                onHeaders: (headers) => pacer.saw((name) => headers.get(name), Date.now())
              })
              pacer.took(Date.now() - started)
              results[index] = { row, outcome: { _tag: "Bought", order: placed.order, replayed: placed.replayed } }
              if (!placed.replayed && placed.order.status !== "failed") spent += placed.order.amount_paid
              showBalance(placed.wallet_balance)
              break
            } catch (error) {
              if (!(error instanceof ApiFailure)) throw error
              // Refused for the rate limit: nothing was done; wait as asked and try the row again.
              if (error.status === 429) {
                await wait(
                  Pacing.retryAfterMillis((error.body as { retry_after?: unknown })?.retry_after),
                  "rate limited"
                )
                continue
              }
              results[index] = { row, outcome: { _tag: "Error", message: error.message } }
              if (stopsTheRun(error)) stoppedBy = error.message
              break
            }
          }
          done++
          progress.value = done
          if (stoppedBy !== undefined) break
        }
      } finally {
        if (!life.signal.aborted) showSummary(batch, results, spent, stoppedBy)
      }
    }

    /** Step 4: the summary, every row's result, and the results file. */
    const showSummary = (
      batch: string,
      results: ReadonlyArray<Result>,
      spent: number,
      stoppedBy: string | undefined
    ) => {
      const tally = Bulk.tally(results)
      const file = h("button", { type: "button", class: "secondary" }, "Download results (CSV)")
      file.addEventListener("click", () =>
        download(
          `${Bulk.batchSlug(batch)}.results.csv`,
          Bulk.toCsv(
            Bulk.RESULT_COLUMNS,
            results.map((result) => {
              const fields = Bulk.resultFields(result)
              return Bulk.RESULT_COLUMNS.map((column) =>
                column === "amount" ? fields.amount?.toFixed(2) : fields[column]
              )
            })
          )
        ))
      const ok = tally.errors === 0 && tally.failedOrders === 0 && tally.notBought === 0
      replace(
        review,
        h(
          "section",
          { "aria-labelledby": "summary" },
          h("h2", { id: "summary", tabindex: "-1" }, `Batch ${batch}`, testing() ? " (test mode)" : ""),
          h(
            "p",
            { class: ok ? "form-message ok" : "warning", role: "status", "data-testid": "bulk-summary" },
            `${count(tally.rows, "row")}: ${tally.boughtNow} bought now (${
              ghs(spent)
            }), ${tally.boughtBefore} bought before, ${count(tally.failedOrders, "order")} failed and refunded, ${
              count(tally.errors, "error")
            }, ${tally.notBought} not bought.`
          ),
          stoppedBy === undefined
            ? null
            : h(
              "p",
              { class: "form-message", role: "alert" },
              `The run stopped: ${stoppedBy} Fix that, then check the same file again: rows already bought are skipped.`
            ),
          h(
            "div",
            { class: "actions" },
            file,
            h("a", { href: pathOf("orders"), class: "button secondary" }, "See the orders")
          ),
          list({
            caption: "Every row of the file and what became of it",
            empty: "No rows.",
            testId: "bulk-results",
            rows: results,
            columns: [
              { label: "Line", place: "title", cell: (r) => `Line ${r.row.line}` },
              { label: "Result", place: "badge", cell: (r) => resultStatus(r.outcome) },
              { label: "Bundle", place: "line", cell: (r) => r.row.entry.bundle.name },
              { label: "Number", place: "line", cell: (r) => r.row.phone },
              {
                label: "Paid",
                place: "amount",
                numeric: true,
                cell: (r) => {
                  const order = Bulk.orderOf(r.outcome)
                  return order === undefined ? "—" : ghs(order.amount_paid)
                }
              },
              {
                label: "Order",
                cell: (r) => {
                  const order = Bulk.orderOf(r.outcome)
                  return order === undefined
                    ? ""
                    : h("a", { href: pathOf("order", { number: order.order_number }) }, order.order_number)
                }
              },
              { label: "Message", cell: (r) => r.outcome._tag === "Error" ? r.outcome.message : "" }
            ]
          })
        )
      )
      ;(review.querySelector("h2") as HTMLElement).focus()
    }

    return h(
      "div",
      null,
      h("h1", null, testing() ? "Bulk purchase (test mode)" : "Bulk purchase"),
      h(
        "p",
        { class: "muted" },
        "A file of bundle_id and phone_number rows (a header row is optional). Every row is checked, and you see the total, before anything is bought."
      ),
      upload.element,
      review
    )
  }
}

/** A result as a coloured word. */
const resultStatus = (outcome: Bulk.Outcome<number>): Node => {
  const word = resultWord(outcome)
  return h(
    "span",
    {
      class: `status status-${
        word === "bought" || word === "bought before" ? "successful" : word === "not bought" ? "pending" : "failed"
      }`
    },
    word
  )
}
