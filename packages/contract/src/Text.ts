/**
 * Free text from requests (names, notes, labels): printable, well-formed Unicode that a
 * database stores, and a log, a terminal or a dashboard shows, as it reads.
 *
 * Refused: control characters (C0, DEL and C1: a database refuses NUL, a terminal obeys
 * escapes), the invisible characters that reorder text (bidi overrides and isolates, which
 * can make a name read as another), lone surrogates (not text at all), and text with nothing
 * visible in it (only spaces and zero-width characters).
 */
import { Schema } from "effect"

const CONTROL = /[\u0000-\u001F\u007F-\u009F]/
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/
/** A UTF-16 surrogate without its pair: text no UTF-8 encoder can write. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const INVISIBLE = /^[\s\u00AD\u180E\u200B-\u200D\u2060\uFEFF]*$/

/** Why `s` is not acceptable free text, or undefined when it is. */
const problemOf = (s: string): string | undefined => {
  if (CONTROL.test(s)) return "must not contain control characters"
  if (BIDI.test(s)) return "must not contain bidirectional control characters"
  if (LONE_SURROGATE.test(s)) return "must be well-formed Unicode text"
  if (s.length > 0 && INVISIBLE.test(s)) return "must contain visible characters"
  return undefined
}

/** Text of `min` (1 unless given) to `max` characters, under the rules above. */
export const text = (max: number, min = 1) =>
  Schema.String.pipe(
    Schema.minLength(min, { message: () => min === 1 ? "must not be empty" : `must be at least ${min} characters` }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` }),
    Schema.filter((s) => problemOf(s) ?? true)
  )
