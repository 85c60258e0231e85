/**
 * Values: good ones to build on, bad ones that no schema of the contract accepts.
 */
import { Account, Phone, Wallet } from "@databundle/contract"
import { Arbitrary, Either, FastCheck, Schema } from "effect"
import fc from "fast-check"
import { isObject } from "./Check.js"

/** A JSON value written as it stands (numbers JSON.stringify cannot write: 1e400, -0). */
export class RawJson {
  constructor(readonly text: string) {}
  [fc.toStringMethod]() {
    return this.text
  }
}

/** JSON text of a value that may hold `RawJson`. */
export const toJson = (value: unknown): string => {
  if (value instanceof RawJson) return value.text
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`
  if (isObject(value)) {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

export const rejects = <A, I>(schema: Schema.Schema<A, I>) => (value: unknown) =>
  Either.isLeft(Schema.decodeUnknownEither(schema)(value))

/** Inputs that have broken servers before. */
export const TRICKY = [
  " ",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-0",
  "0x10",
  "1e400",
  "1_000",
  "١٢٣",
  "１２３",
  "' OR '1'='1",
  "'; DROP TABLE ledger_entries; --",
  "\\",
  "\"",
  "${7*7}",
  "{{7*7}}",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "\u0000",
  "\uFEFF",
  "\u202E",
  "🙂",
  "ÿ",
  "\r\n",
  "$1",
  "%s%n"
]

export const junk: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 200, maxLength: 3000 }) }
)

/** JSON values of the wrong type for a field of type `kind`. */
export const wrongType = (kind: "string" | "number" | "boolean" | "object") =>
  fc.constantFrom<unknown>(
    ...[
      kind === "string" ? [] : ["", "1", "true", "x"],
      kind === "number" ? [] : [0, 1, -1, 1.5],
      kind === "boolean" ? [] : [true, false],
      kind === "object" ? [] : [{}, { a: 1 }],
      [null, [], [1], ["x"]]
    ].flat()
  )

/** Strings that `valid` refuses, from junk and from `near` misses. */
export const badString = (valid: (s: string) => boolean, near: fc.Arbitrary<string> = fc.constant("")) =>
  fc.oneof(junk, near).filter((s) => !valid(s))

export const ENUM_MISSES = (values: ReadonlyArray<string>) =>
  fc.oneof(
    fc.constantFrom(...values.flatMap((v) => [v.toUpperCase(), ` ${v}`, `${v} `, `${v}s`, v.slice(1)]), "", "all", "*"),
    junk
  ).filter((s) => !values.includes(s))

export const badEnum = (values: ReadonlyArray<string>) => fc.oneof(ENUM_MISSES(values), wrongType("string"))

export const isPhone = (s: string) => Phone.GHANA_PHONE.test(s)
export const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max })
export const badPhoneText = badString(
  isPhone,
  fc.oneof(
    digits(0, 15),
    digits(9, 9).map((d) => `+233${d}`),
    digits(9, 9).map((d) => `0${d.slice(0, 2)} ${d.slice(2)}`),
    digits(9, 9).map((d) => `00233${d}`),
    digits(9, 9).map((d) => `0${d}\n`),
    digits(9, 9).map((d) => `0${d}`.replace(/\d/g, (c) => String.fromCharCode(0xff10 + Number(c))))
  )
)
export const goodPhone = fc.oneof(fc.stringMatching(/^0\d{9}$/), fc.stringMatching(/^233\d{9}$/))

export const REFERENCE = /^[A-Za-z0-9_.:-]{1,64}$/
export const goodReference = fc.stringMatching(/^fuzz-[A-Za-z0-9_.:-]{1,40}$/)
export const badReferenceText = badString(
  (s) => REFERENCE.test(s),
  fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.:-]{65,100}$/), fc.stringMatching(/^[A-Za-z0-9]{1,10}[ /#?&é+,][a-z]{0,5}$/))
)

export const existsAmong = (existing: ReadonlySet<number>) => (raw: string) => {
  const n = Number(raw)
  return raw.trim().length === 0 || existing.has(n)
}

/** True for an id the contract's identifiers accept (1 to 2^31 - 1). */
export const inIdRange = (id: string | number) => {
  const n = Number(id)
  return Number.isInteger(n) && n >= 1 && n <= 2_147_483_647
}

/** An id that is not a positive integer at all, or one too large for the database. */
export const badIdText = fc.oneof(
  { weight: 3, arbitrary: junk },
  {
    weight: 2,
    arbitrary: fc.constantFrom("0", "-1", "-0", "1.5", "0.999", "1e21", "1e308", "-2147483649", "NaN", "Infinity")
  },
  // Integers past the database's 32-bit ids.
  { weight: 2, arbitrary: fc.constantFrom("2147483648", "4294967296", "99999999999", "9007199254740991") },
  { weight: 1, arbitrary: fc.integer({ min: -2_147_483_648, max: 0 }).map(String) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }).filter((x) => !Number.isInteger(x)).map(String) },
  { weight: 2, arbitrary: fc.bigInt({ min: 2n ** 31n, max: 10n ** 25n }).map(String) },
  { weight: 1, arbitrary: digits(101, 2000) }
)

/** Query-parameter text that is not an integer from `min` to `max`. */
export const badIntText = (min: number, max: number) =>
  fc.oneof(
    badIdText,
    fc.integer({ min: max + 1, max: max + 1_000_000 }).map(String),
    fc.constantFrom(String(min - 1), String(max + 1), `${min}.5`, `${max}.0001`, "")
  ).filter((s) => {
    const n = Number(s)
    return !(Number.isInteger(n) && n >= min && n <= max)
  })

export const badName = fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 400 }), wrongType("string"))
  .filter(rejects(Account.CreateAccountPayload.fields.name))

export const PRICE_GROUP = /^[a-z0-9][a-z0-9_-]{0,31}$/
export const badPriceGroupText = (known: ReadonlyArray<string>) =>
  fc.oneof(
    badString((s) => PRICE_GROUP.test(s), fc.constantFrom("Retail", "-agent", "a b", "a".repeat(33))),
    // Well formed but unknown.
    fc.stringMatching(/^zz[a-z0-9_-]{1,20}$/)
  ).filter((s) => !known.includes(s))

export const badNote = fc.oneof(
  fc.string({ minLength: 501, maxLength: 1500 }),
  wrongType("string").filter((v) => v !== null)
)

/** JSON values that `valid` refuses as an amount of cedis: wrong types, too many decimals, out of range. */
export const badCedis = (valid: (value: unknown) => boolean) =>
  fc.oneof(
    wrongType("number"),
    fc.constantFrom<unknown>(
      1.234,
      0.001,
      10.005,
      0.1 + 0.2,
      1e12,
      -1e12,
      1e21,
      1e-7,
      new RawJson("1e400"),
      new RawJson("-1e400"),
      new RawJson("1.0e-400")
    ),
    fc.double({ noNaN: true, noDefaultInfinity: true })
  ).filter((v) => v instanceof RawJson || !valid(v))

export const fundAmountOk = (v: unknown) => !rejects(Wallet.FundWalletPayload.fields.amount)(v)
export const adjustAmountOk = (v: unknown) => !rejects(Wallet.AdjustWalletPayload.fields.amount)(v)
export const badPositiveCedis = fc.oneof(badCedis(fundAmountOk), fc.constantFrom<unknown>(0, -0.01, -1, -1e6))
export const badNonZeroCedis = fc.oneof(badCedis(adjustAmountOk), fc.constant<unknown>(0))

/** Valid payloads drawn from the contract's own schemas (Effect Schema's Arbitrary), as the base to break. */
export const samplesOf = <A, I>(schema: Schema.Schema<A, I>): ReadonlyArray<I> =>
  FastCheck.sample(Arbitrary.make(schema), { numRuns: 40, seed: 20_261_121 }).map((a) => Schema.encodeSync(schema)(a))

export const createBases = samplesOf(Account.CreateAccountPayload) as ReadonlyArray<Record<string, unknown>>
export const fundBases = samplesOf(Wallet.FundWalletPayload) as ReadonlyArray<Record<string, unknown>>
export const adjustBases = samplesOf(Wallet.AdjustWalletPayload) as ReadonlyArray<Record<string, unknown>>
export const resolveBases = samplesOf(
  Schema.Struct({ status: Schema.Literal("successful", "failed") })
) as ReadonlyArray<
  Record<string, unknown>
>
