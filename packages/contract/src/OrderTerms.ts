/**
 * The terms of an order as plain values: its statuses, the rule of a reference, the page sizes
 * of a listing. `Order.ts` builds its schemas on them; a command line checks its options with
 * them at start-up without loading `Schema`.
 */

/** An order's statuses: `pending` → `successful` | `failed`; terminal states never change. */
export const ORDER_STATUSES = ["pending", "successful", "failed"] as const

/** An order's status. */
export type OrderStatus = typeof ORDER_STATUSES[number]

/** The caller's own reference: 1 to 64 characters of `A-Z a-z 0-9 _ . : -`. */
export const REFERENCE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/

/** The rule of `REFERENCE_PATTERN` in words, after the name of what breaks it. */
export const REFERENCE_RULE = "must be 1 to 64 characters of A-Z, a-z, 0-9, _, ., : and -"

/** The largest page size of GET /orders. */
export const MAX_PER_PAGE = 50

/** The page size of GET /orders when `per_page` is left out. */
export const DEFAULT_PER_PAGE = 20
