/**
 * Runs an @effect/cli command the same way in both binaries: one help layout, colour decided
 * once by the `Tty` (the parser's help and errors lose their colour on a pipe or with
 * `NO_COLOR`, like everything else), one line for a failure nobody printed, and one mapping of
 * outcomes to exit statuses. On the start-up path of both binaries: deep `effect` imports only.
 */
import { CliConfig, ValidationError } from "@effect/cli"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { Tty, uncolored, withTty } from "./Tty.js"

/** The help layout of both command lines: no built-in options listed, no type hints after option names. */
export const helpLayout = CliConfig.layer({ showBuiltIns: false, showTypes: false })

/** A failure whose message is on stderr already: a usage error, or a command's `CliFailure`. */
export const reported = (error: unknown): boolean =>
  ValidationError.isValidationError(error) || Predicate.isTagged(error, "CliFailure")

/**
 * Runs a command line (`Command.run`'s function) on `argv`, on the `Tty` in context or the
 * process's own. Colour codes are removed from the streams that take none; a failure not
 * printed yet (a defect, a database that cannot be opened) gets one line, `NAME: reason`.
 */
export const run = <E, R>(
  name: string,
  cli: (argv: ReadonlyArray<string>) => Effect.Effect<void, E, R | CliConfig.CliConfig>,
  argv: ReadonlyArray<string>
): Effect.Effect<void, E, Exclude<Exclude<R, CliConfig.CliConfig>, Tty>> =>
  withTty(Effect.gen(function*() {
    const tty = yield* Tty
    const console = yield* Console.consoleWith(Effect.succeed)
    return yield* cli(argv).pipe(
      Effect.tapErrorCause((cause) =>
        Cause.isInterruptedOnly(cause) || Option.exists(Cause.failureOption(cause), reported)
          ? Effect.void
          : Console.error(`${name}: ${Cause.squash(cause)}`)
      ),
      Effect.withConsole(uncolored(console, { stdout: !tty.colorStdout, stderr: !tty.colorStderr })),
      Effect.provide(helpLayout)
    )
  }))

/**
 * The exit status of a run: 0 success, 1 failure, 2 usage error, and `interrupted` (130 by
 * default, as for SIGINT) when it was stopped.
 */
export const exitCode = (exit: Exit.Exit<unknown, unknown>, interrupted = 130): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.isInterruptedOnly(exit.cause)) return interrupted
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) && ValidationError.isValidationError(failure.value) ? 2 : 1
}
