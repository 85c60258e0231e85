/**
 * The types of the events an account receives, as the contract names them. Plain values,
 * without `Schema`, so a command line's start-up does not load it.
 */
export { EVENT_TYPES } from "@databundle/contract/EventTypes"
