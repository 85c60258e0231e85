/**
 * Free text from requests (names, notes, labels): no control characters, which a database
 * refuses (NUL) or a log or terminal would misread.
 */
import { Schema } from "effect"

const CONTROL = /[\u0000-\u001F\u007F]/

/** Text of 1 to `max` characters without control characters. */
export const text = (max: number, min = 1) =>
  Schema.String.pipe(
    Schema.minLength(min, { message: () => min === 1 ? "must not be empty" : `must be at least ${min} characters` }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` }),
    Schema.filter((s) => !CONTROL.test(s), { message: () => "must not contain control characters" })
  )
