/**
 * The terminal a command line runs in: which streams are terminals, whether colour is wanted
 * (decided once, here, for both streams), how wide stdout is, and the few interactions that
 * need a terminal (a question, a hidden key, a progress line rewritten in place). A service,
 * so tests run commands as if on a terminal or a pipe.
 */
// Deep imports: this module is on the start-up path, which the effect barrel would fill with every module.
import * as Config from "effect/Config"
import type * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as readline from "node:readline"

/** The terminal's facts and interactions. */
export interface TtyService {
  /** stdin is a terminal: questions can be asked. */
  readonly interactive: boolean
  /** stderr is a terminal: progress lines can be rewritten in place. */
  readonly stderrIsTty: boolean
  /** ANSI colour on stdout. */
  readonly colorStdout: boolean
  /** ANSI colour on stderr. */
  readonly colorStderr: boolean
  /** The terminal understands 24-bit colour (else the 256-colour palette is used). */
  readonly truecolor: boolean
  /** Width of stderr in columns (80 when unknown). */
  readonly columns: number
  /** Width of stdout in columns when it is a terminal: tables are fitted to it. Absent for a pipe, which is never cut. */
  readonly width?: number | undefined
  /** Writes text to stderr as it is (no newline added), for progress lines. */
  readonly write: (text: string) => Effect.Effect<void>
  /** Asks a question on stderr and reads one line of stdin; none at end of input. */
  readonly ask: (question: string) => Effect.Effect<Option.Option<string>>
  /** Like `ask`, without echoing what is typed (an API key). */
  readonly askHidden: (question: string) => Effect.Effect<Option.Option<string>>
}

/** The terminal the CLI runs in. */
export class Tty extends Context.Tag("terminal/Tty")<Tty, TtyService>() {}

/**
 * Whether a stream gets colour: only a terminal, never with `NO_COLOR` set to anything
 * non-empty (no-color.org), and always with `FORCE_COLOR` set to anything but `0`.
 */
export const colorWanted = (isTty: boolean, env: { readonly noColor?: string; readonly forceColor?: string }) => {
  if (env.noColor !== undefined && env.noColor !== "") return false
  if (env.forceColor !== undefined && env.forceColor !== "" && env.forceColor !== "0") return true
  return isTty
}

/** Routes Ctrl-C typed at a question (a terminal in raw mode gets it as a key) to the usual SIGINT path. */
const interruptSelf = () => process.kill(process.pid, "SIGINT")

const askLine = (question: string) =>
  Effect.async<Option.Option<string>>((resume) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY })
    let done = false
    const finish = (answer: Option.Option<string>) => {
      if (done) return
      done = true
      rl.close()
      resume(Effect.succeed(answer))
    }
    rl.on("SIGINT", () => {
      finish(Option.none())
      interruptSelf()
    })
    rl.once("close", () => finish(Option.none()))
    if (process.stdin.isTTY) rl.question(question, (answer) => finish(Option.some(answer)))
    else rl.once("line", (line) => finish(Option.some(line)))
    return Effect.sync(() => finish(Option.none()))
  })

const askHiddenLine = (question: string) =>
  Effect.async<Option.Option<string>>((resume) => {
    const stdin = process.stdin
    // Without a terminal there is nothing to hide: read the line (`echo "$KEY" | bundles login`).
    if (!stdin.isTTY) {
      resume(askLine(""))
      return
    }
    process.stderr.write(question)
    let value = ""
    const stop = () => {
      stdin.off("data", onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write("\n")
    }
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n") {
          stop()
          return resume(Effect.succeed(Option.some(value)))
        }
        if (char === "\u0003") {
          stop()
          interruptSelf()
          return resume(Effect.succeed(Option.none()))
        }
        if (char === "\u0004") {
          stop()
          return resume(Effect.succeed(value === "" ? Option.none() : Option.some(value)))
        }
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1)
        else if (char >= " ") value += char
      }
    }
    stdin.setEncoding("utf8")
    stdin.setRawMode(true)
    stdin.resume()
    stdin.on("data", onData)
    return Effect.sync(stop)
  })

/** The process's own terminal, with `NO_COLOR`/`FORCE_COLOR`/`COLORTERM` read through `Config`. */
export const layer: Layer.Layer<Tty> = Layer.effect(
  Tty,
  Effect.gen(function*() {
    const env = yield* Config.all({
      noColor: Config.option(Config.string("NO_COLOR")),
      forceColor: Config.option(Config.string("FORCE_COLOR")),
      colorTerm: Config.option(Config.string("COLORTERM"))
    }).pipe(Effect.orDie)
    const flags = {
      ...Option.match(env.noColor, { onNone: () => ({}), onSome: (noColor) => ({ noColor }) }),
      ...Option.match(env.forceColor, { onNone: () => ({}), onSome: (forceColor) => ({ forceColor }) })
    }
    return Tty.of({
      interactive: process.stdin.isTTY === true,
      stderrIsTty: process.stderr.isTTY === true,
      colorStdout: colorWanted(process.stdout.isTTY === true, flags),
      colorStderr: colorWanted(process.stderr.isTTY === true, flags),
      truecolor: Option.exists(env.colorTerm, (value) => /^(truecolor|24bit)$/i.test(value)),
      columns: process.stderr.columns || 80,
      width: process.stdout.isTTY === true && process.stdout.columns > 0 ? process.stdout.columns : undefined,
      write: (text) => Effect.sync(() => void process.stderr.write(text)),
      ask: askLine,
      askHidden: askHiddenLine
    })
  })
)

/** Runs `effect` on the `Tty` in context, else on the process's own terminal. */
export const withTty = <A, E, R>(effect: Effect.Effect<A, E, R | Tty>): Effect.Effect<A, E, Exclude<R, Tty>> =>
  Effect.flatMap(
    Effect.serviceOption(Tty),
    Option.match({
      onNone: () => Effect.provide(effect, layer),
      onSome: (tty) => Effect.provideService(effect, Tty, tty)
    })
  )

/** Asks a yes/no question; anything but y or yes (or no answer at all) is a no. */
export const confirm = (question: string): Effect.Effect<boolean, never, Tty> =>
  Effect.flatMap(Tty, (tty) => tty.ask(`${question} [y/N] `)).pipe(
    Effect.map(Option.exists((answer) => /^\s*y(es)?\s*$/i.test(answer)))
  )

/** ANSI colour and style codes. */
export const ANSI = /\x1b\[[0-9;]*m/g

/**
 * The console with colour codes removed from what goes to the streams that take none: the
 * @effect/cli parser colours its help and errors whatever the stream.
 */
export const uncolored = (
  console: Console.Console,
  plain: { readonly stdout: boolean; readonly stderr: boolean }
): Console.Console => {
  const strip = (parts: ReadonlyArray<unknown>) =>
    parts.map((part) => typeof part === "string" ? part.replace(ANSI, "") : part)
  const out = (log: (...parts: ReadonlyArray<unknown>) => void, on: boolean) =>
    on ? (...parts: ReadonlyArray<unknown>) => log(...strip(parts)) : log
  return {
    ...console,
    log: plain.stdout ? (...parts) => console.log(...strip(parts)) : console.log,
    error: plain.stderr ? (...parts) => console.error(...strip(parts)) : console.error,
    unsafe: {
      ...console.unsafe,
      log: out(console.unsafe.log, plain.stdout),
      error: out(console.unsafe.error, plain.stderr)
    }
  }
}
