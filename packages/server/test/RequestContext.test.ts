import { assert, describe, it } from "@effect/vitest"
import * as RequestContext from "../src/RequestContext.js"

describe("request ids", () => {
  it("are req_ and 16 hex characters, distinct across several pools of random bytes", () => {
    const ids = Array.from({ length: 2000 }, () => RequestContext.newId())
    for (const id of ids) assert.match(id, /^req_[0-9a-f]{16}$/)
    assert.strictEqual(new Set(ids).size, ids.length)
  })
})
