// The dashboard and the CLI derive the same reference for the same row of the same batch.
import * as BulkFile from "@databundle/cli/BulkFile"
import { describe, expect, it } from "vitest"
import { batchPrefix, deriveReference } from "../src/BatchReference.js"

describe("bulk references", () => {
  it("are the CLI's, byte for byte", async () => {
    for (
      const [batch, bundle, phone, occurrence] of [
        ["november", 3, "0241112222", 1],
        ["November orders (shop 2)", 17, "0541113333", 2],
        ["Ékwa ëëë", 1, "0201234567", 3],
        ["", 9, "0261234567", 1]
      ] as const
    ) {
      expect(await deriveReference(batch, bundle, phone, occurrence)).toBe(
        BulkFile.deriveReference(batch, bundle, phone, occurrence)
      )
      expect(batchPrefix(batch)).toBe(BulkFile.batchPrefix(batch))
    }
    expect(await deriveReference("a", 1, "0241112222", 1)).not.toBe(await deriveReference("a", 1, "0241112222", 2))
  })
})
