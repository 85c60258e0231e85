/**
 * Ghana phone numbers: the ways people write them, the forms the API takes (checked against
 * the contract's own rule), and the versioned prefix table.
 */
import { Phone } from "@databundle/contract"
import { assert, describe, it } from "@effect/vitest"
import { normalizePhone, parsePhone, PHONE_PREFIXES, PhoneNumberError, phoneOperator } from "../src/index.js"
import { prefixNotice, prefixWarning } from "../src/Phone.js"

const written: ReadonlyArray<readonly [string, string]> = [
  ["+233 24 123 4567", "0241234567"],
  ["+233241234567", "0241234567"],
  ["233241234567", "0241234567"],
  ["00233 24 123 4567", "0241234567"],
  ["+233 (0) 24 123 4567", "0241234567"],
  ["024-123-4567", "0241234567"],
  ["(024) 123 4567", "0241234567"],
  ["024.123.4567", "0241234567"],
  [" 0241234567 ", "0241234567"],
  ["241234567", "0241234567"],
  ["055 987 6543", "0559876543"],
  ["020/123/4567", "0201234567"],
  ["+233 57 000 1111", "0570001111"]
]

const notMobile = [
  "",
  "0241234",
  "02412345678",
  "+44 20 7946 0958",
  "+0241234567",
  "0302123456", // a fixed line
  "0141234567",
  "024 123 456a",
  "two four one",
  "+233 24 123 45678",
  "1234567890"
]

describe("normalizePhone", () => {
  it("turns every common way of writing a number into a form the API accepts", () => {
    for (const [input, local] of written) {
      assert.strictEqual(normalizePhone(input), local, input)
      assert.strictEqual(normalizePhone(input, "international"), `233${local.slice(1)}`, input)
      assert.match(normalizePhone(input), Phone.GHANA_PHONE, input)
      assert.match(normalizePhone(input, "international"), Phone.GHANA_PHONE, input)
    }
  })

  it("refuses what is not a Ghana mobile number", () => {
    for (const input of notMobile) {
      assert.isUndefined(parsePhone(input), input)
      assert.throws(() => normalizePhone(input), PhoneNumberError, undefined, input)
    }
  })

  it("gives every form of a number", () => {
    assert.deepStrictEqual(parsePhone("+233 24 123 4567"), {
      national: "241234567",
      local: "0241234567",
      international: "233241234567",
      e164: "+233241234567",
      prefix: "024",
      operator: { id: "mtn", name: "MTN" }
    })
  })
})

describe("the prefix table", () => {
  it("is versioned and dated", () => {
    assert.isAtLeast(PHONE_PREFIXES.version, 1)
    assert.match(PHONE_PREFIXES.updated, /^\d{4}-\d{2}-\d{2}$/)
    assert.isAbove(PHONE_PREFIXES.source.length, 0)
  })

  it("names the operator of each allocated prefix", () => {
    const expected: Record<string, string | undefined> = {
      "024": "mtn",
      "025": "mtn",
      "053": "mtn",
      "054": "mtn",
      "055": "mtn",
      "059": "mtn",
      "020": "telecel",
      "050": "telecel",
      "026": "airteltigo",
      "027": "airteltigo",
      "056": "airteltigo",
      "057": "airteltigo",
      "023": "glo",
      "021": undefined,
      "058": undefined
    }
    for (const [prefix, operator] of Object.entries(expected)) {
      assert.strictEqual(phoneOperator(`${prefix}1234567`)?.id, operator, prefix)
    }
    assert.strictEqual(phoneOperator("+233 20 123 4567")?.name, "Telecel")
    assert.isUndefined(phoneOperator("not a number"))
  })

  it("gives each prefix to one operator, in the 0XX form", () => {
    const all = Object.values(PHONE_PREFIXES.operators).flatMap((o) => [...o.prefixes])
    assert.strictEqual(new Set(all).size, all.length)
    for (const prefix of all) assert.match(prefix, /^0[25]\d$/)
  })

  it("warns before buying as the server warns after: another operator's prefix, or nobody's", () => {
    const mtn = { name: "MTN", slug: "mtn" }
    const ishare = { name: "AirtelTigo iShare", slug: "airteltigo-ishare" }
    const other = { name: "Special", slug: "special" }
    assert.isUndefined(prefixNotice(parsePhone("0241234567")!, mtn, "MTN 1GB"))
    assert.isUndefined(prefixNotice(parsePhone("0571234567")!, ishare, "iShare 1GB"))
    assert.include(prefixNotice(parsePhone("0201234567")!, mtn, "MTN 1GB"), "belongs to Telecel")
    assert.include(prefixNotice(parsePhone("0281234567")!, mtn, "MTN 1GB"), "belongs to no Ghana mobile network")
    // A network whose operator the slug does not tell: only an unknown prefix is worth a word.
    assert.isUndefined(prefixNotice(parsePhone("0201234567")!, other, "Special 1GB"))
    assert.include(prefixNotice(parsePhone("0581234567")!, other, "Special 1GB"), "(058)")
    // The server's wording of the same rule, from the one table.
    assert.strictEqual(prefixWarning("201234567", mtn)?.code, "network_mismatch")
    assert.strictEqual(prefixWarning("281234567", mtn)?.code, "unknown_prefix")
    assert.strictEqual(prefixWarning("301234567", other)?.code, "unknown_prefix")
    assert.isUndefined(prefixWarning("561234567", ishare))
  })
})
