/**
 * What commands print: text for people (aligned tables fitted to the terminal's width,
 * statuses in colour when the stream takes colour) on stdout, notes, warnings and errors on
 * stderr, and, with `--json`, one JSON document on stdout and nothing else there. Text that
 * came from a server or a file is stripped of control characters before it reaches a
 * terminal, so a name cannot move the cursor or change colours.
 */
import { Console, Effect } from "effect"
import * as Tty from "./Tty.js"

/** Colours for one stream; every function returns its text unchanged when colour is off. */
export interface Style {
  readonly enabled: boolean
  /** The stream's width when it is a terminal (tables are fitted to it); none for a pipe or a file. */
  readonly width: number | undefined
  readonly bold: (text: string) => string
  readonly dim: (text: string) => string
  readonly red: (text: string) => string
  readonly green: (text: string) => string
  readonly yellow: (text: string) => string
  /** A `#RRGGBB` colour (a network's), in 24-bit colour or the nearest of the 256-colour palette. */
  readonly hex: (color: string, text: string) => string
}

const sgr = (open: string, close: string) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`

/** The nearest colour of the xterm 256-colour cube, for terminals without 24-bit colour. */
const cube = (r: number, g: number, b: number) => {
  const step = (v: number) => (v < 48 ? 0 : v < 115 ? 1 : Math.floor((v - 35) / 40))
  return 16 + 36 * step(r) + 6 * step(g) + step(b)
}

/** A style for a stream. */
export const style = (enabled: boolean, truecolor: boolean, width?: number): Style => {
  const plain = (text: string) => text
  if (!enabled) {
    return {
      enabled,
      width,
      bold: plain,
      dim: plain,
      red: plain,
      green: plain,
      yellow: plain,
      hex: (_, text) => text
    }
  }
  return {
    enabled,
    width,
    bold: sgr("1", "22"),
    dim: sgr("2", "22"),
    red: sgr("31", "39"),
    green: sgr("32", "39"),
    yellow: sgr("33", "39"),
    hex: (color, text) => {
      const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color)
      if (match === null) return text
      const [r, g, b] = match.slice(1).map((part) => parseInt(part, 16)) as [number, number, number]
      return sgr(truecolor ? `38;2;${r};${g};${b}` : `38;5;${cube(r, g, b)}`, "39")(text)
    }
  }
}

/** The styles of stdout and stderr. */
export const styles = Effect.map(Tty.Tty, (tty) => ({
  out: style(tty.colorStdout, tty.truecolor, tty.width),
  err: style(tty.colorStderr, tty.truecolor, tty.stderrIsTty ? tty.columns : undefined)
}))

/** Text from the server or a file, without control characters (no escape sequences reach the terminal). */
export const clean = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "")

/** The width of text on screen, escape sequences left out. */
export const visibleWidth = (text: string): number => text.replace(Tty.ANSI, "").length

/** Cuts text to `width` visible characters, ending in `…`; colour codes are dropped from a cut text. */
export const cut = (text: string, width: number): string => {
  if (visibleWidth(text) <= width) return text
  return `${text.replace(Tty.ANSI, "").slice(0, Math.max(0, width - 1))}…`
}

/** A column of a table. */
export interface Column<A> {
  readonly title: string
  readonly value: (row: A) => string
  /** Aligned right (amounts, counts). */
  readonly right?: boolean
}

/** The narrowest a column is cut to when the table does not fit. */
const MIN_COLUMN = 6

/**
 * Column widths that fit `width`: the widest left-aligned column gives up a character at a
 * time (amounts and counts, aligned right, are never cut), down to `MIN_COLUMN` or its title.
 */
const fitted = (widths: Array<number>, shrinkable: ReadonlyArray<number>, width: number | undefined) => {
  if (width === undefined) return widths
  const total = () => widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1)
  while (total() > width) {
    let widest = -1
    for (const i of shrinkable) {
      if (widths[i]! > MIN_COLUMN && (widest < 0 || widths[i]! > widths[widest]!)) widest = i
    }
    if (widest < 0) break
    widths[widest]!--
  }
  return widths
}

/**
 * An aligned table with a header line (bold when the stream takes colour); cells may carry
 * colour. On a terminal it is fitted to the width, long cells cut with `…`; a pipe gets
 * every character.
 */
export const table = <A>(columns: ReadonlyArray<Column<A>>, rows: ReadonlyArray<A>, s: Style): Array<string> => {
  const cells = rows.map((row) => columns.map((column) => column.value(row)))
  const natural = columns.map((column, i) =>
    Math.max(column.title.length, ...cells.map((line) => visibleWidth(line[i]!)))
  )
  const shrinkable = columns.flatMap((column, i) => column.right ? [] : [i])
  const widths = fitted(natural, shrinkable, s.width)
  const pad = (text: string, i: number) => {
    const fit = cut(text, widths[i]!)
    const fill = " ".repeat(Math.max(0, widths[i]! - visibleWidth(fit)))
    return columns[i]!.right ? fill + fit : fit + fill
  }
  const line = (values: ReadonlyArray<string>) => values.map(pad).join("  ").trimEnd()
  return [s.bold(line(columns.map((column) => column.title))), ...cells.map(line)]
}

/** A count with its noun, singular or plural: `1 account`, `2 accounts`, `3 entries`. */
export const count = (n: number, singular: string, plural = `${singular}s`): string =>
  `${n} ${n === 1 ? singular : plural}`

/** An instant as both command lines print it, in UTC to the second: `2026-11-01 08:30:00Z`. */
export const date = (d: Date): string => d.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, "Z")

/** Aligned `key  value` lines. */
export const fields = (pairs: ReadonlyArray<readonly [string, string]>, indent = "  "): Array<string> => {
  const width = Math.max(...pairs.map(([key]) => key.length))
  return pairs.map(([key, value]) => `${indent}${key.padEnd(width)}  ${value}`)
}

/**
 * A state in its colour: green when it went well (`successful`, `active`), yellow while it
 * waits (`pending`), red otherwise (`failed`, `suspended`, ...).
 */
export const status = (value: string, s: Style): string =>
  value === "successful" || value === "active"
    ? s.green(value)
    : value === "pending"
    ? s.yellow(value)
    : s.red(clean(value))

/** Turns a value JSON cannot hold (a `bigint`) into one it can. */
export type JsonReplacer = (key: string, value: unknown) => unknown

/**
 * Prints one JSON document on stdout, indented by two spaces, never coloured: what `--json`
 * prints, and nothing else goes to stdout with it.
 */
export const printJson = (value: unknown, replacer?: JsonReplacer): Effect.Effect<void> =>
  Console.log(JSON.stringify(value, replacer, 2))

/** Prints lines on stdout. */
export const printLines = (lines: ReadonlyArray<string>): Effect.Effect<void> => Console.log(lines.join("\n"))

/** A note for people on stderr (never on stdout, which `--json` keeps for its document). */
export const note = (text: string): Effect.Effect<void> => Console.error(text)

/** An error on stderr, `error:` in red. */
export const error = (text: string): Effect.Effect<void, never, Tty.Tty> =>
  Effect.flatMap(styles, ({ err }) => Console.error(`${err.red("error:")} ${text}`))

/** A warning on stderr, `warning:` in yellow. */
export const warn = (text: string): Effect.Effect<void, never, Tty.Tty> =>
  Effect.flatMap(styles, ({ err }) => Console.error(`${err.yellow("warning:")} ${text}`))
