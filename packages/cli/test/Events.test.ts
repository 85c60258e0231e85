/**
 * The integrator's commands end to end against the whole server: `events list`, `events trigger`,
 * `wallet transactions`, `webhooks deliveries` and `resend` in-process, and `webhooks listen` as
 * the built binary, forwarding to a local receiver whose deliveries an independent verifier
 * (Python's hmac) accepts, and stopped with Ctrl-C.
 */
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import {
  envFor,
  expectCode,
  json,
  runCli,
  spawnCli,
  startServer,
  tempDir,
  type TestAccount,
  type TestServer
} from "./Harness.js"

const roomy = { all: 1000, orders: 1000, balance: 1000 }

interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A local receiver answering `status` and recording what it got. */
const receiver = (status: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<Received> = []
      const server = http.createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8")
        request.on("data", (chunk: string) => body += chunk)
        request.on("end", () => {
          received.push({ headers: request.headers, body })
          response.writeHead(status).end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server }
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

/**
 * Both signatures of a delivery checked by Python's standard library alone: the
 * `X-Webhook-Signature` HMAC keyed with the secret's text, and the Standard Webhooks one keyed
 * with the base64 after `whsec_`, over `id.timestamp.body`.
 */
const PYTHON_VERIFIER = `
import base64, hashlib, hmac, json, sys
d = json.load(sys.stdin)
h, body, secret = d["headers"], d["body"].encode(), d["secret"]
sig = dict(p.split("=", 1) for p in h["x-webhook-signature"].split(","))
t, v1 = sig["t"], sig["v1"]
ok1 = hmac.compare_digest(v1, hmac.new(secret.encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest())
key = base64.b64decode(secret[len("whsec_"):])
signed = h["webhook-id"].encode() + b"." + h["webhook-timestamp"].encode() + b"." + body
expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
ok2 = any(hmac.compare_digest("v1," + expected, s) for s in h["webhook-signature"].split(" "))
ok3 = h["webhook-timestamp"] == t and h["webhook-id"] == json.loads(body)["id"]
print("ok" if ok1 and ok2 and ok3 else "bad")
`

const verifyWithPython = (secret: string, delivery: Received): string =>
  execFileSync("python3", ["-c", PYTHON_VERIFIER], {
    input: JSON.stringify({ secret, headers: delivery.headers, body: delivery.body }),
    encoding: "utf8"
  }).trim()

const target = targets[0]!

describe(`events and webhooks commands on ${target.name}`, () => {
  let server: TestServer
  let account: TestAccount
  beforeAll(async () => {
    server = await startServer(target)
    account = await server.account({ funds: 5_000n, limits: roomy })
  })
  afterAll(() => server?.dispose())

  const env = (dir: string, key = account.key) => envFor(server.baseUrl, key, dir)

  it.scopedLive("events trigger, events list, wallet transactions, webhooks deliveries and resend", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const triggered = expectCode(yield* runCli(["events", "trigger", "order.failed"], env(dir)), 0)
      assert.match(triggered.stdout, /Sent a test order\.failed event, evt_\w+\./)
      assert.match(triggered.stdout, /no webhook URL/)
      const body = json(expectCode(yield* runCli(["events", "trigger", "wallet.funded", "--json"], env(dir)), 0))
      assert.strictEqual(body.event.test, true)
      assert.isNull(body.delivery)
      assert.strictEqual(expectCode(yield* runCli(["events", "trigger", "order.pending"], env(dir)), 2).code, 2)

      const listed = expectCode(yield* runCli(["events", "list"], env(dir)), 0)
      assert.match(listed.stdout, /TYPE/)
      assert.match(listed.stdout, /wallet\.funded .*main \+GHS 1\.00 adjustment.*\(test\)/)
      assert.match(listed.stdout, /order\.failed/)
      assert.match(listed.stdout, /Page 1 of 1 \(3 in all\)/)
      const page = json(expectCode(yield* runCli(["events", "list", "--json", "--type", "order.failed"], env(dir)), 0))
      assert.deepStrictEqual(page.events.map((e: any) => e.type), ["order.failed"])
      const after = json(expectCode(yield* runCli(["events", "list", "--json", "--since", page.cursor], env(dir)), 0))
      assert.deepStrictEqual(after.events.map((e: any) => e.type), ["wallet.funded"])

      const ledger = expectCode(yield* runCli(["wallet", "transactions"], env(dir)), 0)
      assert.match(ledger.stdout, /main\s+funding\s+\+GHS 50\.00\s+GHS 50\.00/)
      const entries = json(
        expectCode(yield* runCli(["wallet", "transactions", "--json", "--reason", "order"], env(dir)), 0)
      )
      assert.deepStrictEqual(entries.entries, [])
      assert.strictEqual(expectCode(yield* runCli(["wallet", "transactions", "--wallet", "gold"], env(dir)), 2).code, 2)

      assert.match(expectCode(yield* runCli(["webhooks", "deliveries"], env(dir)), 0).stdout, /No deliveries\./)
      const resend = expectCode(yield* runCli(["webhooks", "resend", body.event.id], env(dir)), 1)
      assert.match(resend.stderr, /no webhook URL/)
      const hook = yield* receiver(200)
      yield* Effect.promise(() => server.setWebhook(account.id, hook.url))
      expectCode(yield* runCli(["webhooks", "resend", body.event.id], env(dir)), 0)
      const deliveries = json(expectCode(yield* runCli(["webhooks", "deliveries", "--json"], env(dir)), 0))
      assert.deepStrictEqual(deliveries.deliveries.map((d: any) => d.id), [body.event.id])
    }))

  it.scopedLive("webhooks listen forwards each new event, signed, prints a line per event, and stops on Ctrl-C", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const me = yield* Effect.promise(() => server.account({ funds: 1_000n, limits: roomy }))
      const hook = yield* receiver(204)
      const child = spawnCli(
        ["webhooks", "listen", "--forward-to", hook.url, "--interval", "0.2"],
        env(dir, me.key),
        dir
      )
      yield* Effect.promise(() => child.waitForStderr(/Ready\./))
      // The funding before the listener started is not forwarded; what happens now is.
      const bundle = server.bundle("MTN 1GB")
      const placed = yield* Effect.promise(() =>
        fetch(`${server.baseUrl}/orders`, {
          method: "POST",
          headers: { "x-api-key": me.key, "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ bundle_id: bundle.id, phone_number: "0241234567" })
        }).then((r) => r.json() as Promise<any>)
      )
      const deadline = Date.now() + 20_000
      while (hook.received.length < 2 && Date.now() < deadline) yield* Effect.sleep("50 millis")
      child.process.kill("SIGINT")
      const code = yield* Effect.promise(() => child.exited)
      assert.strictEqual(code, 130, child.stderr())
      assert.deepStrictEqual(hook.received.map((r) => r.headers["x-webhook-event"]), [
        "wallet.debited",
        "order.successful"
      ], `${child.stdout()}\n${child.stderr()}\n${JSON.stringify(placed)}`)
      const forwarded = JSON.parse(hook.received[1]!.body)
      assert.strictEqual(forwarded.data.order_number, placed.order.order_number)
      assert.strictEqual(forwarded.data.amount_paid, placed.order.amount_paid)
      const secret = yield* Effect.promise(() =>
        fetch(`${server.baseUrl}/webhooks`, { headers: { "x-api-key": me.key, accept: "application/json" } }).then((
          r
        ) => r.json() as Promise<any>)
      )
      for (const delivery of hook.received) assert.strictEqual(verifyWithPython(secret.webhook.secret, delivery), "ok")
      const lines = child.stdout().trim().split("\n")
      assert.lengthOf(lines, 2, child.stdout())
      assert.match(lines[0]!, /wallet\.debited .* -> 204 \(\d+ ms\)$/)
      assert.match(lines[1]!, new RegExp(`order\\.successful .*${placed.order.order_number}.* -> 204 \\(\\d+ ms\\)$`))
    }))

  it.scopedLive("an independent verifier refuses a tampered body", () =>
    Effect.gen(function*() {
      const { webhookBody, webhookHeaders } = yield* Effect.promise(() => import("@databundle/client"))
      const secret = "whsec_" + "Ab12".repeat(10)
      const event = {
        id: "evt_abc",
        type: "wallet.funded",
        created_at: new Date(),
        livemode: true,
        data: {
          account_id: 1,
          wallet: "main",
          amount: 100n,
          balance: 100n,
          reason: "funding",
          order_number: null,
          note: null
        }
      } as any
      const body = webhookBody(event)
      const headers = yield* Effect.promise(() => webhookHeaders({ id: event.id, type: event.type, body, secret }))
      assert.strictEqual(verifyWithPython(secret, { headers, body }), "ok")
      assert.strictEqual(
        verifyWithPython(secret, { headers, body: body.replace("\"amount\":1,", "\"amount\":9,") }),
        "bad"
      )
      assert.strictEqual(verifyWithPython("whsec_" + "Zz99".repeat(10), { headers, body }), "bad")
    }))
})
