/**
 * Runs an @effect/cli command the same way in both binaries: one help layout, colour decided
 * once by the `Tty` (the parser's help and errors lose their colour on a pipe or with
 * `NO_COLOR`, like everything else), one line for a failure nobody printed, and one mapping of
 * outcomes to exit statuses. On the start-up path of both binaries: deep `effect` imports only.
 */
import { CliConfig, type Command, ValidationError } from "@effect/cli"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as CommandTree from "./CommandTree.js"
import * as Completion from "./Completion.js"
import * as Help from "./Help.js"
import { Tty, uncolored, withTty } from "./Tty.js"

/** The help layout of both command lines: no built-in options listed, no type hints after option names. */
export const helpLayout = CliConfig.layer({ showBuiltIns: false, showTypes: false })

/** A failure whose message is on stderr already: a usage error, or a command's `CliFailure`. */
export const reported = (error: unknown): boolean =>
  ValidationError.isValidationError(error) || Predicate.isTagged(error, "CliFailure")

/** What the toolkit answers itself, from the command tree: help, and the completion scripts. */
export interface Tree {
  readonly command: Command.Command<any, any, any, any>
  readonly version: string
  readonly examples?: Help.Examples
}

/** The words before `--`. */
const beforeDashes = (words: ReadonlyArray<string>) => {
  const end = words.indexOf("--")
  return end < 0 ? words : words.slice(0, end)
}

/**
 * What the toolkit answers without the parser: `--help`/`-h` anywhere, or a group named
 * without its subcommand (`bundles orders`; not a group with options of its own, which runs),
 * print the help of the command the words name;
 * `--completions SHELL` prints the completion script. None: the parser runs.
 */
export const answer = (
  name: string,
  tree: Tree,
  words: ReadonlyArray<string>,
  screen: { readonly width: number | undefined; readonly color: boolean }
): Option.Option<string> => {
  const given = beforeDashes(words)
  const root = CommandTree.of(tree.command)
  const at = given.indexOf("--completions")
  if (at >= 0 && given.length === 2) {
    const shell = given[at + 1] ?? ""
    if ((Completion.SHELLS as ReadonlyArray<string>).includes(shell)) {
      return Option.some(Completion.script(shell as Completion.Shell, name, root))
    }
    return Option.none()
  }
  const { path, rest, spec } = CommandTree.find(root, given)
  const help = given.includes("--help") || given.includes("-h")
  // A group that takes options or arguments of its own runs (`admin emails --to …`), as its subcommands do.
  const runnable = spec.options.length > 0 || spec.args.length > 0
  const bareGroup = spec.children.length > 0 && !runnable && rest.length === 0 && !given.some((w) => w === "--version")
  if (!help && !bareGroup) return Option.none()
  return Option.some(Help.render(name, root, path, {
    width: screen.width,
    bold: screen.color ? (text) => `\x1b[1m${text}\x1b[22m` : (text) => text,
    version: tree.version,
    ...(tree.examples === undefined ? {} : { examples: tree.examples })
  }))
}

/** The one-line text of a usage error. */
const usageText = (error: ValidationError.ValidationError) =>
  CommandTree.docText(error.error).split(/\s+-\s+use one of/)[0]!.trim() || "Invalid command line"

/**
 * Runs a command line (`Command.run`'s function) on `argv`, on the `Tty` in context or the
 * process's own. Help and completion scripts come from the command tree; colour codes are
 * removed from the streams that take none; a usage error under `--json` prints the failure
 * document (`{ "success": false, "message": ... }`) on stdout as every failure does; a failure
 * not printed yet (a defect, a database that cannot be opened) gets one line, `NAME: reason`.
 */
export const run = <E, R>(
  name: string,
  cli: (argv: ReadonlyArray<string>) => Effect.Effect<void, E, R | CliConfig.CliConfig>,
  argv: ReadonlyArray<string>,
  tree?: Tree
): Effect.Effect<void, E, Exclude<Exclude<R, CliConfig.CliConfig>, Tty>> =>
  withTty(Effect.gen(function*() {
    const tty = yield* Tty
    const console = yield* Console.consoleWith(Effect.succeed)
    const words = argv.slice(2)
    const answered = tree === undefined
      ? Option.none()
      : answer(name, tree, words, { width: tty.width, color: tty.colorStdout })
    if (Option.isSome(answered)) return yield* Console.log(answered.value)
    const json = beforeDashes(words).includes("--json")
    return yield* cli(argv).pipe(
      Effect.tapErrorCause((cause) => {
        const failure = Cause.failureOption(cause)
        if (json && Option.isSome(failure) && ValidationError.isValidationError(failure.value)) {
          return Console.log(JSON.stringify({ success: false, message: usageText(failure.value) }, null, 2))
        }
        return Cause.isInterruptedOnly(cause) || Option.exists(failure, reported)
          ? Effect.void
          : Console.error(`${name}: ${Cause.squash(cause)}`)
      }),
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
