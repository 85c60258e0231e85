/**
 * Running one call of the admin API: the connection from the shared options, the client
 * derived from the contract, its output (text for people, or with `--json` the response body
 * encoded by the contract's schema) and its failure, printed as the terminal toolkit prints
 * every command line's failures. The operator's failures carry no `error:` label: scripts
 * read the bare message, the API's own.
 */
import { Idempotency } from "@databundle/contract"
import {
  CliFailure,
  describeTransport,
  fail,
  failed,
  firstIssue,
  Problem,
  problem,
  withRequestId
} from "@databundle/terminal/Failure"
import * as Output from "@databundle/terminal/Output"
import type { Tty } from "@databundle/terminal/Tty"
import { type HttpClient, HttpClientError } from "@effect/platform"
import { Console, Effect, Either, Option, Schedule, Schema } from "effect"
import * as AdminClient from "../AdminClient.js"
import type { Shared } from "./Options.js"

/** Describes a failed call of the admin API at `url`: its error body as sent, or what went wrong below it. */
const describe = (url: string, error: unknown): Problem => {
  if (AdminClient.isApiFailure(error)) {
    const body = Schema.encodeUnknownEither(AdminClient.ApiFailure)(error)
    return new Problem({
      message: withRequestId(error.message, error),
      body: Either.getOrElse(body, () => problem(error.message).body)
    })
  }
  const described = describeTransport(error, "the server", url)
  if (!HttpClientError.isHttpClientError(error) || error._tag !== "RequestError") return described
  // No answer at all: most often the server listens elsewhere, or not on this data directory.
  const message = `${described.message}; pass --url or set BUNDLES_ADMIN_URL to the server's address`
  return problem(message)
}

/** One call of the admin API, with the connection resolved from the shared options. */
export const request = <A, E>(
  options: Shared,
  f: (client: AdminClient.Client) => Effect.Effect<A, E>
): Effect.Effect<A, Problem, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const connection = yield* AdminClient.resolve(options).pipe(Effect.mapError((error) => problem(error.message)))
    const client = yield* AdminClient.make(connection)
    return yield* f(client).pipe(Effect.mapError((error) => describe(connection.url, error)))
  })

/**
 * A call that moves money: it carries one Idempotency-Key per run (the given one or a fresh
 * UUID), and a connection failure is retried with that same key, so the server applies it once.
 */
export const moneyRequest = <A, E>(
  options: Shared & { readonly idempotencyKey: Option.Option<string> },
  f: (client: AdminClient.Client, headers: Idempotency.IdempotencyHeaders) => Effect.Effect<A, E>
): Effect.Effect<A, Problem, HttpClient.HttpClient> => {
  const headers = {
    [Idempotency.IDEMPOTENCY_KEY_HEADER]: Option.getOrElse(options.idempotencyKey, () => crypto.randomUUID())
  }
  return request(options, (client) =>
    f(client, headers).pipe(
      Effect.retry({
        while: (error) => HttpClientError.isHttpClientError(error) && error._tag === "RequestError",
        schedule: Schedule.exponential("200 millis"),
        times: 3
      })
    ))
}

/**
 * Runs `program` and prints its result: with `--json`, the value encoded by the contract's
 * response schema; otherwise `text`, in the style of stdout (colour, width). `verdict` may
 * turn a successful call into a failure (exit 1) after printing it, as an audit that found
 * problems.
 */
export const execute = <A, I, R>(
  options: Shared,
  program: Effect.Effect<A, Problem, R>,
  schema: Schema.Schema<A, I>,
  text: (value: A, s: Output.Style) => ReadonlyArray<string>,
  verdict: (value: A) => Option.Option<string> = () => Option.none()
): Effect.Effect<void, CliFailure, R | Tty> =>
  program.pipe(
    Effect.flatMap((value) =>
      Effect.gen(function*() {
        if (options.json) {
          const body = yield* Schema.encode(schema)(value).pipe(
            Effect.mapError((error) => problem(`Cannot encode the response: ${firstIssue(error)}`))
          )
          yield* Output.printJson(body)
        } else {
          const { out } = yield* Output.styles
          yield* Console.log(text(value, out).join("\n"))
        }
        return verdict(value)
      })
    ),
    Effect.matchEffect({
      onFailure: (failure) => fail(options.json, failure, "none"),
      onSuccess: Option.match({
        onNone: () => Effect.void,
        // The body is out already: only the reason goes to stderr.
        onSome: (message) => failed(message, "none")
      })
    })
  )
