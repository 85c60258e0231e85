/**
 * The outcome of every row of a bulk run, and the results CSV it is written to: one line per
 * row of the file, in file order, whether bought now, bought by an earlier run, or not bought.
 */
import { formatCedis } from "@databundle/client/Money"
import type { OrderStatus } from "@databundle/client/OrderTerms"
import { problem } from "@databundle/terminal/Failure"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import type { Row } from "./BulkFile.js"

/** The order a row was bought with. */
export interface BoughtOrder {
  readonly order_number: string
  readonly status: OrderStatus
  readonly amount_paid: bigint
}

/** What became of a row. */
export type Outcome =
  /** Bought by this run (`replayed`: the API already had it, from a run the pre-check did not see). */
  | { readonly _tag: "Bought"; readonly order: BoughtOrder; readonly replayed: boolean }
  /** Bought by an earlier run of the batch; skipped. */
  | { readonly _tag: "Earlier"; readonly order: BoughtOrder }
  /** The API refused it, or the call failed. */
  | { readonly _tag: "Error"; readonly message: string }
  /** Not tried: the run stopped first. */
  | { readonly _tag: "NotBought" }

/** A row and what became of it. */
export interface Result {
  readonly row: Row
  readonly outcome: Outcome
}

/** The order of an outcome, if it has one. */
export const orderOf = (outcome: Outcome): BoughtOrder | undefined =>
  outcome._tag === "Bought" || outcome._tag === "Earlier" ? outcome.order : undefined

/** A row counts as done when it has an order that did not fail. */
export const isDone = (outcome: Outcome): boolean => {
  const order = orderOf(outcome)
  return order !== undefined && order.status !== "failed"
}

/** The columns of the results CSV. */
export const HEADER = [
  "row",
  "bundle_id",
  "phone_number",
  "reference",
  "order_number",
  "status",
  "amount",
  "bought",
  "error"
] as const

/** A result as the results CSV (and `--json`) show it. */
export const fieldsOf = ({ outcome, row }: Result) => {
  const order = orderOf(outcome)
  return {
    row: row.line,
    bundle_id: row.entry.bundle.id,
    phone_number: row.phone,
    reference: row.reference,
    order_number: order?.order_number ?? null,
    status: order?.status ?? (outcome._tag === "Error" ? "error" : "not_bought"),
    amount: order?.amount_paid ?? null,
    bought: outcome._tag === "Bought" && !outcome.replayed ? "now" : order !== undefined ? "earlier" : null,
    error: outcome._tag === "Error" ? outcome.message : null
  }
}

const csvCell = (value: unknown): string => {
  const text = value === null || value === undefined
    ? ""
    : typeof value === "bigint"
    ? formatCedis(value)
    : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

/** The results CSV text, header first, CRLF line ends as spreadsheets expect. */
export const toCsv = (results: ReadonlyArray<Result>): string =>
  [
    HEADER.join(","),
    ...results.map((result) => {
      const fields = fieldsOf(result)
      return HEADER.map((column) => csvCell(fields[column])).join(",")
    })
  ]
    .map((line) => `${line}\r\n`).join("")

/** Writes the results CSV whole, then renames it into place, so a reader never sees half a file. */
export const write = (file: string, results: ReadonlyArray<Result>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const temporary = `${file}.${process.pid}.tmp`
    yield* fs.writeFileString(temporary, toCsv(results))
    yield* fs.rename(temporary, file)
  }).pipe(Effect.mapError((error) => problem(`Cannot write the results file ${file}: ${error.message}`)))
