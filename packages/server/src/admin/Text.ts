/**
 * The small forms the operator's commands print in: amounts, instants, absent values, page
 * lines. Tables, fields and colour come from the terminal toolkit.
 */
import { Money, type Order } from "@databundle/contract"

/** An amount for people: `GHS 10.50`. */
export const ghs = Money.formatGhs

/** An instant in UTC, to the second: `2026-11-01T08:30:00Z`. */
export const date = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z")

/** A value that may be absent, or the word for its absence. */
export const orNone = (value: string | null, none = "none") => value ?? none

/** Lines indented by two spaces. */
export const indented = (lines: ReadonlyArray<string>) => lines.map((line) => `  ${line}`)

/** `Page 1 of 3 (42 orders in all)`. */
export const pageLine = (pagination: Order.Pagination, noun: string) =>
  `Page ${pagination.current_page} of ${Math.max(pagination.last_page, 1)} (${pagination.total} ${noun} in all)`
