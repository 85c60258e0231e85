/**
 * Identifiers and other whole numbers written in paths and queries.
 */
import { Schema } from "effect"

/** The largest identifier: 2^31 - 1, the database's `integer` range, so an id past it names nothing (404). */
export const MAX_ID = 2_147_483_647

const DIGITS = /^(?:0|[1-9]\d{0,15})$/

/**
 * A whole number as a path or query parameter writes it: decimal digits only, without sign,
 * spaces, exponent, point, hex or leading zeros (`7`, never `07`, `7.0`, `7e0`, `0x7` or ` 7`),
 * so one number has one spelling.
 */
export const IntegerText = Schema.String.pipe(
  Schema.filter((s) => DIGITS.test(s), { message: () => "must be a whole number in digits" }),
  Schema.compose(Schema.NumberFromString)
).annotations({ identifier: "IntegerText" })

/** A whole number from `min` to `max` as a query parameter, with one message for every way it can be wrong. */
export const integerParam = (min: number, max: number) => {
  const message = () => `must be an integer from ${min} to ${max}`
  return Schema.String.pipe(
    Schema.filter((s) => DIGITS.test(s), { message }),
    Schema.compose(Schema.NumberFromString),
    Schema.filter((n) => n >= min && n <= max, { message })
  )
}
