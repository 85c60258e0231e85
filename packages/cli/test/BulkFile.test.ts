/**
 * The bulk file on its own: CSV forms (quotes, CRLF, BOM, blank lines, headers), every problem
 * reported with its line, and the derived references that make a re-run safe.
 */
import { assert, describe, it } from "@effect/vitest"
import * as BulkFile from "../src/BulkFile.js"
import type * as Catalogue from "../src/Catalogue.js"

const network = (id: number, name: string, slug: string) =>
  ({ id, name, slug, color: "#FFCC00", delivery: "now", bundles_count: 1 }) as unknown as Catalogue.Network

const bundle = (id: number, name: string, price: bigint, active = true) =>
  ({ id, name, size: "1GB", price, badge: "", is_active: active }) as unknown as Catalogue.Bundle

const mtn = network(1, "MTN", "mtn")
const telecel = network(2, "Telecel", "telecel")
const catalogue: Catalogue.Catalogue = (() => {
  const entries: Array<Catalogue.Entry> = [
    { network: mtn, bundle: bundle(1, "MTN 1GB", 550n) },
    { network: mtn, bundle: bundle(4, "MTN 4GB", 2080n, false) },
    { network: telecel, bundle: bundle(15, "Telecel 2GB", 950n) }
  ]
  return {
    networks: [mtn, telecel].map((n) => ({
      network: n,
      bundles: entries.filter((e) => e.network === n).map((e) => e.bundle)
    })),
    byId: new Map(entries.map((e) => [e.bundle.id, e]))
  }
})()

describe("parseCsv", () => {
  it("reads quotes, escaped quotes, commas and line breaks inside quotes, CRLF, a BOM and blank lines", () => {
    const { errors, records } = BulkFile.parseCsv(
      "\uFEFFa,b\r\n\r\n\"x, y\",\"say \"\"hi\"\"\"\r\n\"multi\nline\",z\n  ,  \n1,2"
    )
    assert.deepStrictEqual(errors, [])
    assert.deepStrictEqual(records, [
      { line: 1, cells: ["a", "b"] },
      { line: 3, cells: ["x, y", "say \"hi\""] },
      { line: 4, cells: ["multi\nline", "z"] },
      { line: 7, cells: ["1", "2"] }
    ])
  })

  it("reports an unclosed quote and text after a closing quote, with their lines", () => {
    assert.deepStrictEqual(BulkFile.parseCsv("1,\"02\"41\n2,3").errors, [
      { line: 1, message: "unexpected text after a closing quote" }
    ])
    assert.deepStrictEqual(BulkFile.parseCsv("1,2\n3,\"open").errors, [
      { line: 2, message: "a quoted field is not closed" }
    ])
  })
})

describe("spreadsheets as resellers save them", () => {
  const expected = [
    { line: 1, cells: ["bundle_id", "phone_number", "reference"] },
    { line: 2, cells: ["1", "024 123 4567", "INV-1; first"] },
    { line: 3, cells: ["15", "0201234567", ""] }
  ]

  it("reads semicolon separated files (Excel where the decimal mark is a comma), with Excel's sep= line", () => {
    const text = "bundle_id;phone_number;reference\r\n1;024 123 4567;\"INV-1; first\"\r\n15;0201234567;\r\n"
    assert.strictEqual(BulkFile.detectDelimiter(text), ";")
    assert.deepStrictEqual(BulkFile.parseCsv(text), { records: expected, errors: [] })
    const hinted = BulkFile.parseCsv(`sep=;\r\n${text}`)
    assert.deepStrictEqual(hinted.errors, [])
    assert.deepStrictEqual(hinted.records, expected.map((r) => ({ ...r, line: r.line + 1 })))
  })

  it("reads tab separated files, and Excel's Unicode Text (UTF-16 with a BOM, tabs)", () => {
    const text = "bundle_id\tphone_number\treference\n1\t024 123 4567\t\"INV-1; first\"\n15\t0201234567\t\n"
    assert.deepStrictEqual(BulkFile.parseCsv(text), { records: expected, errors: [] })
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from(text, "utf16le")])
    const decoded = BulkFile.decodeFile(utf16, "orders.txt")
    assert.strictEqual(decoded._tag, "Text")
    assert.deepStrictEqual(BulkFile.parseCsv(decoded._tag === "Text" ? decoded.text : "").records, expected)
  })

  it("reads a UTF-8 BOM and quoted fields holding separators, quotes and line breaks", () => {
    const bytes = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...Buffer.from("bundle_id,phone_number,reference\n1,\"024 123 4567\",\"a,\"\"b\"\"\nc\"\n")
    ])
    const decoded = BulkFile.decodeFile(bytes, "orders.csv")
    assert.strictEqual(decoded._tag, "Text")
    const { errors, records } = BulkFile.parseCsv(decoded._tag === "Text" ? decoded.text : "")
    assert.deepStrictEqual(errors, [])
    assert.deepStrictEqual(records[1], { line: 2, cells: ["1", "024 123 4567", "a,\"b\"\nc"] })
    const checked = BulkFile.check(
      "\uFEFFbundle_id;phone_number\n1;\"+233 24 123 4567\"\n",
      catalogue,
      "bom"
    )
    assert.deepStrictEqual(checked.errors, [])
    assert.strictEqual(checked.rows[0]!.phone, "0241234567")
  })

  it("refuses a workbook by its content or its name, saying how to save it as CSV", () => {
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00])
    for (
      const [bytes, name] of [[zip, "orders.csv"], [zip, "orders.xlsx"], [
        new Uint8Array([0xd0, 0xcf, 0x11, 0xe0]),
        "orders.xls"
      ]] as const
    ) {
      const decoded = BulkFile.decodeFile(bytes, name)
      assert.strictEqual(decoded._tag, "Refused", name)
      if (decoded._tag === "Refused") {
        assert.include(decoded.message, "not a CSV file")
        assert.include(decoded.message, "Save As")
        assert.include(decoded.message, "CSV UTF-8")
      }
    }
  })
})

describe("check", () => {
  it("takes every phone form the client's helper reads and sends the API's local form", () => {
    const checked = BulkFile.check(
      "bundle_id,phone_number\n1,+233 24 123 4567\n1,024-123-4568\n1,233241234569\n1,(024) 123 4570\n",
      catalogue,
      "march"
    )
    assert.deepStrictEqual(checked.errors, [])
    assert.deepStrictEqual(checked.rows.map((r) => r.phone), ["0241234567", "0241234568", "0241234569", "0241234570"])
    assert.deepStrictEqual(checked.rows.map((r) => r.line), [2, 3, 4, 5])
  })

  it("reports every problem of every line at once, in line order", () => {
    const checked = BulkFile.check(
      [
        "bundle_id,phone_number,reference",
        "1,12345,",
        "999,0241234567,",
        "4,0241234567,",
        "abc,,",
        "1,0241234567,inv 1",
        "1,0241234567,inv-2",
        "15,0501234567,inv-2"
      ].join("\n"),
      catalogue,
      "march"
    )
    assert.deepStrictEqual(checked.errors, [
      { line: 2, message: "\"12345\" is not a Ghana mobile number" },
      { line: 3, message: "bundle 999 is not in the catalogue of active networks" },
      { line: 4, message: "bundle 4 (MTN 4GB) is not available at the moment" },
      { line: 5, message: "\"abc\" is not a bundle id" },
      { line: 5, message: "the phone number is missing" },
      { line: 6, message: "reference \"inv 1\" must be 1 to 64 characters of A-Z, a-z, 0-9, _, ., : and -" },
      { line: 8, message: "reference inv-2 is also on line 7" }
    ])
  })

  it("reads files without a header, and headers in any order with columns it ignores", () => {
    const plain = BulkFile.check("1,0241234567\n15,0501234567,inv-9\n", catalogue, "b")
    assert.deepStrictEqual(plain.errors, [])
    assert.deepStrictEqual(plain.rows.map((r) => [r.line, r.reference.startsWith("b:b:"), r.explicit]), [
      [1, true, false],
      [2, false, true]
    ])
    const named = BulkFile.check("Customer,Phone Number,Bundle ID\nAma,0241234567,1\n", catalogue, "b")
    assert.deepStrictEqual(named.errors, [])
    assert.deepStrictEqual(named.warnings, [{ line: 1, message: "ignoring columns Customer" }])
    assert.strictEqual(named.rows[0]!.entry.bundle.id, 1)
    assert.deepStrictEqual(BulkFile.check("name,phone\nx,0241234567\n", catalogue, "b").errors, [
      { line: 1, message: "the header must name a bundle_id and a phone_number column (found: name, phone)" }
    ])
    assert.deepStrictEqual(BulkFile.check("1,0241234567,r,extra\n", catalogue, "b").errors, [
      { line: 1, message: "expected bundle_id,phone_number[,reference], found 4 columns" }
    ])
    assert.deepStrictEqual(BulkFile.check("\n\n", catalogue, "b").errors, [{
      line: 1,
      message: "the file has no rows"
    }])
  })

  it("warns about identical rows and numbers on another network, without refusing them", () => {
    const checked = BulkFile.check("1,0241234567\n1,+233241234567\n1,0201234567\n", catalogue, "b")
    assert.deepStrictEqual(checked.errors, [])
    assert.strictEqual(checked.rows.length, 3)
    assert.deepStrictEqual(checked.warnings, [
      { line: 2, message: "same bundle and number as line 1: bought as a separate purchase" },
      {
        line: 3,
        message: "the prefix of 0201234567 (020) belongs to Telecel, but MTN 1GB is on the MTN network"
      }
    ])
  })
})

describe("derived references", () => {
  const refs = (text: string, batch = "march") => BulkFile.check(text, catalogue, batch).rows.map((r) => r.reference)

  it("are within the API's rule and tell identical rows apart by occurrence", () => {
    const [first, second, other] = refs("1,0241234567\n1,0241234567\n15,0501234567\n")
    for (const reference of [first, second, other]) assert.match(reference!, /^b:march:[0-9a-f]{32}$/)
    assert.notStrictEqual(first, second)
    assert.notStrictEqual(first, other)
  })

  it("survive other ways of writing the number, reordered rows and appended rows", () => {
    const original = refs("1,0241234567\n15,0501234567\n1,0241234567\n")
    const rewritten = refs("bundle_id,phone_number\n15,+233 50 123 4567\n1,024-123-4567\n1,233241234567\n9,x\n")
      .slice(0, 3)
    assert.sameMembers(rewritten, original)
    const appended = refs("1,0241234567\n15,0501234567\n1,0241234567\n1,0241234567\n")
    assert.deepStrictEqual(appended.slice(0, 3), original)
    assert.notInclude(original, appended[3])
  })

  it("differ from batch to batch, even when their names make the same slug", () => {
    const march = refs("1,0241234567\n", "March 2026")
    const other = refs("1,0241234567\n", "march-2026")
    const april = refs("1,0241234567\n", "april-2026")
    assert.match(march[0]!, /^b:march-2026:/)
    assert.match(other[0]!, /^b:march-2026:/)
    assert.notStrictEqual(march[0], other[0])
    assert.notStrictEqual(march[0], april[0])
  })

  it("keep long batch names within 64 characters", () => {
    const [reference] = refs("1,0241234567\n", "x".repeat(300))
    assert.isAtMost(reference!.length, 64)
    assert.strictEqual(BulkFile.batchSlug("   "), "batch")
    assert.strictEqual(BulkFile.defaultBatch("/tmp/orders/march.csv"), "march")
    assert.strictEqual(BulkFile.defaultBatch("C:\\data\\april.2026.csv"), "april.2026")
  })
})
