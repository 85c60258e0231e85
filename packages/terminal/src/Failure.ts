/**
 * How a command fails, the same in both command lines: one clear message on stderr (with the
 * request id whenever the server gave one, so the request can be found in the server's log)
 * and, with `--json`, the failure's body on stdout: `{ success: false, message, ... }`, the
 * server's own error body when the server refused. The binary then exits with status 1; a
 * usage error found after parsing exits 2, like the parser's own.
 */
import { HelpDoc, ValidationError } from "@effect/cli"
import { Console, Data, Effect, ParseResult, Predicate } from "effect"
import * as Output from "./Output.js"
import type { Tty } from "./Tty.js"

/** A failed command whose message is already printed: the binary exits with status 1 without printing more. */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}

/** Why a command failed, not yet printed: the text for stderr, and the document `--json` prints. */
export class Problem extends Data.TaggedError("Problem")<{ readonly message: string; readonly body: unknown }> {}

/** A failure of the command line's own making, with the API's envelope as its JSON body. */
export const problem = (message: string, extra: Record<string, unknown> = {}): Problem =>
  new Problem({ message, body: { success: false, message, ...extra } })

/** The innermost reason of a failed connection (`ECONNREFUSED`, `fetch failed`, ...). */
export const transportReason = (cause: unknown): string => {
  let reason = "no response"
  for (let depth = 0, current = cause; depth < 5 && Predicate.isObject(current); depth++) {
    if (Predicate.hasProperty(current, "code") && typeof current.code === "string") return current.code
    if (Predicate.hasProperty(current, "message") && typeof current.message === "string" && current.message !== "") {
      reason = current.message
    }
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return reason
}

/** The request id of a failure: the error body's `request_id`, else the response's `X-Request-Id`. */
export const requestId = (error: unknown): string | undefined => {
  if (Predicate.hasProperty(error, "request_id") && typeof error.request_id === "string") return error.request_id
  if (Predicate.hasProperty(error, "response") && Predicate.hasProperty(error.response, "headers")) {
    const headers = error.response.headers
    if (Predicate.hasProperty(headers, "x-request-id") && typeof headers["x-request-id"] === "string") {
      return headers["x-request-id"]
    }
  }
  return undefined
}

/** A message with the request id it came with, if any: `... (request id 7f3a...)`. */
export const withRequestId = (message: string, error: unknown): string => {
  const id = requestId(error)
  return id === undefined ? message : `${message} (request id ${Output.clean(id)})`
}

/** The first problem of a decoding failure, as one line. */
export const firstIssue = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issue === undefined ? error.message.split("\n")[0]! : issue.message
}

/** Who a command line talks to, for its messages: `the API` (the reseller's) or `the server` (the operator's). */
export type Peer = "the API" | "the server"

const capital = (peer: Peer) => peer === "the API" ? "The API" : "The server"

/**
 * Describes a failure below the contract's typed errors: no answer (`RequestError`), an answer
 * off the contract (`ResponseError`), a body that does not decode. Anything else is described
 * as a failed call.
 */
export const describeTransport = (error: unknown, peer: Peer, url: string): Problem => {
  if (Predicate.isTagged(error, "RequestError")) {
    const description = Predicate.hasProperty(error, "description") && typeof error.description === "string"
      ? error.description
      : transportReason(Predicate.hasProperty(error, "cause") ? error.cause : undefined)
    return problem(`Cannot reach ${peer} at ${url} (${description})`)
  }
  if (Predicate.isTagged(error, "ResponseError")) {
    const status = Predicate.hasProperty(error, "response") && Predicate.hasProperty(error.response, "status")
      ? String(error.response.status)
      : "?"
    return problem(withRequestId(`Unexpected answer from ${peer} at ${url}: HTTP ${status}`, error))
  }
  if (ParseResult.isParseError(error)) {
    return problem(`${capital(peer)} at ${url} answered with a body this CLI cannot read: ${firstIssue(error)}`)
  }
  return problem(`The call to ${url} failed: ${String(error)}`)
}

/** How a failure's message starts on stderr: `error:` in red (the reseller's), or nothing (the operator's, whose scripts read the bare message). */
export type Label = "error:" | "none"

/** Prints a failure's message on stderr, labelled. */
export const printError = (message: string, label: Label = "error:"): Effect.Effect<void, never, Tty> =>
  label === "none" ? Console.error(message) : Output.error(message)

/** Prints a problem (stderr, and its body on stdout with `--json`) and fails with `CliFailure`. */
export const fail = (
  json: boolean,
  { body, message }: Problem,
  label: Label = "error:"
): Effect.Effect<never, CliFailure, Tty> =>
  Effect.gen(function*() {
    yield* printError(message, label)
    if (json) yield* Output.printJson(body)
    return yield* new CliFailure({ message })
  })

/** Fails a command whose output is printed already: `message` on stderr, then exit status 1. */
export const failed = (message: string, label: Label = "error:"): Effect.Effect<never, CliFailure, Tty> =>
  Effect.zipRight(printError(message, label), new CliFailure({ message }))

/** A usage error found once the command line was parsed: printed, then exit status 2 like the parser's own. */
export const usage = (message: string): Effect.Effect<never, ValidationError.ValidationError> =>
  Effect.zipRight(Console.error(message), Effect.fail(ValidationError.invalidValue(HelpDoc.p(message))))
