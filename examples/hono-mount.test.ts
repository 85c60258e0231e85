import { pglite } from "@databundle/core/testing"
import { WebHandler } from "@databundle/server"
import { afterAll, describe, expect, it } from "vitest"
import { makeApp } from "./hono-mount.js"

describe("the server mounted in Hono", () => {
  const bundles = WebHandler.make({ database: pglite })
  const app = makeApp(bundles)
  afterAll(() => bundles.dispose())

  it("serves the app's own page and the reseller API side by side", async () => {
    expect(await (await app.request("/")).text()).toContain("My data shop")
    const unauthorized = await app.request("/api/v1/balance")
    expect(unauthorized.status).toBe(401)
    expect(await unauthorized.json()).toMatchObject({ success: false, message: expect.any(String) })
    expect(unauthorized.headers.get("x-request-id")).toMatch(/^req_/)
    const spec = await app.request("/api/v1/openapi.json")
    expect(spec.status).toBe(200)
    expect(Object.keys((await spec.json()).paths)).toContain("/api/v1/orders")
  })
})
