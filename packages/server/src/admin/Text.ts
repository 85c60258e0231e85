/**
 * The small forms the operator's commands print in: amounts, instants, absent values, page
 * lines. Tables, fields and colour come from the terminal toolkit.
 */
import { Money, type Page } from "@databundle/contract"
import * as Output from "@databundle/terminal/Output"

/** An amount for people: `GHS 10.50`. */
export const ghs = Money.formatGhs

/** An instant in UTC, to the second, as both command lines print it: `2026-11-01 08:30:00Z`. */
export const date = Output.date

/** A value that may be absent, or the word for its absence. */
export const orNone = (value: string | null, none = "none") => value ?? none

/** Lines indented by two spaces. */
export const indented = (lines: ReadonlyArray<string>) => lines.map((line) => `  ${line}`)

/** `Page 1 of 3 (42 orders in all)`, `(1 order in all)`. */
export const pageLine = (pagination: Page.Pagination, singular: string, plural?: string) =>
  `Page ${pagination.current_page} of ${Math.max(pagination.last_page, 1)} (${
    Output.count(pagination.total, singular, plural)
  } in all)`
