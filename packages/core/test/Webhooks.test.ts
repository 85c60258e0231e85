import type { Bundle } from "@databundle/contract"
import { FetchHttpClient } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createHmac } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Accounts } from "../src/Accounts.js"
import { Orders } from "../src/Orders.js"
import { Wallet } from "../src/Wallet.js"
import { WebhookDelivery } from "../src/WebhookDelivery.js"
import { Webhooks } from "../src/Webhooks.js"
import { Domain, fundedAccount, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A local receiver that records deliveries and answers with the status `respond` gives. */
const receiver = (respond: () => number) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; received: Array<Received>; server: http.Server }>((resume) => {
      const received: Array<Received> = []
      const server = http.createServer((req, res) => {
        let body = ""
        req.on("data", (chunk) => body += chunk)
        req.on("end", () => {
          received.push({ headers: req.headers, body })
          res.writeHead(respond()).end()
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
          received,
          server
        })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )

const verify = (secret: string, { body, headers }: Received) => {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(headers["x-webhook-signature"]))
  // node:crypto as an oracle independent of the contract's Web Crypto signing.
  return match !== null && createHmac("sha256", secret).update(`${match[1]}.${body}`).digest("hex") === match[2]
}

const WithDelivery = Layer.mergeAll(Domain, WebhookDelivery.Default).pipe(Layer.provide(FetchHttpClient.layer))

for (const target of targets) {
  describe(`Webhooks on ${target.name}`, () => {
    layer(WithDelivery.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.scoped("order and wallet events are queued with the change and delivered signed", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const hook = yield* receiver(() => 200)
          const account = yield* fundedAccount(0n)
          yield* (yield* Accounts).update(account, { webhook_url: hook.url })
          const { secret } = yield* (yield* Webhooks).settings(account)
          assert.match(secret, /^whsec_/)
          yield* (yield* Wallet).fund(account, { amount: 2000n })
          const orders = yield* Orders
          const ok = yield* orders.place(account, { bundle_id: mtn1gb as Bundle.BundleId, phone_number: "0241234567" })
          yield* orders.place(account, { bundle_id: mtn1gb as Bundle.BundleId, phone_number: "0240000000" })
          const delivery = yield* WebhookDelivery
          yield* delivery.deliverDue
          const types = hook.received.map((r) => JSON.parse(r.body).type)
          assert.deepStrictEqual(types.sort(), [
            "order.failed",
            "order.successful",
            "wallet.debited",
            "wallet.debited",
            "wallet.funded",
            "wallet.funded"
          ])
          for (const r of hook.received) {
            assert.isTrue(verify(secret, r), "signature")
            const event = JSON.parse(r.body)
            assert.strictEqual(r.headers["x-webhook-id"], event.id)
            assert.strictEqual(r.headers["x-webhook-event"], event.type)
            assert.match(r.headers["content-type"] ?? "", /^application\/json/)
            // The Standard Webhooks headers, checked to their spec with node:crypto.
            assert.strictEqual(r.headers["webhook-id"], event.id)
            const t = /^t=(\d+),/.exec(String(r.headers["x-webhook-signature"]))![1]
            assert.strictEqual(r.headers["webhook-timestamp"], t)
            const key = Buffer.from(secret.slice("whsec_".length), "base64")
            const expected = createHmac("sha256", key).update(`${event.id}.${t}.${r.body}`).digest("base64")
            assert.strictEqual(r.headers["webhook-signature"], `v1,${expected}`)
          }
          const successful = JSON.parse(hook.received.find((r) => JSON.parse(r.body).type === "order.successful")!.body)
          assert.strictEqual(successful.data.order_number, ok.order.order_number)
          assert.strictEqual(successful.data.amount_paid, 5.5)
          const refund = hook.received.map((r) => JSON.parse(r.body)).find((e) =>
            e.type === "wallet.funded" && e.data.reason === "refund"
          )
          assert.deepStrictEqual([refund.data.amount, refund.data.balance], [5.5, 14.5])
          // Delivered events are not sent again.
          yield* delivery.deliverDue
          assert.strictEqual(hook.received.length, 6)
        }))

      it.scoped("a failed delivery is retried later with back-off, then delivered once", () =>
        Effect.gen(function*() {
          let status = 500
          const hook = yield* receiver(() => status)
          const account = yield* fundedAccount(0n)
          yield* (yield* Accounts).update(account, { webhook_url: hook.url })
          yield* (yield* Wallet).fund(account, { amount: 100n })
          const delivery = yield* WebhookDelivery
          yield* delivery.deliverDue
          assert.strictEqual(hook.received.length, 1)
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ attempts: number; due_in: number; last_error: string | null }>`
            SELECT attempts, EXTRACT(EPOCH FROM next_attempt_at - now())::int AS due_in, last_error
            FROM webhook_events WHERE account_id = ${account}
          `
          assert.strictEqual(row!.attempts, 1)
          assert.isAtLeast(row!.due_in, 5)
          assert.isNotNull(row!.last_error)
          // Not due yet: nothing is sent.
          yield* delivery.deliverDue
          assert.strictEqual(hook.received.length, 1)
          status = 204
          yield* sql`UPDATE webhook_events SET next_attempt_at = now() WHERE account_id = ${account}`
          yield* delivery.deliverDue
          assert.strictEqual(hook.received.length, 2)
          assert.strictEqual(hook.received[0]!.headers["x-webhook-id"], hook.received[1]!.headers["x-webhook-id"])
          const [done] = yield* sql<{ delivered: boolean }>`
            SELECT delivered_at IS NOT NULL AS delivered FROM webhook_events WHERE account_id = ${account}
          `
          assert.isTrue(done!.delivered)
        }))

      it.scoped("concurrent delivery runs never deliver one event twice", () =>
        Effect.gen(function*() {
          const hook = yield* receiver(() => 200)
          const account = yield* fundedAccount(0n)
          yield* (yield* Accounts).update(account, { webhook_url: hook.url })
          const wallet = yield* Wallet
          for (let i = 0; i < 12; i++) yield* wallet.fund(account, { amount: 1n })
          const delivery = yield* WebhookDelivery
          yield* Effect.all([delivery.deliverDue, delivery.deliverDue, delivery.deliverDue], {
            concurrency: "unbounded"
          })
          const ids = hook.received.map((r) => r.headers["x-webhook-id"])
          assert.strictEqual(ids.length, 12)
          assert.strictEqual(new Set(ids).size, 12)
        }))

      it.effect("accounts without a webhook URL keep their events in the feed and queue no delivery", () =>
        Effect.gen(function*() {
          const account = yield* fundedAccount(100n)
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ type: string; queued: boolean; due: boolean }>`
            SELECT type, queued_at IS NOT NULL AS queued, next_attempt_at IS NOT NULL AS due
            FROM webhook_events WHERE account_id = ${account}
          `
          assert.deepStrictEqual(rows.map((r) => [r.type, r.queued, r.due]), [["wallet.funded", false, false]])
          assert.strictEqual(yield* (yield* WebhookDelivery).deliverDue, 0)
        }))
    })
  })
}
