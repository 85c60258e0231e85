/**
 * The terms of an order as the contract states them, for code built on this client (the
 * `bundles` CLI checks its options with them): its statuses, the rule of a reference, the
 * page sizes of a listing. Plain values, without `Schema`, so a command line's start-up
 * does not load it.
 */
export {
  DEFAULT_PER_PAGE,
  MAX_PER_PAGE,
  ORDER_STATUSES,
  type OrderStatus,
  REFERENCE_PATTERN,
  REFERENCE_RULE
} from "@databundle/contract/OrderTerms"
