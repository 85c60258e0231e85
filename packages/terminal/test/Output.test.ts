/**
 * Tables fitted to a terminal's width and left whole on a pipe, cut text, and the colours of
 * states. (When colour is wanted at all is tested with the binary, in packages/cli.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as Output from "../src/Output.js"

interface Row {
  readonly name: string
  readonly note: string
  readonly amount: string
}

const columns: ReadonlyArray<Output.Column<Row>> = [
  { title: "NAME", value: (row) => row.name },
  { title: "NOTE", value: (row) => row.note },
  { title: "AMOUNT", value: (row) => row.amount, right: true }
]

const rows: ReadonlyArray<Row> = [
  { name: "MTN 1GB", note: "a note long enough to be cut on a narrow terminal", amount: "GHS 5.50" },
  { name: "Telecel 25GB", note: "short", amount: "GHS 98.00" }
]

describe("table", () => {
  it("is whole on a pipe: no width, nothing cut", () => {
    const lines = Output.table(columns, rows, Output.style(false, false))
    assert.include(lines[1], "a note long enough to be cut on a narrow terminal")
    assert.match(lines[2]!, /^Telecel 25GB\s+short\s+GHS 98\.00$/)
  })

  it("fits a terminal's width, cutting the widest text column and never the amounts", () => {
    const lines = Output.table(columns, rows, Output.style(true, false, 40))
    for (const line of lines) assert.isAtMost(Output.visibleWidth(line), 40)
    assert.include(lines[1], "…")
    assert.match(lines[1]!, /GHS 5\.50$/)
    assert.match(lines[2]!, /GHS 98\.00$/)
    assert.include(lines[0], "\x1b[1m")
  })

  it("cuts text to a width, dropping colour from what it cuts", () => {
    assert.strictEqual(Output.cut("abcdef", 10), "abcdef")
    assert.strictEqual(Output.cut("\x1b[31mabcdef\x1b[39m", 4), "abc…")
  })
})

describe("colour", () => {
  it("colours a state by how it went", () => {
    const s = Output.style(true, false)
    assert.strictEqual(Output.status("successful", s), "\x1b[32msuccessful\x1b[39m")
    assert.strictEqual(Output.status("active", s), "\x1b[32mactive\x1b[39m")
    assert.strictEqual(Output.status("pending", s), "\x1b[33mpending\x1b[39m")
    assert.strictEqual(Output.status("failed", s), "\x1b[31mfailed\x1b[39m")
    assert.strictEqual(Output.status("failed", Output.style(false, false)), "failed")
  })
})
