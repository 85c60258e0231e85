/**
 * How `bundles` describes a failed call of the API: each of the client's typed errors in the
 * reseller's words (what to check, the amounts, the request id), by an exhaustive
 * switch over their tags, so an error renamed or added in the contract fails to compile here.
 * What lies below the contract (no answer, an answer off it) is described as the terminal
 * toolkit describes it for both command lines.
 */
import type { BundlesClient, ClientOptionsError } from "@databundle/client"
import { formatGhs } from "@databundle/client/Money"
import { describeTransport, Problem, problem, withRequestId } from "@databundle/terminal/Failure"
import { absurd } from "effect/Function"
import * as Output from "./Output.js"

/** Any failure of a call to the API, as the client types it, or of the client's options. */
export type CallError = BundlesClient.Error | ClientOptionsError

/**
 * The API's own error: its message for people, with the request id the server gave it after
 * the first line (to quote to the operator), and its body as the wire carried it.
 */
const refused = (error: { readonly message: string }, message: string): Problem => {
  const [first = "", ...rest] = message.split("\n")
  return new Problem({
    message: [withRequestId(first, error), ...rest].join("\n"),
    body: Output.toWire({ ...error, message: error.message })
  })
}

/** Describes a failure of a call to the API at `url`: the API's errors, no answer, or an unreadable one. */
export const describe = (error: CallError, url: string): Problem => {
  switch (error._tag) {
    case "Unauthorized":
      // A suspended account's key is right: the message says what to do instead.
      return refused(
        error,
        error.reason === "account_suspended"
          ? Output.clean(error.message)
          : `${Output.clean(error.message)}: check the API key (--api-key, BUNDLES_API_KEY, or bundles login)`
      )
    case "ValidationError": {
      const message = Output.clean(error.message)
      const details = Object.values(error.errors ?? {}).flat().filter((line) => line !== error.message)
      return refused(error, [message, ...details.map((line) => `  ${Output.clean(line)}`)].join("\n"))
    }
    case "InsufficientBalance":
      return refused(
        error,
        `Insufficient balance: the main wallet has ${formatGhs(error.balance)}, this needs ${formatGhs(error.required)}`
      )
    case "ServerError":
      return refused(error, Output.clean(error.message))
    case "BadRequest":
    case "NotFound":
    case "MethodNotAllowed":
    case "PayloadTooLarge":
    case "RequestTimeout":
    case "HttpApiDecodeError":
    case "NetworkNotFound":
    case "BundleUnavailable":
    case "OrderNotFound":
    case "DeliveryNotFound":
    case "Conflict":
    case "RateLimited":
      return refused(error, Output.clean(error.message))
    case "ClientOptionsError":
      return problem(error.message)
    case "RequestError":
    case "ResponseError":
    case "ParseError":
      return describeTransport(error, "the API", url)
    default:
      return absurd(error)
  }
}
