import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { Amount, Cedis, formatCedis, formatGhs, parseCedis, PositiveCedis } from "../src/Money.js"

const decode = Schema.decodeUnknownEither(Cedis)
const encode = Schema.encodeSync(Cedis)

describe("Money", () => {
  it("decodes cedis numbers to exact pesewas", () => {
    const cases: Array<[number, bigint]> = [[0, 0n], [5.5, 550n], [10.5, 1050n], [0.1, 10n], [0.29, 29n], [
      1234.56,
      123456n
    ], [
      -5.25,
      -525n
    ]]
    for (const [cedis, pesewas] of cases) assert.deepStrictEqual(decode(cedis), Either.right(pesewas))
  })

  it("refuses more than two decimals, non-finite numbers and absurd amounts", () => {
    for (const bad of [1.234, 0.001, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 20_000_000_000_000]) {
      assert.isTrue(Either.isLeft(decode(bad)), String(bad))
    }
    assert.isTrue(Either.isLeft(decode("5.50")))
  })

  it("reads every amount an answer may carry exactly; a request's amounts stop at one billion cedis", () => {
    // A balance past a billion (a refund may take one there) reads back exactly, to the pesewa.
    assert.deepStrictEqual(decode(1_000_000_000.01), Either.right(100_000_000_001n))
    assert.deepStrictEqual(decode(9_999_999_999_999.99), Either.right(999_999_999_999_999n))
    assert.strictEqual(encode(999_999_999_999_999n), 9_999_999_999_999.99)
    const amount = Schema.decodeUnknownEither(Amount)
    assert.deepStrictEqual(amount(1_000_000_000), Either.right(100_000_000_000n))
    assert.deepStrictEqual(amount(-1_000_000_000), Either.right(-100_000_000_000n))
    for (const bad of [1_000_000_000.01, -1_000_000_000.01, 2_000_000_000]) {
      assert.isTrue(Either.isLeft(amount(bad)), String(bad))
      assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(PositiveCedis)(bad)), String(bad))
    }
  })

  it("encodes pesewas to the number with the same decimal text", () => {
    assert.strictEqual(encode(550n), 5.5)
    assert.strictEqual(encode(29n), 0.29)
    assert.strictEqual(encode(-525n), -5.25)
    assert.strictEqual(JSON.stringify({ a: encode(123456n) }), "{\"a\":1234.56}")
  })

  it("formats and parses text", () => {
    assert.strictEqual(formatCedis(1050n), "10.50")
    assert.strictEqual(formatCedis(-5n), "-0.05")
    assert.strictEqual(formatGhs(50_000n), "GHS 500.00")
    assert.deepStrictEqual(parseCedis("10.5"), Either.right(1050n))
    assert.deepStrictEqual(parseCedis(" 7 "), Either.right(700n))
    assert.isTrue(Either.isLeft(parseCedis("1e3")))
    assert.isTrue(Either.isLeft(parseCedis("10.505")))
  })

  it("PositiveCedis refuses zero and negatives", () => {
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(PositiveCedis)(0)))
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(PositiveCedis)(-1)))
    assert.deepStrictEqual(Schema.decodeUnknownEither(PositiveCedis)(0.01), Either.right(1n))
  })
})
