/**
 * The route table's rule for overlapping templates, checked when it is built: fixed segments win
 * wherever two templates differ, and two templates neither of which is more specific are refused.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Http from "../src/Http.js"
import * as Routes from "../src/Routes.js"

const segments = (path: string) => path.split("/").filter((s) => s.length > 0)

describe("route table", () => {
  it("the server's table builds, and its one overlapping pair resolves to the fixed segment", () => {
    const named = (method: string, path: string) => {
      const decision = Http.routes.decide(method, path)
      return decision._tag === "Endpoint" ? decision.endpoint.name : decision._tag
    }
    assert.strictEqual(named("GET", "/dashboard/v1/payments/methods"), "dashboardPayments.methods")
    assert.strictEqual(named("GET", "/dashboard/v1/payments/PAY-ABC"), "dashboardPayments.get")
    // The fixed segment wins for its method only: another method falls back to the parameter's endpoints.
    assert.strictEqual(named("POST", "/dashboard/v1/payments/methods"), "MethodNotAllowed")
  })

  it("tells apart, more specific and ambiguous templates", () => {
    const of = (a: string, b: string) => Routes.overlap(segments(a), segments(b))
    assert.strictEqual(of("/payments/methods", "/payments/:payment_number"), "first")
    assert.strictEqual(of("/payments/:payment_number", "/payments/methods"), "second")
    assert.strictEqual(of("/payments/:n/otp", "/payments/:n"), "apart")
    assert.strictEqual(of("/orders/:a", "/keys/:b"), "apart")
    assert.strictEqual(of("/a/:x", "/:y/b"), "ambiguous")
    assert.strictEqual(of("/a/:x", "/a/:y"), "ambiguous")
  })

  it("refuses a table with an ambiguous pair of one method, and allows it across methods", () => {
    const endpoint = (method: string, name: string, path: string) => ({ method, name, segments: segments(path) })
    assert.throws(
      () => Routes.assertUnambiguous([endpoint("GET", "a", "/a/:x"), endpoint("GET", "b", "/:y/b")]),
      /match the same paths/
    )
    assert.throws(() => Routes.assertUnambiguous([endpoint("GET", "a", "/a/:x"), endpoint("GET", "b", "/a/:y")]))
    Routes.assertUnambiguous([endpoint("GET", "a", "/a/:x"), endpoint("POST", "b", "/:y/b")])
    Routes.assertUnambiguous([endpoint("GET", "a", "/a/b"), endpoint("GET", "b", "/a/:y")])
  })
})
