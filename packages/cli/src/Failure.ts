/**
 * How a command fails: one clear message on stderr and, with `--json`, the failure's body on
 * stdout (the API's error body when the API refused). The binary then exits with status 1.
 */
import { formatGhs } from "@databundle/client/Money"
import { HelpDoc, ValidationError } from "@effect/cli"
import { Console, Data, Effect, ParseResult, Predicate } from "effect"
import * as Output from "./Output.js"
import type { Tty } from "./Tty.js"

/** A failed command whose message is already printed: the binary exits with status 1 without printing more. */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}

/** Why a command failed, not yet printed: the text for stderr, and the document `--json` prints. */
export class Problem extends Data.TaggedError("Problem")<{ readonly message: string; readonly body: unknown }> {}

/** A failure of the CLI's own making, with the API's envelope as its JSON body. */
export const problem = (message: string, extra: Record<string, unknown> = {}): Problem =>
  new Problem({ message, body: { success: false, message, ...extra } })

/** An error the API answered with: the contract's errors carry `success: false` and a `_tag`. */
interface ApiFailure {
  readonly _tag: string
  readonly success: false
  readonly message: string
  readonly [field: string]: unknown
}

const isApiFailure = (error: unknown): error is ApiFailure =>
  Predicate.hasProperty(error, "_tag") && Predicate.hasProperty(error, "success") && error.success === false &&
  Predicate.hasProperty(error, "message") && typeof error.message === "string"

/** The innermost reason of a failed connection (`ECONNREFUSED`, `fetch failed`, ...). */
const transportReason = (cause: unknown): string => {
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

const apiText = (error: ApiFailure): string => {
  const message = Output.clean(error.message)
  switch (error._tag) {
    case "Unauthorized":
      return `${message}: check the API key (--api-key, BUNDLES_API_KEY, or bundles login)`
    case "ValidationError": {
      const errors = Predicate.isRecord(error.errors) ? Object.values(error.errors).flat() : []
      const details = errors.filter((e): e is string => typeof e === "string" && e !== message)
      return [message, ...details.map((line) => `  ${Output.clean(line)}`)].join("\n")
    }
    case "ServerError":
      return typeof error.request_id === "string"
        ? `${message} (request id ${Output.clean(error.request_id)})`
        : message
    default:
      return message
  }
}

/** Describes any failure of a call to the API at `url`: the API's errors, no answer, or an unreadable one. */
export const describe = (error: unknown, url: string): Problem => {
  if (isApiFailure(error)) {
    if (
      error._tag === "InsufficientBalance" && typeof error.balance === "bigint" && typeof error.required === "bigint"
    ) {
      const { balance, required } = error
      return new Problem({
        message: `Insufficient balance: the main wallet has ${formatGhs(balance)}, this needs ${formatGhs(required)}`,
        body: { ...error, message: error.message }
      })
    }
    return new Problem({ message: apiText(error), body: { ...error, message: error.message } })
  }
  if (Predicate.isTagged(error, "RequestError")) {
    const { cause, description } = error as { cause?: unknown; description?: string }
    return problem(`Cannot reach the API at ${url} (${description ?? transportReason(cause)})`)
  }
  if (Predicate.isTagged(error, "ResponseError")) {
    const { response } = error as { response?: { status?: number } }
    return problem(`Unexpected answer from the API at ${url}: HTTP ${response?.status ?? "?"}`)
  }
  if (ParseResult.isParseError(error)) {
    return problem(`The API at ${url} answered with a body this CLI cannot read: ${error.message.split("\n")[0]}`)
  }
  if (Predicate.isTagged(error, "ClientOptionsError") && Predicate.hasProperty(error, "message")) {
    return problem(String(error.message))
  }
  return problem(`The call to ${url} failed: ${String(error)}`)
}

/** Prints a problem (stderr, and its body on stdout with `--json`) and fails with `CliFailure`. */
export const fail = (json: boolean, { body, message }: Problem): Effect.Effect<never, CliFailure, Tty> =>
  Effect.gen(function*() {
    yield* Output.error(message)
    if (json) yield* Output.printJson(body)
    return yield* new CliFailure({ message })
  })

/** Fails a command whose output is printed already: `message` on stderr, then exit status 1. */
export const failed = (message: string): Effect.Effect<never, CliFailure, Tty> =>
  Effect.zipRight(Output.error(message), new CliFailure({ message }))

/** A usage error found once the command line was parsed: printed, then exit status 2 like the parser's own. */
export const usage = (message: string): Effect.Effect<never, ValidationError.ValidationError> =>
  Effect.zipRight(Console.error(message), Effect.fail(ValidationError.invalidValue(HelpDoc.p(message))))
