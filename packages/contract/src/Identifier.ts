/**
 * Identifiers: positive integers within the database's `integer` range, so an id past it
 * names nothing (404) instead of reaching SQL.
 */

/** The largest identifier: 2^31 - 1. */
export const MAX_ID = 2_147_483_647
