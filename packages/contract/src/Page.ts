/**
 * Lists: the paging parameters and page sizes of every list, the pagination block and the
 * body of one page, and the date bounds of the lists filtered by time.
 */
import { Schema } from "effect"
import { Succeeded } from "./ApiError.js"
import { integerParam } from "./Identifier.js"
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from "./OrderTerms.js"

/** How many items one page of a list holds when `per_page` is left out, and at most. */
export interface Sizes {
  readonly default: number
  readonly max: number
}

/** GET /orders (the specification's sizes), and the account's payments and statement. */
export const ACCOUNT_LISTS: Sizes = { default: DEFAULT_PER_PAGE, max: MAX_PER_PAGE }

/** The largest page of the event feed, the delivery logs and the operator's lists. */
const LARGEST = 100

/** The event feed and the delivery logs. */
export const FEED: Sizes = { default: DEFAULT_PER_PAGE, max: LARGEST }

/** The operator's lists, and the account's transactions (its ledger, as the operator's). */
export const ADMIN_LISTS: Sizes = { default: 50, max: LARGEST }

/** The operator's payments: pages of the account's payments, as large as the operator's lists. */
export const ADMIN_PAYMENTS: Sizes = { default: ACCOUNT_LISTS.default, max: LARGEST }

/** The paging query parameters of a list of `sizes`. */
export const params = (sizes: Sizes) => ({
  page: Schema.optional(integerParam(1, 1_000_000)).annotations({ description: "Page number, default 1" }),
  per_page: Schema.optional(integerParam(1, sizes.max)).annotations({
    description: `Items per page, default ${sizes.default}, at most ${sizes.max}`
  })
})

/** Where a page sits in the whole list. */
export const Pagination = Schema.Struct({
  current_page: Schema.Int,
  per_page: Schema.Int,
  total: Schema.Int,
  last_page: Schema.Int
}).annotations({ identifier: "Pagination" })

/** The type of `Pagination`. */
export type Pagination = typeof Pagination.Type

/** The fields of one page: its `items` under `key`, then where it sits in the whole list. */
export const pageFields = <K extends string, Items extends Schema.Schema.Any>(key: K, items: Items) =>
  ({ [key]: items, pagination: Pagination }) as
    & { readonly [P in K]: Items }
    & { readonly pagination: typeof Pagination }

/** 200 of a list: `success`, one page of `item`s under `key`, and `pagination`. */
export const envelope = <K extends string, Item extends Schema.Schema.Any>(key: K, item: Item) =>
  Schema.Struct({ success: Succeeded, ...pageFields(key, Schema.Array(item)) })

const isoDate = /^\d{4}-\d{2}-\d{2}$/
const isoTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/

/** A date (`2026-11-01`) or a timestamp with its offset (`2026-11-01T08:00:00Z`): a bound of a list's `from` or `to`. */
export const DateBound = Schema.String.pipe(
  Schema.filter(
    (s) => {
      if (isoTimestamp.test(s)) return !Number.isNaN(Date.parse(s))
      // A real calendar day: "2026-02-30" parses to another day, "2026-13-01" to nothing.
      const day = Date.parse(`${s}T00:00:00Z`)
      return isoDate.test(s) && !Number.isNaN(day) && new Date(day).toISOString().startsWith(s)
    },
    { message: () => "must be an ISO 8601 date (2026-11-01) or timestamp with offset (2026-11-01T08:00:00Z)" }
  )
).annotations({ identifier: "DateBound" })

/** True when a `DateBound` is a whole day rather than an instant. */
export const isWholeDay = (bound: string): boolean => isoDate.test(bound)
