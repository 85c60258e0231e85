/**
 * Pages of lists: the defaults of left-out paging parameters and the pagination block.
 */
import { Order } from "@databundle/contract"

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

/** Fills in left-out parameters: page 1 of `defaultPerPage`. */
export const resolve = (query: PageQuery, defaultPerPage: number): Page => {
  const page = query.page ?? 1
  const perPage = query.per_page ?? defaultPerPage
  return { page, perPage, offset: (page - 1) * perPage }
}

/** The pagination block of a list response; `last_page` is at least 1. */
export const pagination = (page: Page, total: number): Order.Pagination => ({
  current_page: page.page,
  per_page: page.perPage,
  total,
  last_page: Math.max(1, Math.ceil(total / page.perPage))
})

/** Converts a list filter bound to an instant: a whole day starts at midnight UTC and `to` includes it. */
export const boundInstant = (bound: string, edge: "from" | "to"): Date => {
  if (!Order.isWholeDay(bound)) return new Date(bound)
  const start = new Date(`${bound}T00:00:00Z`)
  return edge === "from" ? start : new Date(start.getTime() + 86_400_000)
}
