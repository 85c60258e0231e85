/**
 * A command's session with the API: the connection from `Config`, the typed client over
 * Node's http, and every failure turned into one printed problem.
 */
import { BundlesClient, type RetryOptions } from "@databundle/client"
import { CliFailure, fail, Problem } from "@databundle/terminal/Failure"
import type { Tty } from "@databundle/terminal/Tty"
import { type FileSystem, HttpClient, type Path } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import * as Config from "./Config.js"
import { type CallError, describe } from "./Failure.js"
import { VERSION } from "./Version.js"

/** How a command wants its client. */
export interface SessionOptions {
  /** The client's retry settings (default: the client's own). */
  readonly retry?: RetryOptions
  /** Wraps the HttpClient under the typed client: it sees every attempt, retries included. */
  readonly transform?: (client: HttpClient.HttpClient) => HttpClient.HttpClient
}

/**
 * Node's own http client rather than fetch: on Node 20, fetch costs a process about 100 ms (its
 * parser is WebAssembly, compiled at the first request and waited for at exit), a third of a
 * `bundles balance`.
 */
const nodeHttp: Layer.Layer<HttpClient.HttpClient> = NodeHttpClient.layer

/** The typed client for a connection. */
export const layer = (
  connection: Config.Connection,
  options: SessionOptions = {}
): Layer.Layer<BundlesClient, Problem> =>
  Layer.effect(
    BundlesClient,
    Effect.gen(function*() {
      const http = yield* HttpClient.HttpClient
      return yield* BundlesClient.make({
        apiKey: connection.apiKey,
        baseUrl: connection.baseUrl,
        userAgent: `bundles-cli/${VERSION}`,
        ...(options.retry === undefined ? {} : { retry: options.retry })
      }).pipe(
        Effect.provideService(HttpClient.HttpClient, options.transform === undefined ? http : options.transform(http)),
        Effect.mapError((error) => describe(error, connection.baseUrl))
      )
    })
  ).pipe(Layer.provide(nodeHttp))

/** What a command's program may fail with: its own problems, or the client's typed errors. */
export type ProgramError = Problem | CliFailure | CallError

/** The failure a program's error becomes: its own problems as they are, the client's described. */
const toProblem = (error: ProgramError, baseUrl: string): Problem | CliFailure =>
  error instanceof Problem || error instanceof CliFailure ? error : describe(error, baseUrl)

/**
 * Runs a command's program with the client: resolves the connection (flags, environment,
 * saved login), and prints whatever stops it (exit status 1).
 */
export const run = <A, E extends ProgramError, R>(
  shared: Config.Shared,
  program: (connection: Config.Connection) => Effect.Effect<A, E, R>,
  options: SessionOptions = {}
): Effect.Effect<A, CliFailure, Exclude<R, BundlesClient> | FileSystem.FileSystem | Path.Path | Tty> =>
  Config.resolve(shared).pipe(
    Effect.catchAll((error) => fail(shared.json, error)),
    Effect.flatMap((connection) => runWith(shared.json, connection, program, options))
  )

/** Runs a command's program with the client for a given connection, printing whatever stops it. */
export const runWith = <A, E extends ProgramError, R>(
  json: boolean,
  connection: Config.Connection,
  program: (connection: Config.Connection) => Effect.Effect<A, E, R>,
  options: SessionOptions = {}
): Effect.Effect<A, CliFailure, Exclude<R, BundlesClient> | Tty> =>
  program(connection).pipe(
    Effect.provide(layer(connection, options)),
    Effect.mapError((error) => toProblem(error, connection.baseUrl)),
    Effect.catchAll((error) => error instanceof CliFailure ? Effect.fail(error) : fail(json, error))
  )
