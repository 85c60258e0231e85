import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { PlaceOrderPayload, Reference } from "../src/Order.js"
import { DateBound } from "../src/Page.js"
import { PhoneNumber } from "../src/Phone.js"

const valid = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(value))

describe("request validation", () => {
  it("accepts only the two Ghana phone forms", () => {
    for (const ok of ["0241234567", "233241234567", "0200000000"]) assert.isTrue(valid(PhoneNumber, ok), ok)
    for (const bad of ["+233241234567", "024123456", "02412345678", "2330241234567", "24123456a7", "", " 0241234567"]) {
      assert.isFalse(valid(PhoneNumber, bad), bad)
    }
  })

  it("references are 1 to 64 of A-Z a-z 0-9 _ . : -", () => {
    for (const ok of ["a", "INV-2026.11:001_x", "x".repeat(64)]) assert.isTrue(valid(Reference, ok), ok)
    for (const bad of ["", "x".repeat(65), "has space", "é", "a/b"]) assert.isFalse(valid(Reference, bad), bad)
  })

  it("date bounds are real days or timestamps with an offset", () => {
    for (const ok of ["2026-11-01", "2024-02-29", "2026-11-01T08:00:00Z", "2026-11-01T08:00:00.123+00:00"]) {
      assert.isTrue(valid(DateBound, ok), ok)
    }
    for (
      const bad of ["2026-13-01", "2026-02-30", "2025-02-29", "2026-11-01T08:00:00", "yesterday", "2026-11-01T25:00Z"]
    ) {
      assert.isFalse(valid(DateBound, bad), bad)
    }
  })

  it("reports every invalid field of an order at once", () => {
    const result = Schema.decodeUnknownEither(PlaceOrderPayload)({ bundle_id: "1", phone_number: "123" })
    assert.isTrue(Either.isLeft(result))
    const message = Either.isLeft(result) ? result.left.message : ""
    assert.include(message, "bundle_id")
    assert.include(message, "phone_number")
  })
})
