/**
 * The bulk file: CSV rows of `bundle_id,phone_number[,reference]`, read and checked whole
 * before anything is bought, and the reference each row is bought under.
 *
 * A row without its own reference gets one derived from the batch name and the row itself
 * (bundle, number in the API's form, and which occurrence of that bundle and number it is in
 * the file), so the same file bought again, after a crash or with rows appended or moved,
 * maps every row to the reference it was bought under, and the API replays instead of
 * buying. Another batch name gives other references: next month's file buys again.
 */
import { REFERENCE_PATTERN, REFERENCE_RULE } from "@databundle/client/OrderTerms"
import { parsePhone } from "@databundle/client/Phone"
import { createHash } from "node:crypto"
import * as Catalogue from "./Catalogue.js"
import * as Output from "./Output.js"

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
      message: `${name} is ${kind}, not a CSV file. Save it as CSV first: in Excel, File > Save As > ` +
        `"CSV UTF-8 (Comma delimited) (*.csv)"; in Google Sheets, File > Download > "Comma-separated values"; ` +
        `in LibreOffice, File > Save As > "Text CSV". Then run bundles bulk with the .csv file.`
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

/** A row ready to buy. */
export interface Row {
  /** Its line in the file. */
  readonly line: number
  readonly entry: Catalogue.Entry
  /** The number in the API's local form (`0241234567`). */
  readonly phone: string
  /** The reference it is bought under: the file's, or the derived one. */
  readonly reference: string
  /** The reference came from the file. */
  readonly explicit: boolean
}

/** The whole file, checked. */
export interface Checked {
  /** Every valid row, in file order. */
  readonly rows: ReadonlyArray<Row>
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
export const deriveReference = (batch: string, bundleId: number, phone: string, occurrence: number): string => {
  const digest = createHash("sha256").update(`${batch}\n${bundleId}\n${phone}\n${occurrence}`).digest("hex")
  return `${batchPrefix(batch)}${digest.slice(0, 32)}`
}

/** The default batch name: the file's name without its directory and extension. */
export const defaultBatch = (file: string): string => {
  const base = file.split(/[\\/]/).pop() ?? file
  return base.replace(/\.[^.]*$/, "") || base
}

/**
 * Reads and checks a bulk file against the catalogue: every problem of every line at once.
 * Identical rows (same bundle and number) are separate purchases, numbered by occurrence, and
 * reported as warnings; a reference given twice is an error.
 */
export const check = (text: string, catalogue: Catalogue.Catalogue, batch: string): Checked => {
  const { errors, records } = parseCsv(text)
  const warnings: Array<Issue> = []
  const rows: Array<Row> = []
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
          first.cells.map(Output.clean).join(", ")
        })`
      })
      return { rows, errors, warnings }
    }
    if (ignored.length > 0) {
      warnings.push({ line: first.line, message: `ignoring columns ${ignored.map(Output.clean).join(", ")}` })
    }
  }

  const occurrences = new Map<string, Array<number>>()
  const references = new Map<string, number>()
  const parsed: Array<
    { line: number; entry: Catalogue.Entry; phone: string; reference: string | undefined; key: string }
  > = []
  for (const { cells, line } of data) {
    if (cells.length > width) {
      errors.push({ line, message: `expected bundle_id,phone_number[,reference], found ${cells.length} columns` })
      continue
    }
    const cell = (column: Column) => positions[column] === undefined ? "" : (cells[positions[column]!] ?? "")
    const problems: Array<string> = []

    const bundleText = cell("bundle")
    let entry: Catalogue.Entry | undefined
    if (!/^\d+$/.test(bundleText)) {
      problems.push(bundleText === "" ? "the bundle id is missing" : `${quote(bundleText)} is not a bundle id`)
    } else {
      entry = catalogue.byId.get(Number(bundleText))
      if (entry === undefined) problems.push(`bundle ${bundleText} is not in the catalogue of active networks`)
      else if (!entry.bundle.is_active) {
        problems.push(`bundle ${bundleText} (${Output.clean(entry.bundle.name)}) is not available at the moment`)
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
    const mismatch = Catalogue.networkMismatch(phone, entry)
    if (mismatch !== undefined) warnings.push({ line, message: mismatch })
    const key = `${entry.bundle.id}\n${phone.local}`
    const lines = occurrences.get(key) ?? []
    if (lines.length > 0) {
      warnings.push({
        line,
        message: `same bundle and number as line ${lines[0]}: bought as a separate purchase`
      })
    }
    lines.push(line)
    occurrences.set(key, lines)
    parsed.push({
      line,
      entry,
      phone: phone.local,
      reference: referenceText === "" ? undefined : referenceText,
      key
    })
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
      reference: row.reference ?? deriveReference(batch, row.entry.bundle.id, row.phone, occurrence),
      explicit: row.reference !== undefined
    })
  }
  errors.sort((a, b) => a.line - b.line)
  warnings.sort((a, b) => a.line - b.line)
  return { rows, errors, warnings }
}

const quote = (text: string) => JSON.stringify(Output.clean(text.length > 40 ? `${text.slice(0, 40)}…` : text))
