/**
 * The 422's wording: per-field messages from a decode failure's issues, one plain sentence per
 * field ("status must be one of pending, successful, failed", "page must be given once"), and
 * the error they make. The server words its 422s so, and the client the inputs it checks
 * before sending, so both read alike.
 */
import type { ArrayFormatterIssue } from "effect/ParseResult"
import { type FieldErrors, ValidationError } from "./ApiError.js"

const fieldOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "body"
    : path.map((p, i) => typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`).join("")

const expectedOf = (issue: ArrayFormatterIssue) => /^Expected (.+?), actual /s.exec(issue.message)?.[1]

const LITERALS = /^(?:"[^"]*"(?: \| )?)+$/

const describe = (issue: ArrayFormatterIssue): string => {
  if (issue.path.length === 0) return "must be a JSON object"
  if (issue._tag === "Missing") return "is required"
  if (issue._tag === "Unexpected") return "is not allowed"
  const expected = expectedOf(issue)
  if (expected === undefined) return issue.message
  if (expected === "number" || expected === "NumberFromString") return "must be a number"
  if (expected === "string") return "must be a string"
  if (expected === "boolean") return "must be true or false"
  if (expected.startsWith("{") || expected.startsWith("Struct")) return "must be a JSON object"
  return `must be ${expected}`
}

/**
 * Per-field messages. A union of literals fails once per member: those issues become one
 * "must be one of …"; a nullable field's "must be null" is left out beside its real rule. A
 * field named in `repeated` (a query parameter given more than once) is told so.
 */
export const fieldErrors = (
  issues: ReadonlyArray<ArrayFormatterIssue>,
  repeated: ReadonlySet<string> = new Set()
): FieldErrors => {
  const errors: Record<string, Array<string>> = {}
  const literals: Record<string, Array<string>> = {}
  const add = (field: string, message: string) => {
    const list = (errors[field] ??= [])
    if (!list.includes(message)) list.push(message)
  }
  for (const issue of issues) {
    // An optional field's union with `undefined` adds a useless "Expected undefined" issue.
    if (issue.message.startsWith("Expected undefined,")) continue
    const field = fieldOf(issue.path)
    if (issue.path.length === 1 && repeated.has(String(issue.path[0]))) {
      add(field, `${field} must be given once`)
      continue
    }
    const expected = expectedOf(issue)
    if (issue._tag === "Type" && expected !== undefined && LITERALS.test(expected)) {
      ;(literals[field] ??= []).push(...expected.split(" | ").map((l) => l.slice(1, -1)))
      continue
    }
    add(field, `${field} ${describe(issue)}`)
  }
  for (const [field, allowed] of Object.entries(literals)) {
    add(field, `${field} must be one of ${[...new Set(allowed)].join(", ")}`)
  }
  // A nullable field given something else fails both members; "must be null" then says nothing useful.
  for (const [field, messages] of Object.entries(errors)) {
    if (messages.length > 1) errors[field] = messages.filter((message) => message !== `${field} must be null`)
  }
  return errors
}

/** A 422 from per-field messages: its message is the first of them, with a count of the rest. */
export const validationError = (errors: FieldErrors): ValidationError => {
  const all = Object.values(errors).flat()
  const rest = all.length - 1
  return new ValidationError({
    message: `${all[0] ?? "The request is invalid"}${
      rest > 0 ? ` (and ${rest} more error${rest > 1 ? "s" : ""})` : ""
    }`,
    errors
  })
}
