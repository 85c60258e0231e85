/**
 * Bulk purchases from a spreadsheet, as the `bundles bulk` command and the web dashboard both
 * make them: one reading of the file (CSV as spreadsheets save it: commas, semicolons or tabs,
 * a BOM, CRLF), one check of every row before anything is bought, one reference per row
 * derived from the batch (so any re-run of the file buys only what is not bought yet), and one
 * results file; the pacing under the rate limit is `Pacing`.
 *
 * Plain TypeScript with Web Crypto, no Effect, so a browser page imports it without the
 * Effect runtime (the dashboard's budget); the command line wraps it in its own effects.
 */
import { REFERENCE_PATTERN, REFERENCE_RULE } from "@databundle/contract/OrderTerms"
import { parsePhone, prefixNotice, printable } from "./Phone.js"

/** A record of the file and the line it starts on (1-based; a quoted field may span lines). */
export interface CsvRecord {
  readonly line: number
  readonly cells: ReadonlyArray<string>
}

/** Something wrong (or worth a look) in the file, at a line. */
export interface Issue {
  readonly line: number
  readonly message: string
}

/** The separators a spreadsheet saves a CSV file with: Excel uses `;` where the decimal mark is a comma. */
export type Delimiter = "," | ";" | "\t"

/**
 * The separator of a file, from its first record: the one of `,`, `;` and tab that occurs
 * most outside quotes (a comma on a tie or when none does).
 */
export const detectDelimiter = (text: string): Delimiter => {
  const counts = { ",": 0, ";": 0, "\t": 0 }
  let quoted = false
  for (const char of text.replace(/^\uFEFF/, "")) {
    if (char === "\"") quoted = !quoted
    else if (!quoted && (char === "\n" || char === "\r")) {
      if (counts[","] + counts[";"] + counts["\t"] > 0) break
    } else if (!quoted && char in counts) counts[char as Delimiter]++
  }
  const [best] = (Object.entries(counts) as Array<[Delimiter, number]>).sort((a, b) => b[1] - a[1])
  return best![1] > counts[","] ? best![0] : ","
}

/**
 * Splits CSV text into records (RFC 4180: quoted fields with `""` for a quote, separators and
 * line breaks inside quotes; LF, CRLF or CR line ends; a leading BOM), separated by commas,
 * semicolons or tabs (named by Excel's `sep=` line, else found from the first record unless
 * given). Blank lines are skipped.
 */
export const parseCsv = (
  input: string,
  delimiter: Delimiter = detectDelimiter(input)
): { readonly records: Array<CsvRecord>; readonly errors: Array<Issue> } => {
  let text = input.startsWith("\uFEFF") ? input.slice(1) : input
  // Excel's `sep=;` first line names the separator; it is left out as a blank line (line numbers stay).
  const hint = /^sep=([,;\t])(?=\r?\n|$)/.exec(text)
  if (hint !== null) {
    delimiter = hint[1] as Delimiter
    text = text.slice(hint[0].length)
  }
  const records: Array<CsvRecord> = []
  const errors: Array<Issue> = []
  let line = 1
  let i = 0
  while (i < text.length) {
    const start = line
    const cells: Array<string> = []
    let cell = ""
    let quoted = false
    let broken = false
    for (;;) {
      const char = text[i]
      if (char === undefined) {
        if (quoted) {
          errors.push({ line: start, message: "a quoted field is not closed" })
          broken = true
        }
        break
      }
      if (quoted) {
        if (char === "\"") {
          if (text[i + 1] === "\"") {
            cell += "\""
            i += 2
          } else {
            quoted = false
            i++
            // After a closing quote only spaces may come before the next separator or line end.
            while (text[i] === " " || (text[i] === "\t" && delimiter !== "\t")) i++
            if (text[i] !== undefined && text[i] !== delimiter && text[i] !== "\n" && text[i] !== "\r") {
              errors.push({ line: start, message: "unexpected text after a closing quote" })
              broken = true
              while (text[i] !== undefined && text[i] !== "\n" && text[i] !== "\r") i++
            }
          }
          continue
        }
        if (char === "\n" || (char === "\r" && text[i + 1] !== "\n")) line++
        cell += char
        i++
        continue
      }
      if (char === "\"" && cell.trim() === "") {
        quoted = true
        cell = ""
        i++
        continue
      }
      if (char === delimiter) {
        cells.push(cell)
        cell = ""
        i++
        continue
      }
      if (char === "\r" || char === "\n") {
        i += char === "\r" && text[i + 1] === "\n" ? 2 : 1
        line++
        break
      }
      cell += char
      i++
    }
    cells.push(cell)
    const trimmed = cells.map((c) => c.trim())
    if (!broken && trimmed.some((c) => c !== "")) records.push({ line: start, cells: trimmed })
  }
  return { records, errors }
}

/**
 * The text of a bulk file as spreadsheets save it: UTF-8 (with or without a BOM), or UTF-16
 * with its BOM (Excel's "Unicode Text", tab separated). A workbook (`.xlsx`, `.xls`, `.ods`)
 * is refused with how to save it as CSV: reading workbooks would take a large dependency for
 * what "Save As CSV" does (see docs/cli.md).
 */
export const decodeFile = (
  bytes: Uint8Array,
  name: string
): { readonly _tag: "Text"; readonly text: string } | { readonly _tag: "Refused"; readonly message: string } => {
  const starts = (...magic: ReadonlyArray<number>) => magic.every((byte, i) => bytes[i] === byte)
  const zip = starts(0x50, 0x4b, 0x03, 0x04)
  const ole = starts(0xd0, 0xcf, 0x11, 0xe0)
  if (zip || ole || /\.(xlsx|xlsm|xls|ods|numbers)$/i.test(name)) {
    const kind = ole || /\.xls$/i.test(name) ? "an Excel 97-2003 workbook (.xls)" : /\.ods$/i.test(name)
      ? "an OpenDocument spreadsheet (.ods)"
      : /\.numbers$/i.test(name)
      ? "a Numbers spreadsheet"
      : "an Excel workbook (.xlsx)"
    return {
      _tag: "Refused",
      message: `${printable(name)} is ${kind}, not a CSV file. Save it as CSV first: in Excel, File > Save As > ` +
        `"CSV UTF-8 (Comma delimited) (*.csv)"; in Google Sheets, File > Download > "Comma-separated values"; ` +
        `in LibreOffice, File > Save As > "Text CSV". Then use the .csv file.`
    }
  }
  if (starts(0xff, 0xfe)) return { _tag: "Text", text: new TextDecoder("utf-16le").decode(bytes.subarray(2)) }
  if (starts(0xfe, 0xff)) return { _tag: "Text", text: new TextDecoder("utf-16be").decode(bytes.subarray(2)) }
  return { _tag: "Text", text: new TextDecoder("utf-8").decode(bytes) }
}

/** The columns a row may have, with the header names each accepts. */
const COLUMNS = {
  bundle: ["bundle_id", "bundle", "bundleid"],
  phone: ["phone_number", "phone", "phonenumber", "number", "msisdn"],
  reference: ["reference", "ref"]
} as const

type Column = keyof typeof COLUMNS

const columnOf = (name: string): Column | undefined => {
  const key = name.toLowerCase().replace(/[\s-]+/g, "_")
  return (Object.keys(COLUMNS) as Array<Column>).find((column) =>
    (COLUMNS[column] as ReadonlyArray<string>).includes(key)
  )
}

/**
 * A bundle of the catalogue with its network, as far as the check reads them; each surface
 * keeps its own richer type (prices as pesewas or as cedis) and gets it back in the rows.
 */
export interface Entry {
  readonly bundle: { readonly id: number; readonly name: string; readonly is_active: boolean }
  readonly network: { readonly name: string; readonly slug: string }
}

/** A row ready to buy. */
export interface Row<E extends Entry = Entry> {
  /** Its line in the file. */
  readonly line: number
  readonly entry: E
  /** The number in the API's local form (`0241234567`). */
  readonly phone: string
  /** The reference it is bought under: the file's, or the derived one. */
  readonly reference: string
  /** The reference came from the file. */
  readonly explicit: boolean
}

/** The whole file, checked. */
export interface Checked<E extends Entry = Entry> {
  /** Every valid row, in file order. */
  readonly rows: ReadonlyArray<Row<E>>
  /** Problems that stop the batch, in file order. */
  readonly errors: ReadonlyArray<Issue>
  /** Things worth a look that do not stop it. */
  readonly warnings: ReadonlyArray<Issue>
}

/** The batch's name in a reference: lowercase letters, digits and dashes, at most 24 characters. */
export const batchSlug = (batch: string): string =>
  batch.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "").slice(0, 24).replace(/-+$/, "") || "batch"

/** What every derived reference of a batch starts with, so one filtered listing finds them all. */
export const batchPrefix = (batch: string): string => `b:${batchSlug(batch)}:`

/**
 * The reference of a row without its own: `b:<batch slug>:<32 hex digits>`, the digits from
 * SHA-256 of the whole batch name, the bundle id, the number and the occurrence (1 for the
 * first row with that bundle and number, 2 for the next, ...). At most 59 characters of the
 * API's alphabet.
 */
export const deriveReference = async (
  batch: string,
  bundleId: number,
  phone: string,
  occurrence: number
): Promise<string> => {
  const digest = await globalThis.crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${batch}\n${bundleId}\n${phone}\n${occurrence}`)
  )
  let hex = ""
  for (const byte of new Uint8Array(digest, 0, 16)) hex += byte.toString(16).padStart(2, "0")
  return `${batchPrefix(batch)}${hex}`
}

/** The default batch name: the file's name without its directory and extension. */
export const defaultBatch = (file: string): string => {
  const base = file.split(/[\\/]/).pop() ?? file
  return base.replace(/\.[^.]*$/, "") || base
}

const quote = (text: string) => JSON.stringify(printable(text.length > 40 ? `${text.slice(0, 40)}…` : text))

/**
 * Reads and checks a bulk file against the catalogue (`byId`: every bundle of the active
 * networks by id): every problem of every line at once. Identical rows (same bundle and
 * number) are separate purchases, numbered by occurrence, and reported as warnings; a
 * reference given twice is an error.
 */
export const check = async <E extends Entry>(
  text: string,
  byId: ReadonlyMap<number, E>,
  batch: string
): Promise<Checked<E>> => {
  const { errors, records } = parseCsv(text)
  const warnings: Array<Issue> = []
  const rows: Array<Row<E>> = []
  if (records.length === 0) {
    return { rows, errors: [...errors, { line: 1, message: "the file has no rows" }], warnings }
  }

  // A header names its columns (any order, unknown ones ignored); without one the columns are positional.
  let positions: Partial<Record<Column, number>> = { bundle: 0, phone: 1, reference: 2 }
  let width = 3
  let data = records
  const first = records[0]!
  if (!/^\d+$/.test(first.cells[0] ?? "")) {
    data = records.slice(1)
    positions = {}
    width = Number.POSITIVE_INFINITY
    const ignored: Array<string> = []
    first.cells.forEach((name, index) => {
      const column = columnOf(name)
      if (column === undefined) ignored.push(name)
      else if (positions[column] !== undefined) {
        errors.push({ line: first.line, message: `the header names the ${column} column twice` })
      } else positions[column] = index
    })
    if (positions.bundle === undefined || positions.phone === undefined) {
      errors.push({
        line: first.line,
        message: `the header must name a bundle_id and a phone_number column (found: ${
          first.cells.map(printable).join(", ")
        })`
      })
      return { rows, errors, warnings }
    }
    if (ignored.length > 0) {
      warnings.push({ line: first.line, message: `ignoring columns ${ignored.map(printable).join(", ")}` })
    }
  }

  const occurrences = new Map<string, Array<number>>()
  const references = new Map<string, number>()
  const parsed: Array<{ line: number; entry: E; phone: string; reference: string | undefined; key: string }> = []
  for (const { cells, line } of data) {
    if (cells.length > width) {
      errors.push({ line, message: `expected bundle_id,phone_number[,reference], found ${cells.length} columns` })
      continue
    }
    const cell = (column: Column) => positions[column] === undefined ? "" : (cells[positions[column]!] ?? "")
    const problems: Array<string> = []

    const bundleText = cell("bundle")
    let entry: E | undefined
    if (!/^\d+$/.test(bundleText)) {
      problems.push(bundleText === "" ? "the bundle id is missing" : `${quote(bundleText)} is not a bundle id`)
    } else {
      entry = byId.get(Number(bundleText))
      if (entry === undefined) problems.push(`bundle ${bundleText} is not in the catalogue of active networks`)
      else if (!entry.bundle.is_active) {
        problems.push(`bundle ${bundleText} (${printable(entry.bundle.name)}) is not available at the moment`)
      }
    }

    const phoneText = cell("phone")
    const phone = parsePhone(phoneText)
    if (phone === undefined) {
      problems.push(
        phoneText === "" ? "the phone number is missing" : `${quote(phoneText)} is not a Ghana mobile number`
      )
    }

    const referenceText = cell("reference")
    if (referenceText !== "" && !REFERENCE_PATTERN.test(referenceText)) {
      problems.push(`reference ${quote(referenceText)} ${REFERENCE_RULE}`)
    } else if (referenceText !== "") {
      const earlier = references.get(referenceText)
      if (earlier !== undefined) problems.push(`reference ${referenceText} is also on line ${earlier}`)
      else references.set(referenceText, line)
    }

    if (problems.length > 0 || entry === undefined || phone === undefined) {
      for (const message of problems) errors.push({ line, message })
      continue
    }
    const mismatch = prefixNotice(phone, entry.network, entry.bundle.name)
    if (mismatch !== undefined) warnings.push({ line, message: mismatch })
    const key = `${entry.bundle.id}\n${phone.local}`
    const lines = occurrences.get(key) ?? []
    if (lines.length > 0) {
      warnings.push({ line, message: `same bundle and number as line ${lines[0]}: bought as a separate purchase` })
    }
    lines.push(line)
    occurrences.set(key, lines)
    parsed.push({ line, entry, phone: phone.local, reference: referenceText === "" ? undefined : referenceText, key })
  }

  // Occurrences count every row with the same bundle and number, with or without its own
  // reference, so giving one of them a reference later does not shift the others' numbers.
  const seen = new Map<string, number>()
  for (const row of parsed) {
    const occurrence = (seen.get(row.key) ?? 0) + 1
    seen.set(row.key, occurrence)
    rows.push({
      line: row.line,
      entry: row.entry,
      phone: row.phone,
      reference: row.reference ?? await deriveReference(batch, row.entry.bundle.id, row.phone, occurrence),
      explicit: row.reference !== undefined
    })
  }
  errors.sort((a, b) => a.line - b.line)
  warnings.sort((a, b) => a.line - b.line)
  return { rows, errors, warnings }
}

/**
 * How to find which rows of a batch were bought already, by reference, in the fewest requests.
 * The derived references by one listing filtered on the batch's prefix; the file's own
 * references by whichever costs fewer requests, every page of the account's orders (`total`
 * of them, `perPage` a page) or one filtered lookup per row. Orders placed meanwhile only push
 * older ones to later pages, so paging a listing to its end never misses one.
 */
export interface BatchLookup {
  /** Listings to read to their last page, each keeping the orders whose reference it wants. */
  readonly listings: ReadonlyArray<{
    readonly filter: { readonly reference_prefix?: string }
    readonly wanted: ReadonlySet<string>
  }>
  /** References to look up one request each. */
  readonly single: ReadonlyArray<string>
}

/** Whether `batchLookup` needs the account's order count: only for rows with their own references. */
export const needsOrderCount = (rows: ReadonlyArray<Row>): boolean => rows.some((row) => row.explicit)

/** The lookups of `BatchLookup` for `rows` of `batch`, given the account's order count. */
export const batchLookup = (rows: ReadonlyArray<Row>, batch: string, total: number, perPage: number): BatchLookup => {
  const listings: Array<BatchLookup["listings"][number]> = []
  const derived = rows.filter((row) => !row.explicit)
  if (derived.length > 0) {
    listings.push({
      filter: { reference_prefix: batchPrefix(batch) },
      wanted: new Set(derived.map((r) => r.reference))
    })
  }
  const explicit = rows.filter((row) => row.explicit).map((row) => row.reference)
  if (explicit.length === 0 || total === 0) return { listings, single: [] }
  if (Math.ceil(total / perPage) <= explicit.length) {
    listings.push({ filter: {}, wanted: new Set(explicit) })
    return { listings, single: [] }
  }
  return { listings, single: explicit }
}

/** An order a batch finds under a row's reference, as far as `reusedReferences` reads it. */
export interface FoundOrder {
  readonly order_number: string
  readonly bundle: string
  readonly phone_number: string
}

/**
 * The rows whose own reference (given in the file) an earlier order used for another purchase
 * (another bundle or number): each an issue to fix before anything is bought. A derived
 * reference names its row's bundle and number, so only a given one can clash.
 */
export const reusedReferences = (
  rows: ReadonlyArray<Row>,
  found: ReadonlyMap<string, FoundOrder>
): Array<Issue> =>
  rows.flatMap((row) => {
    const order = found.get(row.reference)
    const same = order !== undefined && parsePhone(order.phone_number)?.local === row.phone &&
      order.bundle === row.entry.bundle.name
    return order === undefined || !row.explicit || same ? [] : [{
      line: row.line,
      message: `reference ${row.reference} was used before for ${order.order_number} (${printable(order.bundle)} for ${
        printable(order.phone_number)
      }): give this row another reference`
    }]
  })

/** The order a row was bought with, as far as the results read it (`A`: the surface's amount). */
export interface BoughtOrder<A> {
  readonly order_number: string
  readonly status: "pending" | "successful" | "failed"
  readonly amount_paid: A
}

/** What became of a row. */
export type Outcome<A> =
  /** Bought by this run (`replayed`: the API already had it, from a run the pre-check did not see). */
  | { readonly _tag: "Bought"; readonly order: BoughtOrder<A>; readonly replayed: boolean }
  /** Bought by an earlier run of the batch; skipped. */
  | { readonly _tag: "Earlier"; readonly order: BoughtOrder<A> }
  /** The API refused it, or the call failed. */
  | { readonly _tag: "Error"; readonly message: string }
  /** Not tried: the run stopped first. */
  | { readonly _tag: "NotBought" }

/** A row and what became of it. */
export interface Result<A, E extends Entry = Entry> {
  readonly row: Row<E>
  readonly outcome: Outcome<A>
}

/** The order of an outcome, if it has one. */
export const orderOf = <A>(outcome: Outcome<A>): BoughtOrder<A> | undefined =>
  outcome._tag === "Bought" || outcome._tag === "Earlier" ? outcome.order : undefined

/** A row counts as done when it has an order that did not fail. */
export const isDone = <A>(outcome: Outcome<A>): boolean => {
  const order = orderOf(outcome)
  return order !== undefined && order.status !== "failed"
}

/** What a run's results add up to: every row counted once, under what truly became of it. */
export interface Tally {
  readonly rows: number
  /** Bought by this run (an order was placed and charged, whatever its status now). */
  readonly boughtNow: number
  /** Bought before: by an earlier run, or replayed by the API. */
  readonly boughtBefore: number
  /** Rows whose order failed (refunded), bought now or before. */
  readonly failedOrders: number
  /** Rows the API refused, or whose call failed. */
  readonly errors: number
  /** Rows not tried: the run stopped first. */
  readonly notBought: number
}

/** Counts a run's results. */
export const tally = <A>(results: ReadonlyArray<Result<A, Entry>>): Tally => {
  let boughtNow = 0
  let boughtBefore = 0
  let failedOrders = 0
  let errors = 0
  let notBought = 0
  for (const { outcome } of results) {
    if (outcome._tag === "Bought" && !outcome.replayed) boughtNow++
    else if (outcome._tag === "Bought" || outcome._tag === "Earlier") boughtBefore++
    else if (outcome._tag === "Error") errors++
    else notBought++
    if (orderOf(outcome)?.status === "failed") failedOrders++
  }
  return { rows: results.length, boughtNow, boughtBefore, failedOrders, errors, notBought }
}

/** The columns of the results CSV. */
export const RESULT_COLUMNS = [
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

/** A result as the results CSV (and the command line's `--json`) show it. */
export const resultFields = <A>({ outcome, row }: Result<A, Entry>) => {
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

/**
 * A CSV cell: quoted when it holds a quote, a separator or a line break; text a spreadsheet
 * would run as a formula (a leading `=`, `+`, `-` or `@` that is not a number) starts with `'`.
 */
export const csvCell = (value: string | number | null | undefined): string => {
  const text = value === null || value === undefined ? "" : String(value)
  const safe = /^[=+\-@]/.test(text) && !/^-?\d/.test(text) ? `'${text}` : text
  return /[",;\r\n]/.test(safe) ? `"${safe.replace(/"/g, "\"\"")}"` : safe
}

/** A CSV text of a header and rows, CRLF line ends as spreadsheets expect. */
export const toCsv = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string | number | null | undefined>>
): string => [header, ...rows].map((row) => `${row.map(csvCell).join(",")}\r\n`).join("")
