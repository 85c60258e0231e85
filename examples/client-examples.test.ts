/**
 * The client examples, run against a demo-like server: the server's web handler on a real
 * port of 127.0.0.1 with an in-memory database, the demo catalogue, and a funded account made
 * through the admin API. The scripts run twice over: imported (their `main`), and as a user
 * runs them, with tsx and environment variables. The receiver gets real signed deliveries.
 */
import { createClient, parseCedis, type WebhookEvent } from "@databundle/client"
import { pglite } from "@databundle/core/testing"
import { WebHandler } from "@databundle/server"
import { serve } from "@hono/node-server"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { main as buy } from "./client-buy.js"
import { main as effectMain } from "./client-effect.js"
import { makeReceiver } from "./client-webhook-receiver.js"

const ADMIN_TOKEN = "adm_examples_token_for_the_client_examples"
const here = new URL(".", import.meta.url)

/** Runs an example as a user would: `tsx FILE ARGS` with the environment given (the conditions of its script). */
const run = (file: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(new URL("node_modules/.bin/tsx", here).pathname, [
      "--conditions=@databundle/source",
      file,
      ...args
    ], {
      cwd: here.pathname,
      env: { ...process.env, ...env }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

// Spawning tsx and waiting for deliveries can be slow on a loaded machine: these tests get a minute.
describe("the client examples against a demo server", () => {
  let bundles: ReturnType<typeof WebHandler.make>
  let server: ReturnType<typeof serve>
  let origin: string
  let baseUrl: string
  let account: { id: number; key: string }

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${origin}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        "content-type": "application/json",
        accept: "application/json"
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const json = await response.json()
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
    return json
  }

  beforeAll(async () => {
    // The handler reads its settings from the environment, as the server binary does.
    process.env.BUNDLES_ADMIN_TOKEN = ADMIN_TOKEN
    process.env.BUNDLES_POLL_SECONDS = "0.2"
    // The example's receiver listens on this machine: allow private webhook targets explicitly.
    process.env.BUNDLES_WEBHOOK_ALLOW_PRIVATE = "1"
    bundles = WebHandler.make({ database: pglite })
    server = serve({ fetch: (request) => bundles.handler(request), port: 0, hostname: "127.0.0.1" })
    await new Promise((resolve) => server.once("listening", resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    baseUrl = `${origin}/api/v1`
    // What `serve --demo` sets up: the demo catalogue and a funded account with a key.
    await admin("POST", "/catalog", JSON.parse(fs.readFileSync(new URL("catalog.json", here), "utf8")))
    const created = await admin("POST", "/accounts", { name: "Demo Reseller", price_group: "retail" })
    await admin("POST", `/accounts/${created.id}/wallet/fund`, { amount: 500 })
    await admin("PATCH", `/accounts/${created.id}`, { limits: { all: 1000, orders: 1000 } })
    account = { id: created.id, key: (await admin("POST", `/accounts/${created.id}/keys`)).api_key }
  })

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve))
    await bundles?.dispose()
  })

  it("client-buy: buys the cheapest bundle of the number's network with the Promise face", async () => {
    const lines: Array<string> = []
    const order = await buy({ apiKey: account.key, baseUrl, phone: "+233 24 123 4567", log: (l) => lines.push(l) })
    expect(order).toMatchObject({ network: "MTN", phoneNumber: "0241234567", status: "successful" })
    expect(lines.join("\n")).toContain("Bought")

    // By hand, twice with one reference: the second run is a replay and pays nothing.
    const env = { BUNDLES_API_KEY: account.key, BUNDLES_BASE_URL: baseUrl }
    const before = (await admin("GET", `/accounts/${account.id}`)).balance.main
    const first = await run("client-buy.ts", ["020-123-4567", "--reference", "example-1"], env)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain("Bought: ORD-")
    const second = await run("client-buy.ts", ["020-123-4567", "--reference", "example-1"], env)
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toContain("Already bought earlier")
    const after = (await admin("GET", `/accounts/${account.id}`)).balance.main
    expect(JSON.parse(first.stdout.trim().split("\n").pop()!)).toMatchObject({ network: "Telecel" })
    // One Telecel bundle paid for, not two: the cheapest active one.
    const paid = parseCedis(before) - parseCedis(after)
    const client = createClient({ apiKey: account.key, baseUrl })
    const telecel = (await client.networks()).find((n) => n.name === "Telecel")!
    const prices = (await client.bundles(telecel.id)).filter((b) => b.isActive).map((b) => b.price)
    expect(paid).toBe(prices.reduce((min, price) => price < min ? price : min))

    const usage = await run("client-buy.ts", [], {})
    expect(usage.code).toBe(2)
  }, 60_000)

  it("client-effect: the Effect program buys, follows the order and lists the last ones", async () => {
    const summary = await Effect.runPromise(effectMain({ apiKey: account.key, baseUrl, phone: "0551234567" }))
    expect(summary.orderNumber).toMatch(/^ORD-/)
    expect(summary.status).toBe("successful")
    expect(summary.recent[0]).toContain(summary.orderNumber!)

    const byHand = await run("client-effect.ts", ["0571234567"], {
      BUNDLES_API_KEY: account.key,
      BUNDLES_BASE_URL: baseUrl
    })
    expect(byHand.code, byHand.stderr).toBe(0)
    expect(byHand.stdout).toContain("Bought AirtelTigo")
  }, 60_000)

  it("client-webhook-receiver: acts on the server's signed events once, refuses forged ones", async () => {
    const events: Array<WebhookEvent> = []
    const refused: Array<string> = []
    // The signing secret is the account's to read, with its own key.
    const client = createClient({ apiKey: account.key, baseUrl })
    const { secret } = await client.webhooks.settings()
    const receiver = makeReceiver({ secret, onEvent: (e) => void events.push(e), onRefused: (r) => refused.push(r) })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`
    try {
      await admin("PATCH", `/accounts/${account.id}`, { webhook_url: url })
      await buy({ apiKey: account.key, baseUrl, phone: "0241234567", log: () => {} })
      // Deliveries run on the server's worker, every 0.2 s here; give a loaded machine time. An
      // order's two events are delivered side by side, so either may arrive first: wait for both.
      const arrived = (type: string) => events.some((e) => e.type === type)
      for (let i = 0; i < 300 && !(arrived("wallet.debited") && arrived("order.successful")); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["wallet.debited", "order.successful"]))

      const forged = await fetch(url, {
        method: "POST",
        headers: { "x-webhook-signature": `t=${Math.floor(Date.now() / 1000)},v1=${"0".repeat(64)}` },
        body: JSON.stringify({ id: "evt_forged", type: "wallet.funded", created_at: "", data: {} })
      })
      expect(forged.status).toBe(400)
      expect(refused).toEqual(["mismatch"])
      expect(events.some((e) => e.id === "evt_forged")).toBe(false)
    } finally {
      await admin("PATCH", `/accounts/${account.id}`, { webhook_url: null })
      await new Promise((resolve) => receiver.close(resolve))
    }
  }, 60_000)
})
