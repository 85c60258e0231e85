import { describe, expect, it } from "vitest"
import { parseCsv, toCsv } from "../src/Csv.js"

describe("Csv", () => {
  it("reads quoted fields, CRLF, a byte-order mark and blank lines", () => {
    const rows = parseCsv("\uFEFFbundle_id,phone_number\r\n3,\"024 111,2222\"\r\n\r\n4,\"say \"\"hi\"\"\"\n")
    expect(rows).toEqual([
      { line: 1, cells: ["bundle_id", "phone_number"] },
      { line: 2, cells: ["3", "024 111,2222"] },
      { line: 4, cells: ["4", "say \"hi\""] }
    ])
  })

  it("writes quoted fields and keeps spreadsheet formulas as text", () => {
    expect(toCsv(["a", "b"], [["=1+1", "x,y"], [-2.5, "@home"]])).toBe("a,b\r\n'=1+1,\"x,y\"\r\n-2.5,'@home\r\n")
  })
})
