/**
 * A status line on stderr: on a terminal it is redrawn in place (with a spinner frame, so a
 * long wait never looks frozen) and lines logged meanwhile appear above it; elsewhere
 * (a pipe, a log file) only the logged lines are printed, one per event. The line is cleared
 * when its scope closes, so what follows starts on a clean line.
 */
import { Console, Duration, Effect, Fiber, Schedule, type Scope } from "effect"
import * as Output from "./Output.js"
import { Tty } from "./Tty.js"

/** A status line. */
export interface StatusLine {
  /** Replaces the status text (shown on a terminal only). */
  readonly set: (text: string) => Effect.Effect<void>
  /** Prints a lasting line on stderr (above the status on a terminal). */
  readonly log: (text: string) => Effect.Effect<void>
  /** Prints a warning (`warning:` in yellow) as a lasting line: the status line is cleared first. */
  readonly warn: (text: string) => Effect.Effect<void>
}

const FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

/** A status line for the life of the scope; the line is cleared when the scope closes. */
export const statusLine: Effect.Effect<StatusLine, never, Scope.Scope | Tty> = Effect.gen(function*() {
  const tty = yield* Tty
  const yellow = Output.style(tty.colorStderr, tty.truecolor).yellow
  const warning = (text: string) => `${yellow("warning:")} ${text}`
  if (!tty.stderrIsTty) {
    return { set: () => Effect.void, log: (text) => Console.error(text), warn: (text) => Console.error(warning(text)) }
  }
  let text = ""
  let frame = 0
  const draw = Effect.suspend(() =>
    tty.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${Output.cut(text, tty.columns - 3)}`)
  )
  const clear = tty.write("\r\x1b[2K")
  const redraw = yield* Effect.forkScoped(Effect.repeat(draw, Schedule.spaced(Duration.millis(80))))
  yield* Effect.addFinalizer(() => Effect.zipRight(Fiber.interrupt(redraw), clear))
  return {
    set: (next) =>
      Effect.suspend(() => {
        text = next
        return draw
      }),
    log: (line) => Effect.zipRight(clear, Effect.zipRight(tty.write(`${line}\n`), draw)),
    warn: (text) => Effect.zipRight(clear, Effect.zipRight(tty.write(`${warning(text)}\n`), draw))
  }
})

/** A bar of `width` cells, `done` of `total` full. */
export const bar = (done: number, total: number, width = 20): string => {
  const full = total === 0 ? width : Math.round((done / total) * width)
  return `[${"█".repeat(full)}${"░".repeat(width - full)}]`
}

/** A duration for people: `45 s`, `2 m 05 s`, `1 h 03 m`. */
export const duration = (millis: number): string => {
  const seconds = Math.max(0, Math.ceil(millis / 1000))
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} m ${String(seconds % 60).padStart(2, "0")} s`
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} m`
}
