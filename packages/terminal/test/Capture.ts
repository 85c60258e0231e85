/**
 * A console that keeps what a command line prints, line by line, for tests of both CLIs.
 */
import { Console, Effect } from "effect"

/** What was printed on stdout and stderr, and the console that prints into them. */
export const capturingConsole = Effect.map(Console.consoleWith(Effect.succeed), (base) => {
  const stdout: Array<string> = []
  const stderr: Array<string> = []
  const line = (lines: Array<string>) => (...parts: ReadonlyArray<unknown>) => lines.push(parts.join(" "))
  const console: Console.Console = {
    ...base,
    log: (...parts) => Effect.sync(() => line(stdout)(...parts)),
    error: (...parts) => Effect.sync(() => line(stderr)(...parts)),
    unsafe: { ...base.unsafe, log: line(stdout), error: line(stderr) }
  }
  return { stdout, stderr, console }
})
