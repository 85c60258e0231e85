/**
 * The webhook verifier: signatures made independently with node:crypto verify with the
 * client's (Web Crypto), every way a delivery can be wrong is refused, and events decode into
 * the contract's typed union. Last, a real delivery: the server signs and posts an event to a
 * receiver here.
 */
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { createHmac } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import {
  parseCedis,
  signWebhook,
  verifyWebhook,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookSignatureError
} from "../src/index.js"
import { rejection } from "./Rejection.js"
import { startServer, type TestServer } from "./Server.js"

const secret = "whsec_test_0123456789abcdef"
const body = JSON.stringify({
  id: "evt_1",
  type: "order.successful",
  created_at: "2026-01-01T00:00:00.000Z",
  data: {
    order_number: "ORD-ABCDEFGHIJKL",
    bundle: "1GB",
    network: "MTN",
    phone_number: "0241234567",
    amount_paid: 5.5,
    status: "successful",
    reference: null,
    created_at: "2026-01-01T00:00:00.000Z"
  }
})

/** The oracle: the signature as decisions.md defines it, computed with node:crypto. */
const CoreWebhooks = {
  sign: (key: string, t: number, text: string) => createHmac("sha256", key).update(`${t}.${text}`).digest("hex"),
  signatureHeader: (key: string, t: number, text: string) =>
    `t=${t},v1=${createHmac("sha256", key).update(`${t}.${text}`).digest("hex")}`
}
const now = 1_767_225_600 // 2026-01-01T00:00:00Z
const at = (seconds: number) => seconds * 1000

const refusal = async (options: Parameters<typeof verifyWebhook>[0]) => {
  const error = await rejection(verifyWebhook(options))
  assert.instanceOf(error, WebhookSignatureError)
  return (error as WebhookSignatureError).reason
}

describe("verifyWebhook", () => {
  it("accepts a signature made to the documented recipe and returns the event, typed", async () => {
    const signature = CoreWebhooks.signatureHeader(secret, now, body)
    const event = await verifyWebhook({ body, signature, secret, now: at(now) })
    assert.strictEqual(event.type, "order.successful")
    if (event.type !== "order.successful") return
    assert.strictEqual(event.data.amount_paid, 550n)
    assert.strictEqual(event.data.order_number, "ORD-ABCDEFGHIJKL")
    assert.strictEqual(event.created_at.toISOString(), "2026-01-01T00:00:00.000Z")
    // As bytes, as an ArrayBuffer, and within the tolerance either way.
    const bytes = new TextEncoder().encode(body)
    await verifyWebhook({ body: bytes, signature, secret, now: at(now + 300) })
    await verifyWebhook({ body: bytes.buffer, signature, secret, now: new Date(at(now - 300)) })
  })

  it("signs exactly as the server does", async () => {
    assert.strictEqual(
      await signWebhook({ body, secret, timestamp: now }),
      CoreWebhooks.signatureHeader(secret, now, body)
    )
    const unicode = JSON.stringify({ id: "evt_2", type: "wallet.funded", data: { note: "Akwaaba ₵ 🇬🇭" } })
    assert.strictEqual(
      await signWebhook({ body: unicode, secret, timestamp: now }),
      CoreWebhooks.signatureHeader(secret, now, unicode)
    )
  })

  it("refuses an altered body, a wrong secret, an old or future timestamp, a missing or malformed header", async () => {
    const signature = CoreWebhooks.signatureHeader(secret, now, body)
    assert.strictEqual(await refusal({ body: body.replace("5.5", "55"), signature, secret, now: at(now) }), "mismatch")
    assert.strictEqual(await refusal({ body: `${body} `, signature, secret, now: at(now) }), "mismatch")
    assert.strictEqual(await refusal({ body, signature, secret: `${secret}x`, now: at(now) }), "mismatch")
    // The timestamp is signed too: moving it breaks the signature.
    const moved = signature.replace(`t=${now}`, `t=${now + 1}`)
    assert.strictEqual(await refusal({ body, signature: moved, secret, now: at(now) }), "mismatch")
    assert.strictEqual(await refusal({ body, signature, secret, now: at(now + 301) }), "expired")
    assert.strictEqual(await refusal({ body, signature, secret, now: at(now - 301) }), "expired")
    assert.strictEqual(await refusal({ body, signature, secret, now: at(now + 60), toleranceSeconds: 30 }), "expired")
    assert.strictEqual(await refusal({ body, signature: undefined, secret }), "missing")
    assert.strictEqual(await refusal({ body, signature: null, secret }), "missing")
    assert.strictEqual(await refusal({ body, signature: "", secret }), "missing")
    const v1 = signature.split("v1=")[1]!
    for (
      const malformed of [
        "garbage",
        `v1=${v1}`,
        `t=${now}`,
        `t=abc,v1=${v1}`,
        `t=${now},v1=${v1.slice(2)}`,
        `t=${now},v1=${v1.replace(/^../, "zz")}`,
        `t=${now},t=${now},v1=${v1}`,
        `t=${now};v1=${v1}`
      ]
    ) {
      assert.strictEqual(await refusal({ body, signature: malformed, secret, now: at(now) }), "malformed", malformed)
    }
  })

  it("accepts any matching v1 among several (a secret rotation), and refuses a signed body that is no event", async () => {
    const good = CoreWebhooks.sign(secret, now, body)
    const other = CoreWebhooks.sign("old-secret", now, body)
    await verifyWebhook({ body, signature: `t=${now},v1=${other},v1=${good}`, secret, now: at(now) })
    const text = "not json"
    const signed = CoreWebhooks.signatureHeader(secret, now, text)
    assert.strictEqual(await refusal({ body: text, signature: signed, secret, now: at(now) }), "body")
    // Signed JSON that is no event of the contract: an unknown type, a missing field.
    for (
      const json of [
        JSON.stringify({ ...JSON.parse(body), type: "order.refunded" }),
        JSON.stringify({ ...JSON.parse(body), data: { order_number: "ORD-ABCDEFGHIJKL" } }),
        JSON.stringify({ id: "evt_3", type: "wallet.funded", created_at: "2026-01-01T00:00:00Z", data: {} })
      ]
    ) {
      const header = CoreWebhooks.signatureHeader(secret, now, json)
      assert.strictEqual(await refusal({ body: json, signature: header, secret, now: at(now) }), "body", json)
    }
  })
})

/** A receiver recording each delivery's raw body and headers. */
const startReceiver = async () => {
  const deliveries: Array<{ body: string; headers: http.IncomingHttpHeaders }> = []
  const server = http.createServer(async (request, response) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    deliveries.push({ body: Buffer.concat(chunks).toString("utf8"), headers: request.headers })
    response.writeHead(204).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

for (const target of targets) {
  describe(`a real delivery on ${target.name}`, () => {
    let server: TestServer
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    beforeAll(async () => {
      server = await startServer(target)
      receiver = await startReceiver()
    })
    afterAll(async () => {
      await receiver?.close()
      await server?.dispose()
    })

    it("verifies the server's signed wallet.funded event with the account's secret, and only with it", async () => {
      const { id, key } = await server.account()
      await server.setWebhook(id, receiver.url)
      // The secret is its account's to read (the operator sees only its start).
      const settings = await fetch(`${server.baseUrl}/webhooks`, { headers: { "x-api-key": key } })
      const accountSecret: string = ((await settings.json()) as { webhook: { secret: string } }).webhook.secret
      await server.fund(id, 1_050n)
      // Deliveries run on the server's worker, every 0.2 s here; give a loaded machine time.
      for (let i = 0; i < 300 && receiver.deliveries.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      assert.lengthOf(receiver.deliveries, 1)
      const [delivery] = receiver.deliveries
      const signature = delivery!.headers[WEBHOOK_SIGNATURE_HEADER] as string
      const event = await verifyWebhook({ body: delivery!.body, signature, secret: accountSecret })
      assert.strictEqual(event.type, "wallet.funded")
      assert.strictEqual(delivery!.headers[WEBHOOK_EVENT_HEADER], "wallet.funded")
      assert.strictEqual(delivery!.headers[WEBHOOK_ID_HEADER], event.id)
      if (event.type !== "wallet.funded") return
      assert.strictEqual(event.data.amount, 1_050n)
      assert.strictEqual(event.data.account_id, id)
      // On the wire, amounts are cedis.
      assert.strictEqual(parseCedis(JSON.parse(delivery!.body).data.amount), 1_050n)
      assert.strictEqual(
        await rejection(verifyWebhook({ body: delivery!.body, signature, secret: "whsec_wrong" })).then((e) =>
          (e as WebhookSignatureError).reason
        ),
        "mismatch"
      )
    })
  })
}
