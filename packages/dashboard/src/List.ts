/**
 * Lists for both apps, phone first: one table that is a table on a wide screen and a list of
 * cards on a phone (the stylesheet reflows it), so nothing ever scrolls sideways. Each column
 * says where it goes on a card: the title (what the row is, often a link) and its badge (a
 * status) on the first line, short lines under the title with an amount beside them, then
 * label and value rows; actions last, full width. So an order's card shows its number,
 * status, bundle, phone number and price before anything else.
 *
 * The table keeps its roles in the markup (`role="table"`, `row`, `cell`...) because some
 * browsers drop a table's semantics once its layout changes; each cell carries its column's
 * label, which a card shows before the value.
 */
import { type Child, h } from "./Dom.js"
import { form } from "./Form.js"

/** Where a column's cell goes on a phone's card. */
export type Place =
  /** The row's name, on the first line (bold). */
  | "title"
  /** Beside the title, on the right: a status. */
  | "badge"
  /** A short line under the title, without its label. */
  | "line"
  /** Beside the lines, on the right (bold): an amount. */
  | "amount"
  /** A row of its own: the label, then the value. */
  | "field"
  /** Buttons and forms, the card's whole width at its end. */
  | "action"

/** A column: its label (the table's heading, the card's label) and its cell. */
export interface Column<A> {
  readonly label: string
  readonly cell: (row: A) => Child
  /** Where it goes on a card; `field` when left out. */
  readonly place?: Place
  /** Aligned right in the table (amounts, counts). */
  readonly numeric?: boolean
}

/** What `list` takes. */
export interface ListOptions<A> {
  /** Says what the list is (the table's caption). */
  readonly caption: string
  readonly columns: ReadonlyArray<Column<A>>
  readonly rows: ReadonlyArray<A>
  /** Shown instead of an empty list. */
  readonly empty: string
  readonly testId?: string
  /** Attributes of a row's element (a test id, a class). */
  readonly rowProps?: (row: A) => Record<string, string | undefined>
}

/** A list: a table on a wide screen, cards on a phone. */
export const list = <A>(options: ListOptions<A>): Node => {
  if (options.rows.length === 0) return h("p", { class: "muted" }, options.empty)
  const { columns } = options
  const classOf = (column: Column<A>) =>
    [`c-${column.place ?? "field"}`, column.numeric === true ? "num" : undefined].filter(Boolean).join(" ")
  return h(
    "table",
    { class: "cards", role: "table", "data-testid": options.testId },
    h("caption", { class: "muted" }, options.caption),
    h(
      "thead",
      { role: "rowgroup" },
      h(
        "tr",
        { role: "row" },
        columns.map((column) =>
          h("th", { scope: "col", role: "columnheader", class: column.numeric ? "num" : undefined }, column.label)
        )
      )
    ),
    h(
      "tbody",
      { role: "rowgroup" },
      options.rows.map((row) =>
        h(
          "tr",
          { role: "row", ...options.rowProps?.(row) },
          columns.map((column) =>
            h("td", { role: "cell", class: classOf(column), "data-label": column.label }, column.cell(row))
          )
        )
      )
    )
  )
}

/** Previous and next links over a listing's pages (as buttons, for a thumb). */
export const pager = (base: string, query: URLSearchParams, current: number, last: number): Node | null => {
  if (last <= 1 && current <= 1) return null
  const link = (page: number, label: string) => {
    const q = new URLSearchParams(query)
    q.set("page", String(page))
    return h("a", { href: `${base}?${q}`, class: "button secondary" }, label)
  }
  return h(
    "nav",
    { "aria-label": "Pages", class: "actions pager" },
    current > 1 ? link(current - 1, "Previous page") : null,
    h("span", null, `Page ${current} of ${Math.max(last, 1)}`),
    current < last ? link(current + 1, "Next page") : null
  )
}

/**
 * A listing's filters, folded away on a phone until asked for (open when one is set, or on a
 * wide screen): a form that goes to the same page with its values in the query.
 */
export const filters = (
  go: (path: string) => void,
  base: string,
  query: URLSearchParams,
  fields: Parameters<typeof form>[0]["fields"]
): Node => {
  const set = fields.filter((field) => (query.get(field.name) ?? "") !== "").length
  const f = form({
    label: "Filters",
    submit: "Apply filters",
    fields: fields.map((field) => ({ ...field, required: false, value: query.get(field.name) ?? "" })),
    onSubmit: async (values) => {
      const q = new URLSearchParams()
      for (const [name, value] of Object.entries(values)) if (value !== "") q.set(name, value)
      go(`${base}${q.size > 0 ? `?${q}` : ""}`)
    }
  })
  f.element.classList.add("filters")
  if (set > 0) {
    const clear = h("a", { href: base, class: "button secondary" }, "Clear")
    f.element.querySelector(".actions")?.append(clear)
  }
  return h(
    "details",
    { class: "filter-box", open: set > 0 || matchMedia("(min-width: 720px)").matches },
    h("summary", null, set > 0 ? `Filters (${set} set)` : "Filters"),
    f.element
  )
}

/** The query's non-empty values among `names`. */
export const queryOf = (query: URLSearchParams, names: ReadonlyArray<string>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of names) {
    const value = query.get(name)
    if (value) out[name] = value
  }
  return out
}

/** The page number a query asks for (1 when none or not a number). */
export const pageOf = (query: URLSearchParams): number => Number(query.get("page") ?? "1") || 1

/** A status word, coloured by meaning (and still a word, for those who do not see colour). */
export const status = (word: string): Node => h("span", { class: `status status-${word}` }, word)
