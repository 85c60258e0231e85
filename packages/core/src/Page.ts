/**
 * Pages of lists: the defaults of left-out paging parameters, the pagination block, and the
 * conditions of a list's date range.
 */
import { Page as PageContract } from "@databundle/contract"
import type { SqlClient, SqlConnection, Statement } from "@effect/sql"

/** Paging parameters as a request gives them. */
export interface PageQuery {
  readonly page?: number | undefined
  readonly per_page?: number | undefined
}

/** A resolved page: its number, size and row offset. */
export interface Page {
  readonly page: number
  readonly perPage: number
  readonly offset: number
}

/** Fills in left-out parameters: page 1 of the list's default size. */
export const resolve = (query: PageQuery, sizes: PageContract.Sizes): Page => {
  const page = query.page ?? 1
  const perPage = query.per_page ?? sizes.default
  return { page, perPage, offset: (page - 1) * perPage }
}

/** The pagination block of a list response; `last_page` is at least 1. */
export const pagination = (page: Page, total: number): PageContract.Pagination => ({
  current_page: page.page,
  per_page: page.perPage,
  total,
  last_page: Math.max(1, Math.ceil(total / page.perPage))
})

/** A list's date range, as its query gives it (each bound a `DateBound`). */
export interface DateRange {
  readonly from?: string | undefined
  readonly to?: string | undefined
}

/** The instant a bound stands for: a whole day starts at midnight UTC, and as `to` it ends at the next. */
const boundInstant = (bound: string, edge: "from" | "to"): Date => {
  if (!PageContract.isWholeDay(bound)) return new Date(bound)
  const start = new Date(`${bound}T00:00:00Z`)
  return edge === "from" ? start : new Date(start.getTime() + 86_400_000)
}

/** The conditions a date range puts on `column` (a timestamp): at or after `from`, up to `to` (a whole day included). */
export const dateRange = (
  sql: SqlClient.SqlClient,
  column: string,
  range: DateRange
): Array<Statement.Statement<SqlConnection.Row>> => {
  const at = sql.literal(column)
  const conditions: Array<Statement.Statement<SqlConnection.Row>> = []
  if (range.from !== undefined) conditions.push(sql`${at} >= ${boundInstant(range.from, "from")}`)
  if (range.to !== undefined) {
    conditions.push(
      PageContract.isWholeDay(range.to)
        ? sql`${at} < ${boundInstant(range.to, "to")}`
        : sql`${at} <= ${boundInstant(range.to, "to")}`
    )
  }
  return conditions
}
