/**
 * The rules of a JSON request body beyond JSON itself, written once for both APIs.
 *
 * - The bytes are UTF-8; an invalid sequence is refused, never replaced with U+FFFD.
 * - Objects and arrays nest at most `MAX_DEPTH` levels.
 * - Numbers are written plainly: no exponent, no leading zeros and at most two decimals
 *   (`5.50`, `12`, never `5.5000000000000001` or `1e0`), because the API's numbers are ids,
 *   counts and amounts of cedis, and an amount is read from its text, not from a float.
 * - Strings hold well-formed Unicode: an escaped lone surrogate (`"\ud800"`) is refused.
 * - An object names each member once: `{"amount": 1, "amount": 1000}` is refused, since
 *   parsers disagree on which one counts and a body must have one meaning.
 *
 * A body that is not UTF-8, not JSON or nested too deep is a 400; JSON that breaks a rule
 * about numbers or strings is a 422 naming the field, as any other invalid field is.
 */
import { Either } from "effect"
import { LONE_SURROGATE } from "./Text.js"

/** Deepest nesting of objects and arrays accepted in a request body. */
export const MAX_DEPTH = 32

/** Why a body was refused: `Malformed` (a 400: not UTF-8, not JSON, too deep), or `Invalid` at `field` (a 422). */
export type Problem =
  | { readonly _tag: "Malformed"; readonly message: string }
  | { readonly _tag: "Invalid"; readonly field: string; readonly message: string }

const PLAIN_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d{1,2})?$/

// A byte order mark is kept, and so refused by JSON.parse: JSON text has none (RFC 8259).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Decodes the body's bytes as UTF-8, refusing invalid sequences. */
export const decodeUtf8 = (bytes: Uint8Array): Either.Either<string, Problem> => {
  try {
    return Either.right(utf8.decode(bytes))
  } catch {
    return Either.left({ _tag: "Malformed", message: "Request body is not valid UTF-8" })
  }
}

interface Frame {
  readonly array: boolean
  /** The current member's key (objects) or index (arrays). */
  key: string | number
  /** The keys an object has named so far. */
  readonly keys: Set<string> | undefined
}

const fieldOf = (stack: ReadonlyArray<Frame>): string => {
  let field = ""
  for (const frame of stack) {
    if (typeof frame.key === "number") field += `[${frame.key}]`
    else field += field.length === 0 ? frame.key : `.${frame.key}`
  }
  return field.length === 0 ? "body" : field
}

/**
 * Checks text that `JSON.parse` accepted against the rules above, in one pass without
 * recursion (the input is hostile).
 */
const check = (text: string): Problem | undefined => {
  const stack: Array<Frame> = []
  let expectingKey = false
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "{" || c === "[") {
      if (stack.length === MAX_DEPTH) {
        return { _tag: "Malformed", message: `JSON nested deeper than ${MAX_DEPTH} levels` }
      }
      stack.push({ array: c === "[", key: c === "[" ? 0 : "", keys: c === "[" ? undefined : new Set() })
      expectingKey = c === "{"
      i++
    } else if (c === "}" || c === "]") {
      // (A value ended: what follows is a comma or another close, never a key.)
      stack.pop()
      expectingKey = false
      i++
    } else if (c === ",") {
      const top = stack[stack.length - 1]
      if (top?.array) top.key = (top.key as number) + 1
      expectingKey = top !== undefined && !top.array
      i++
    } else if (c === ":") {
      expectingKey = false
      i++
    } else if (c === "\"") {
      let end = i + 1
      let escaped = false
      while (text[end] !== "\"") {
        if (text[end] === "\\") {
          escaped = true
          end++
        }
        end++
      }
      const token = text.slice(i, end + 1)
      const value = escaped ? JSON.parse(token) as string : token.slice(1, -1)
      if (expectingKey) {
        const top = stack[stack.length - 1]!
        top.key = value
        if (top.keys!.has(value)) return { _tag: "Invalid", field: fieldOf(stack), message: "is given more than once" }
        top.keys!.add(value)
      } else if (escaped && LONE_SURROGATE.test(value)) {
        return { _tag: "Invalid", field: fieldOf(stack), message: "must be well-formed Unicode text" }
      }
      i = end + 1
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      let end = i + 1
      while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++
      const token = text.slice(i, end)
      if (!PLAIN_NUMBER.test(token)) {
        return {
          _tag: "Invalid",
          field: fieldOf(stack),
          message: `must be a number written plainly, with at most 2 decimals and no exponent (not ${token})`
        }
      }
      i = end
    } else {
      i++
    }
  }
  return undefined
}

/** Parses a request body's text under the rules above. An empty body is `null`. */
export const parse = (text: string): Either.Either<unknown, Problem> => {
  if (text.length === 0) return Either.right(null)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return Either.left({ _tag: "Malformed", message: "Malformed JSON in request body" })
  }
  const problem = check(text)
  return problem === undefined ? Either.right(value) : Either.left(problem)
}
