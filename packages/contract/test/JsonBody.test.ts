import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { parse } from "../src/JsonBody.js"

const problem = (text: string) =>
  Either.match(parse(text), {
    onLeft: (p) => p._tag === "Invalid" ? p : assert.fail(p.message),
    onRight: () => undefined
  })

describe("JsonBody", () => {
  it("refuses a member named twice in one object, however spelled, naming it", () => {
    assert.deepStrictEqual(problem("{\"amount\": 1, \"amount\": 1000}"), {
      _tag: "Invalid",
      field: "amount",
      message: "is given more than once"
    })
    assert.deepStrictEqual(problem("{\"a\": {\"b\": 1, \"\\u0062\": 2}}")?.field, "a.b")
    assert.deepStrictEqual(problem("[{\"x\": 1}, {\"y\": 1, \"y\": 2}]")?.field, "[1].y")
  })

  it("the same name in two objects, or beside empty ones, is no repetition", () => {
    for (
      const ok of [
        "{\"a\": {\"a\": 1}, \"b\": {\"a\": 2}}",
        "[{\"a\": {}}, \"glo\", {\"a\": []}]",
        "{\"a\": {}, \"b\": 1}"
      ]
    ) {
      assert.isUndefined(problem(ok), ok)
    }
  })
})
