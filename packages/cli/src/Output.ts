/**
 * What the commands print: text for people (aligned tables, money as `GHS 5.50`, statuses and
 * networks in colour when the stream takes colour) and, with `--json`, one JSON document on
 * stdout. Text that came from the server is stripped of control characters before it reaches
 * a terminal, so a name cannot move the cursor or change colours.
 */
import { formatCedis } from "@databundle/client/Money"
import { Console, Effect } from "effect"
import * as Tty from "./Tty.js"

/** Colours for one stream; every function returns its text unchanged when colour is off. */
export interface Style {
  readonly enabled: boolean
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
export const style = (enabled: boolean, truecolor: boolean): Style => {
  const plain = (text: string) => text
  if (!enabled) {
    return { enabled, bold: plain, dim: plain, red: plain, green: plain, yellow: plain, hex: (_, text) => text }
  }
  return {
    enabled,
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
  out: style(tty.colorStdout, tty.truecolor),
  err: style(tty.colorStderr, tty.truecolor)
}))

/** Text from the server or a file, without control characters (no escape sequences reach the terminal). */
export const clean = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "")

/** The width of text on screen, escape sequences left out. */
export const visibleWidth = (text: string): number => text.replace(Tty.ANSI, "").length

/** A column of a table. */
export interface Column<A> {
  readonly title: string
  readonly value: (row: A) => string
  /** Aligned right (amounts, counts). */
  readonly right?: boolean
}

/** An aligned table with a header line; cells may carry colour. */
export const table = <A>(columns: ReadonlyArray<Column<A>>, rows: ReadonlyArray<A>, s: Style): Array<string> => {
  const cells = rows.map((row) => columns.map((column) => column.value(row)))
  const widths = columns.map((column, i) =>
    Math.max(column.title.length, ...cells.map((line) => visibleWidth(line[i]!)))
  )
  const pad = (text: string, i: number) => {
    const fill = " ".repeat(widths[i]! - visibleWidth(text))
    return columns[i]!.right ? fill + text : text + fill
  }
  const line = (values: ReadonlyArray<string>) => values.map(pad).join("  ").trimEnd()
  return [s.bold(line(columns.map((column) => column.title))), ...cells.map(line)]
}

/** Aligned `key  value` lines. */
export const fields = (pairs: ReadonlyArray<readonly [string, string]>, indent = "  "): Array<string> => {
  const width = Math.max(...pairs.map(([key]) => key.length))
  return pairs.map(([key, value]) => `${indent}${key.padEnd(width)}  ${value}`)
}

/** An order status in its colour: green when successful, yellow while pending, red when failed. */
export const status = (value: string, s: Style): string =>
  value === "successful" ? s.green(value) : value === "pending" ? s.yellow(value) : s.red(clean(value))

/** An instant as people read it, in UTC: `2026-11-01 08:30:00Z`. */
export const date = (d: Date): string => d.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, "Z")

/** JSON text of the API's decoded data: amounts as cedis, dates as ISO 8601. */
const toJson = (value: unknown): string =>
  // Every bigint in the API's data is an amount in pesewas; the wire carries cedis, from the exact decimal text.
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? Number(formatCedis(v)) : v), 2)

/** Prints one JSON document on stdout. */
export const printJson = (value: unknown): Effect.Effect<void> => Console.log(toJson(value))

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
