/**
 * The bulk file as the CLI and the dashboard read it (`@databundle/client/Bulk`): CSV forms
 * (quotes, CRLF, BOM, semicolons, tabs, blank lines, headers), every problem reported with its
 * line, the derived references that make a re-run safe, the pacer and the results file.
 */
import { assert, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import * as BulkFile from "../src/Bulk.js"
import * as Pacing from "../src/Pacing.js"

const mtn = { name: "MTN", slug: "mtn" }
const telecel = { name: "Telecel", slug: "telecel" }
const entry = (network: BulkFile.Entry["network"], id: number, name: string, active = true) => ({
  network,
  bundle: { id, name, is_active: active }
})
const catalogue = new Map<number, BulkFile.Entry>(
  [entry(mtn, 1, "MTN 1GB"), entry(mtn, 4, "MTN 4GB", false), entry(telecel, 15, "Telecel 2GB")].map((
    e
  ) => [e.bundle.id, e])
)

describe("parseCsv", () => {
  it("reads quotes, escaped quotes, commas and line breaks inside quotes, CRLF, a BOM and blank lines", async () => {
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

  it("reports an unclosed quote and text after a closing quote, with their lines", async () => {
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

  it("reads semicolon separated files (Excel where the decimal mark is a comma), with Excel's sep= line", async () => {
    const text = "bundle_id;phone_number;reference\r\n1;024 123 4567;\"INV-1; first\"\r\n15;0201234567;\r\n"
    assert.strictEqual(BulkFile.detectDelimiter(text), ";")
    assert.deepStrictEqual(BulkFile.parseCsv(text), { records: expected, errors: [] })
    const hinted = BulkFile.parseCsv(`sep=;\r\n${text}`)
    assert.deepStrictEqual(hinted.errors, [])
    assert.deepStrictEqual(hinted.records, expected.map((r) => ({ ...r, line: r.line + 1 })))
  })

  it("reads tab separated files, and Excel's Unicode Text (UTF-16 with a BOM, tabs)", async () => {
    const text = "bundle_id\tphone_number\treference\n1\t024 123 4567\t\"INV-1; first\"\n15\t0201234567\t\n"
    assert.deepStrictEqual(BulkFile.parseCsv(text), { records: expected, errors: [] })
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from(text, "utf16le")])
    const decoded = BulkFile.decodeFile(utf16, "orders.txt")
    assert.strictEqual(decoded._tag, "Text")
    assert.deepStrictEqual(BulkFile.parseCsv(decoded._tag === "Text" ? decoded.text : "").records, expected)
  })

  it("reads a UTF-8 BOM and quoted fields holding separators, quotes and line breaks", async () => {
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
    const checked = await BulkFile.check(
      "\uFEFFbundle_id;phone_number\n1;\"+233 24 123 4567\"\n",
      catalogue,
      "bom"
    )
    assert.deepStrictEqual(checked.errors, [])
    assert.strictEqual(checked.rows[0]!.phone, "0241234567")
  })

  it("refuses a workbook by its content or its name, saying how to save it as CSV", async () => {
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
  it("takes every phone form the client's helper reads and sends the API's local form", async () => {
    const checked = await BulkFile.check(
      "bundle_id,phone_number\n1,+233 24 123 4567\n1,024-123-4568\n1,233241234569\n1,(024) 123 4570\n",
      catalogue,
      "march"
    )
    assert.deepStrictEqual(checked.errors, [])
    assert.deepStrictEqual(checked.rows.map((r) => r.phone), ["0241234567", "0241234568", "0241234569", "0241234570"])
    assert.deepStrictEqual(checked.rows.map((r) => r.line), [2, 3, 4, 5])
  })

  it("reports every problem of every line at once, in line order", async () => {
    const checked = await BulkFile.check(
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

  it("reads files without a header, and headers in any order with columns it ignores", async () => {
    const plain = await BulkFile.check("1,0241234567\n15,0501234567,inv-9\n", catalogue, "b")
    assert.deepStrictEqual(plain.errors, [])
    assert.deepStrictEqual(plain.rows.map((r) => [r.line, r.reference.startsWith("b:b:"), r.explicit]), [
      [1, true, false],
      [2, false, true]
    ])
    const named = await BulkFile.check("Customer,Phone Number,Bundle ID\nAma,0241234567,1\n", catalogue, "b")
    assert.deepStrictEqual(named.errors, [])
    assert.deepStrictEqual(named.warnings, [{ line: 1, message: "ignoring columns Customer" }])
    assert.strictEqual(named.rows[0]!.entry.bundle.id, 1)
    assert.deepStrictEqual((await BulkFile.check("name,phone\nx,0241234567\n", catalogue, "b")).errors, [
      { line: 1, message: "the header must name a bundle_id and a phone_number column (found: name, phone)" }
    ])
    assert.deepStrictEqual((await BulkFile.check("1,0241234567,r,extra\n", catalogue, "b")).errors, [
      { line: 1, message: "expected bundle_id,phone_number[,reference], found 4 columns" }
    ])
    assert.deepStrictEqual((await BulkFile.check("\n\n", catalogue, "b")).errors, [{
      line: 1,
      message: "the file has no rows"
    }])
  })

  it("warns about identical rows and numbers on another network, without refusing them", async () => {
    const checked = await BulkFile.check("1,0241234567\n1,+233241234567\n1,0201234567\n", catalogue, "b")
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
  const refs = async (text: string, batch = "march") =>
    (await BulkFile.check(text, catalogue, batch)).rows.map((r) => r.reference)

  it("are within the API's rule and tell identical rows apart by occurrence", async () => {
    const [first, second, other] = await refs("1,0241234567\n1,0241234567\n15,0501234567\n")
    for (const reference of [first, second, other]) assert.match(reference!, /^b:march:[0-9a-f]{32}$/)
    assert.notStrictEqual(first, second)
    assert.notStrictEqual(first, other)
  })

  it("survive other ways of writing the number, reordered rows and appended rows", async () => {
    const original = await refs("1,0241234567\n15,0501234567\n1,0241234567\n")
    const rewritten = (await refs("bundle_id,phone_number\n15,+233 50 123 4567\n1,024-123-4567\n1,233241234567\n9,x\n"))
      .slice(0, 3)
    assert.sameMembers(rewritten, original)
    const appended = await refs("1,0241234567\n15,0501234567\n1,0241234567\n1,0241234567\n")
    assert.deepStrictEqual(appended.slice(0, 3), original)
    assert.notInclude(original, appended[3])
  })

  it("differ from batch to batch, even when their names make the same slug", async () => {
    const march = await refs("1,0241234567\n", "March 2026")
    const other = await refs("1,0241234567\n", "march-2026")
    const april = await refs("1,0241234567\n", "april-2026")
    assert.match(march[0]!, /^b:march-2026:/)
    assert.match(other[0]!, /^b:march-2026:/)
    assert.notStrictEqual(march[0], other[0])
    assert.notStrictEqual(march[0], april[0])
  })

  it("keep long batch names within 64 characters", async () => {
    const [reference] = await refs("1,0241234567\n", "x".repeat(300))
    assert.isAtMost(reference!.length, 64)
    assert.strictEqual(BulkFile.batchSlug("   "), "batch")
    assert.strictEqual(BulkFile.defaultBatch("/tmp/orders/march.csv"), "march")
    assert.strictEqual(BulkFile.defaultBatch("C:\\data\\april.2026.csv"), "april.2026")
  })
})

describe("finding what a batch bought already", () => {
  const rowsOf = async (text: string) => (await BulkFile.check(text, catalogue, "march")).rows

  it("reads derived references from one listing on the batch's prefix, and needs no order count", async () => {
    const rows = await rowsOf("1,0241234567\n15,0501234567\n")
    assert.isFalse(BulkFile.needsOrderCount(rows))
    const plan = BulkFile.batchLookup(rows, "march", 0, 50)
    assert.deepStrictEqual(plan.listings.map((l) => l.filter), [{ reference_prefix: "b:march:" }])
    assert.deepStrictEqual([...plan.listings[0]!.wanted], rows.map((r) => r.reference))
    assert.deepStrictEqual(plan.single, [])
  })

  it("reads the file's own references by whichever costs fewer requests", async () => {
    const rows = await rowsOf(
      "bundle_id,phone_number,reference\n1,0241234567,inv-1\n15,0501234567,inv-2\n1,0241234568,\n"
    )
    assert.isTrue(BulkFile.needsOrderCount(rows))
    // 100 orders are 2 pages of 50: no more than the 2 single lookups, so the listing is read.
    const few = BulkFile.batchLookup(rows, "march", 100, 50)
    assert.deepStrictEqual(few.listings.map((l) => l.filter), [{ reference_prefix: "b:march:" }, {}])
    assert.deepStrictEqual([...few.listings[1]!.wanted], ["inv-1", "inv-2"])
    assert.deepStrictEqual(few.single, [])
    // 101 orders are 3 pages: one lookup per reference is cheaper.
    const many = BulkFile.batchLookup(rows, "march", 101, 50)
    assert.strictEqual(many.listings.length, 1)
    assert.deepStrictEqual(many.single, ["inv-1", "inv-2"])
    // An account with no orders has nothing to find.
    assert.deepStrictEqual(BulkFile.batchLookup(rows, "march", 0, 50).single, [])
  })
})

describe("one rule on every surface", () => {
  it("derives the references the command line always derived (SHA-256 of batch, bundle, number, occurrence)", async () => {
    const expected = `b:march-2026:${
      createHash("sha256").update("March 2026\n1\n0241234567\n2").digest("hex").slice(0, 32)
    }`
    assert.strictEqual(await BulkFile.deriveReference("March 2026", 1, "0241234567", 2), expected)
  })

  it("refuses a fixed-line number as the client's phone reader does", async () => {
    const checked = await BulkFile.check("1,030 123 4567\n", catalogue, "b")
    assert.deepStrictEqual(checked.errors, [{ line: 1, message: "\"030 123 4567\" is not a Ghana mobile number" }])
  })

  it("imports no Effect, so a browser page can carry it (and its pacer)", async () => {
    const esbuild = await import("esbuild")
    const built = await esbuild.build({
      entryPoints: ["../src/Bulk.ts", "../src/Pacing.ts"].map((file) => new URL(file, import.meta.url).pathname),
      bundle: true,
      write: false,
      outdir: "out",
      metafile: true,
      format: "esm",
      platform: "browser",
      conditions: ["@databundle/source"],
      logLevel: "silent"
    })
    const inputs = Object.keys(built.metafile.inputs)
    assert.deepStrictEqual(inputs.filter((file) => /node_modules|effect/.test(file)), [])
  })
})

describe("the pacer", () => {
  const headers = (limit: number, remaining: number, reset: number) => (name: string) =>
    ({
      "x-ratelimit-limit": String(limit),
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-reset": String(reset)
    })[
      name
    ]

  it("lets orders go while the window has room, then waits for its reset", () => {
    const pacer = Pacing.makePacer()
    assert.strictEqual(pacer.delay(0), 0)
    pacer.saw(headers(10, 3, 40), 1_000)
    assert.strictEqual(pacer.delay(1_000), 0)
    pacer.saw(headers(10, 0, 40), 2_000)
    assert.strictEqual(pacer.delay(2_000), 40_000)
    assert.strictEqual(pacer.delay(42_000), 0)
    // A response without the headers leaves what was learnt.
    pacer.saw(() => undefined, 3_000)
    assert.deepStrictEqual(pacer.window(), { limit: 10, remaining: 0, resetAt: 42_000 })
  })

  it("estimates the rest of a run from the latency and the window", () => {
    const pacer = Pacing.makePacer()
    assert.strictEqual(pacer.eta(5, 0), undefined)
    pacer.took(100)
    assert.strictEqual(pacer.eta(5, 0), 500)
    pacer.saw(headers(2, 1, 30), 0)
    // One goes now, two wait for the reset (30 s), the last waits a further window.
    assert.strictEqual(pacer.eta(4, 0), 400 + 30_000 + 61_000)
  })

  it("waits what a 429 asks, at least a second", () => {
    assert.strictEqual(Pacing.retryAfterMillis(7), 7_000)
    assert.strictEqual(Pacing.retryAfterMillis(0), 1_000)
    assert.strictEqual(Pacing.retryAfterMillis(undefined), 1_000)
  })
})

describe("results", () => {
  it("count every row once, under what became of it, and write the same CSV columns everywhere", async () => {
    const { rows } = await BulkFile.check(
      "1,0241234567\n1,0241234568\n1,0241234569\n15,0501234567\n1,0241234570\n",
      catalogue,
      "r"
    )
    const order = (n: string, status: "successful" | "failed") => ({ order_number: n, status, amount_paid: 5.5 })
    const results: Array<BulkFile.Result<number>> = [
      { row: rows[0]!, outcome: { _tag: "Bought", order: order("ORD-1", "successful"), replayed: false } },
      { row: rows[1]!, outcome: { _tag: "Bought", order: order("ORD-2", "failed"), replayed: false } },
      { row: rows[2]!, outcome: { _tag: "Earlier", order: order("ORD-0", "successful") } },
      { row: rows[3]!, outcome: { _tag: "Error", message: "=HYPERLINK(\"x\")" } },
      { row: rows[4]!, outcome: { _tag: "NotBought" } }
    ]
    assert.deepStrictEqual(BulkFile.tally(results), {
      rows: 5,
      boughtNow: 2,
      boughtBefore: 1,
      failedOrders: 1,
      errors: 1,
      notBought: 1
    })
    const csv = BulkFile.toCsv(
      BulkFile.RESULT_COLUMNS,
      results.map((r) => BulkFile.RESULT_COLUMNS.map((c) => BulkFile.resultFields(r)[c]))
    )
    const lines = csv.split("\r\n")
    assert.strictEqual(lines[0], "row,bundle_id,phone_number,reference,order_number,status,amount,bought,error")
    assert.match(lines[2]!, /^2,1,0241234568,b:r:[0-9a-f]{32},ORD-2,failed,5.5,now,$/)
    // A cell a spreadsheet would run as a formula stays text.
    assert.match(lines[4]!, /,error,,,"'=HYPERLINK\(""x""\)"$/)
    assert.match(lines[5]!, /,not_bought,,,$/)
  })
})

describe("CSV out", () => {
  it("quotes what needs quoting and keeps spreadsheet formulas as text, numbers as numbers", () => {
    assert.strictEqual(
      BulkFile.toCsv(["a", "b"], [["=1+1", "x,y"], [-2.5, "@home"], [null, "a;b"]]),
      "a,b\r\n'=1+1,\"x,y\"\r\n-2.5,'@home\r\n,\"a;b\"\r\n"
    )
  })
})

describe("references used before", () => {
  it("flag a given reference an earlier order used for another purchase, never a derived one", async () => {
    const { rows } = await BulkFile.check("1,0241234567,inv-1\n1,0241234568,inv-2\n1,0241234569\n", catalogue, "b")
    const found = new Map([
      ["inv-1", { order_number: "ORD-1", bundle: "MTN 1GB", phone_number: "233241234567" }],
      ["inv-2", { order_number: "ORD-2", bundle: "MTN 1GB", phone_number: "0241110000" }],
      [rows[2]!.reference, { order_number: "ORD-3", bundle: "Telecel 2GB", phone_number: "0201234567" }]
    ])
    assert.deepStrictEqual(BulkFile.reusedReferences(rows, found), [{
      line: 2,
      message: "reference inv-2 was used before for ORD-2 (MTN 1GB for 0241110000): give this row another reference"
    }])
  })
})
