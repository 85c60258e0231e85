/**
 * Bulk purchases from a CSV file of `bundle_id,phone_number[,reference]` (a header row naming
 * the columns is optional), with the CLI's never-twice semantics: a row without a reference
 * gets one derived from the batch name, the bundle, the number in the API's form and which
 * occurrence of that pair it is (`b:<batch>:<32 hex of SHA-256>`, the same as `bundles bulk`
 * makes), so the same file uploaded again, from the dashboard or the CLI, finds its rows
 * already bought and buys only the rest. The batch name defaults to the file's name.
 */
import {
  batchPrefix as prefixOf,
  batchSlug as slug,
  deriveReference as derive,
  parseCsv,
  toCsv
} from "@databundle/client/Bulk"
import { MAX_PER_PAGE } from "@databundle/client/OrderTerms"
import { parsePhone } from "@databundle/client/Phone"
import { ApiFailure } from "../Api.js"
import type { Page } from "../App.js"
import { ghs, h, replace } from "../Dom.js"
import { download } from "../Download.js"
import { api, type Bundle, type Order } from "../Endpoints.js"
import { form } from "../Form.js"

interface Row {
  readonly line: number
  readonly bundle: Bundle & { readonly network: string }
  readonly phone: string
  readonly reference: string
}

interface Outcome {
  readonly row: Row
  readonly result: "bought" | "already bought" | "failed"
  readonly order?: Order
  readonly message?: string
}

export const bulk: Page = {
  title: "Bulk purchase",
  render: async () => {
    const { networks } = await api.networks()
    const catalogue = new Map<number, Bundle & { readonly network: string }>()
    for (const network of networks) {
      for (const b of (await api.bundles({ path: { network_id: network.id } })).bundles) {
        catalogue.set(b.id, { ...b, network: network.name })
      }
    }
    const progress = h("progress", { max: "1", value: "0", hidden: true, "aria-label": "Bulk purchase progress" })
    const results = h("div", { "aria-live": "polite" })
    const upload = form({
      label: "Bulk purchase",
      submit: "Check and buy",
      pending: "Working through the file…",
      fields: [
        {
          name: "file",
          label: "CSV file",
          type: "file",
          attrs: { accept: ".csv,text/csv" },
          hint: "Columns: bundle_id, phone_number, and optionally reference"
        },
        {
          name: "batch",
          label: "Batch name",
          required: false,
          hint: "Defaults to the file's name. The same file and batch never buy a row twice."
        }
      ],
      extra: progress,
      onSubmit: async (values, f) => {
        const file = (f.input("file") as HTMLInputElement).files?.[0]
        if (!file) return f.showErrors({ file: ["Choose a CSV file"] })
        const batch = (values.batch?.trim() || file.name.replace(/\.[^.]*$/, "") || file.name).trim()
        const { records } = parseCsv(await file.text())
        const errors: Array<string> = []
        let data = records
        let cols = { bundle: 0, phone: 1, reference: 2 as number | undefined }
        if (records.length > 0 && !/^\d+$/.test(records[0]!.cells[0] ?? "")) {
          const names = records[0]!.cells.map((c) => c.toLowerCase())
          const at = (...options: Array<string>) => names.findIndex((n) => options.includes(n))
          cols = {
            bundle: at("bundle_id", "bundle"),
            phone: at("phone_number", "phone", "number"),
            reference: at("reference")
          }
          if (cols.reference === -1) cols.reference = undefined
          if (cols.bundle < 0 || cols.phone < 0) {
            errors.push("line 1: the header must name bundle_id and phone_number columns")
          }
          data = records.slice(1)
        }
        if (data.length === 0) errors.push("the file has no rows")
        const seen = new Map<string, number>()
        const rows: Array<Row> = []
        for (const record of data) {
          const bundle = catalogue.get(Number(record.cells[cols.bundle] ?? ""))
          const phone = parsePhone(record.cells[cols.phone] ?? "")
          const given = cols.reference === undefined ? "" : record.cells[cols.reference] ?? ""
          if (bundle === undefined) errors.push(`line ${record.line}: no bundle ${record.cells[cols.bundle] ?? ""}`)
          else if (!bundle.is_active) errors.push(`line ${record.line}: ${bundle.name} cannot be bought now`)
          if (phone === undefined) {
            errors.push(`line ${record.line}: "${record.cells[cols.phone] ?? ""}" is not a Ghana mobile number`)
          }
          if (bundle === undefined || phone === undefined || !bundle.is_active) continue
          const key = `${bundle.id}\n${phone.local}`
          const occurrence = (seen.get(key) ?? 0) + 1
          seen.set(key, occurrence)
          rows.push({
            line: record.line,
            bundle,
            phone: phone.local,
            reference: given !== "" ? given : await derive(batch, bundle.id, phone.local, occurrence)
          })
        }
        if (errors.length > 0) {
          f.showErrors(
            { file: errors.slice(0, 20) },
            `The file was not bought: ${errors.length} problem(s), nothing was charged.`
          )
          return
        }
        // What the batch already bought: one listing by the batch's reference prefix, then each own reference.
        const found = new Map<string, Order>()
        for (let page = 1, last = 1; page <= last; page++) {
          const answer = await api.orders({
            query: { reference_prefix: prefixOf(batch), per_page: MAX_PER_PAGE, page }
          })
          for (const order of answer.orders) if (order.reference) found.set(order.reference, order)
          last = answer.pagination.last_page
        }
        for (const row of rows) {
          if (row.reference.startsWith(prefixOf(batch)) || found.has(row.reference)) continue
          const answer = await api.orders({ query: { reference: row.reference, per_page: 1 } })
          if (answer.orders[0]) found.set(row.reference, answer.orders[0])
        }
        const outcomes: Array<Outcome> = []
        progress.hidden = false
        progress.max = rows.length
        for (const [i, row] of rows.entries()) {
          progress.value = i
          const earlier = found.get(row.reference)
          if (earlier) {
            outcomes.push({ row, result: "already bought", order: earlier })
            continue
          }
          try {
            const placed = await api.placeOrder({
              payload: { bundle_id: row.bundle.id, phone_number: row.phone, reference: row.reference }
            })
            outcomes.push({ row, result: placed.replayed ? "already bought" : "bought", order: placed.order })
          } catch (error) {
            outcomes.push({ row, result: "failed", message: error instanceof Error ? error.message : String(error) })
            // No money or no answer: stop, and the same upload again resumes here.
            if (error instanceof ApiFailure && (error.status === 0 || error.tag === "InsufficientBalance")) break
          }
        }
        progress.value = rows.length
        showResults(batch, outcomes, rows.length)
      }
    })

    const showResults = (batch: string, outcomes: ReadonlyArray<Outcome>, total: number) => {
      const count = (r: Outcome["result"]) => outcomes.filter((o) => o.result === r).length
      const button = h("button", { type: "button", class: "secondary" }, "Download results (CSV)")
      button.addEventListener("click", () =>
        download(
          `${slug(batch)}-results.csv`,
          toCsv(
            [
              "line",
              "bundle_id",
              "phone_number",
              "reference",
              "result",
              "order_number",
              "status",
              "amount_paid",
              "message"
            ],
            outcomes.map((o) => [
              o.row.line,
              o.row.bundle.id,
              o.row.phone,
              o.row.reference,
              o.result,
              o.order?.order_number ?? "",
              o.order?.status ?? "",
              o.order ? o.order.amount_paid.toFixed(2) : "",
              o.message ?? ""
            ])
          )
        ))
      replace(
        results,
        h("h2", { tabindex: "-1" }, `Batch ${batch}`),
        h(
          "p",
          { role: "status", "data-testid": "bulk-summary" },
          `${total} row(s): ${count("bought")} bought now, ${count("already bought")} already bought, ${
            count("failed")
          } failed.`,
          outcomes.length < total ? ` Stopped after ${outcomes.length}: upload the same file again to go on.` : ""
        ),
        button,
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            null,
            h(
              "thead",
              null,
              h("tr", null, ["Line", "Bundle", "Number", "Result", "Order"].map((t) => h("th", { scope: "col" }, t)))
            ),
            h(
              "tbody",
              null,
              outcomes.map((o) =>
                h(
                  "tr",
                  null,
                  h("td", null, o.row.line),
                  h("td", null, `${o.row.bundle.name} (${ghs(o.row.bundle.price)})`),
                  h("td", null, o.row.phone),
                  h("td", null, o.result, o.message ? `: ${o.message}` : ""),
                  h("td", null, o.order ? `${o.order.order_number} (${o.order.status})` : "")
                )
              )
            )
          )
        )
      )
      ;(results.querySelector("h2") as HTMLElement).focus()
    }

    return h(
      "div",
      null,
      h("h1", null, "Bulk purchase"),
      h(
        "p",
        { class: "muted" },
        "Upload a CSV file of bundle_id,phone_number rows. Every row is checked before anything is bought."
      ),
      upload.element,
      results
    )
  }
}
