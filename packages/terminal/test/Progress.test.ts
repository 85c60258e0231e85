/**
 * The status line on a terminal: a warning printed while it shows starts on a cleared line
 * (never after the spinner's text), and the status is drawn again below it; off a terminal
 * only the lasting lines are printed. Also the counts and dates both command lines print.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Output from "../src/Output.js"
import * as Progress from "../src/Progress.js"
import { Tty, type TtyService } from "../src/Tty.js"
import { capturingConsole } from "./Capture.js"

const terminal = (writes: Array<string>, stderrIsTty: boolean): TtyService => ({
  interactive: false,
  stderrIsTty,
  colorStdout: false,
  colorStderr: false,
  truecolor: false,
  columns: 80,
  width: 80,
  write: (text) => Effect.sync(() => void writes.push(text)),
  ask: () => Effect.succeed(Option.none()),
  askHidden: () => Effect.succeed(Option.none())
})

const CLEAR = "\r\x1b[2K"

describe("statusLine", () => {
  it.scoped("clears the spinner's line before a warning, then draws the status again", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      yield* Effect.gen(function*() {
        const status = yield* Progress.statusLine
        yield* status.set("reading the catalogue")
        yield* status.warn("line 3: the same bundle and number as line 2")
      }).pipe(Effect.scoped, Effect.provideService(Tty, terminal(writes, true)))
      const at = writes.findIndex((text) => text.includes("warning:"))
      assert.isAbove(at, 0)
      assert.strictEqual(writes[at - 1], CLEAR, "the line is cleared right before the warning")
      assert.strictEqual(writes[at], "warning: line 3: the same bundle and number as line 2\n")
      assert.include(writes[at + 1], "reading the catalogue")
      // The scope's end leaves a clean line.
      assert.strictEqual(writes.at(-1), CLEAR)
    }))

  it.scoped("off a terminal prints only the lasting lines", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const { console, stderr } = yield* capturingConsole
      yield* Effect.gen(function*() {
        const status = yield* Progress.statusLine
        yield* status.set("reading the catalogue")
        yield* status.warn("careful")
      }).pipe(Effect.scoped, Effect.provideService(Tty, terminal(writes, false)), Effect.withConsole(console))
      assert.deepStrictEqual(writes, [])
      assert.deepStrictEqual(stderr, ["warning: careful"])
    }))
})

describe("counts and dates", () => {
  it("says 1 account, 2 accounts, 1 entry, 3 entries", () => {
    assert.strictEqual(Output.count(1, "account"), "1 account")
    assert.strictEqual(Output.count(2, "account"), "2 accounts")
    assert.strictEqual(Output.count(0, "order"), "0 orders")
    assert.strictEqual(Output.count(1, "entry", "entries"), "1 entry")
    assert.strictEqual(Output.count(3, "entry", "entries"), "3 entries")
  })

  it("prints an instant one way in both command lines: UTC to the second", () => {
    assert.strictEqual(Output.date(new Date("2026-11-01T08:30:00.123Z")), "2026-11-01 08:30:00Z")
  })
})
