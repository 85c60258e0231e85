/**
 * Paging of admin lists.
 */
import { Schema } from "effect"
import { integerParam } from "./Identifier.js"

/** The page size of admin lists when `per_page` is left out. */
export const ADMIN_DEFAULT_PER_PAGE = 50

/** The paging query parameters of admin lists. */
export const pageParams = {
  page: Schema.optional(integerParam(1, 1_000_000)),
  per_page: Schema.optional(integerParam(1, 100))
}
