/**
 * The upstream's signed webhooks consumed, end to end: two real server processes chained,
 * the upstream delivering its account's events to the downstream's receiver.
 */
import { Webhook } from "@databundle/contract"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Processes from "./Processes.js"
import { account, admin, call, databaseEnv, databases, eventually, FAST, startUpstream } from "./UpstreamHarness.js"

/** A POST of `body` to the receiver, signed with `secret` (or with the header given). */
const deliver = (base: string, name: string, body: string, signature: string | undefined) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}/upstream-webhooks/${name}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(signature === undefined ? {} : { [Webhook.SIGNATURE_HEADER]: signature })
      },
      body
    })
    return { status: response.status, body: await response.json() as any }
  })

const signed = (secret: string, body: string) =>
  Effect.promise(() => Webhook.signatureHeader(secret, Math.floor(Date.now() / 1000), body))

for (const database of databases) {
  describe(`upstream webhooks on ${database.name}`, () => {
    it.scopedLive(
      "settle a pending order before the next poll; bad signatures are refused and replays do nothing",
      () =>
        Effect.gen(function*() {
          // Orders stay pending upstream for 8 s: long enough to show that refused deliveries settle nothing.
          const upstream = yield* startUpstream(database.url, 1000, {
            BUNDLES_WEBHOOK_ALLOW_PRIVATE: "1",
            BUNDLES_SIMULATOR_PENDING_SECONDS: "8"
          })
          // The buyer's signing secret, as its account reads it there.
          const secret = (yield* call(upstream.server.url, "GET", "/api/v1/webhooks", { key: upstream.buyer.key }))
            .body.webhook.secret as string
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            // Polling alone would look at a pending order again only after a minute.
            BUNDLES_UPSTREAM_POLL_SECONDS: "60",
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_NAME: "wholesale",
            BUNDLES_UPSTREAM_URL: `${upstream.server.url}/api/v1`,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key,
            BUNDLES_UPSTREAM_WEBHOOK_SECRET: secret
          })
          yield* admin(down.url, "POST", "/admin/v1/upstreams/catalog-sync", { markup: "10%" })
          yield* admin(upstream.server.url, "PATCH", `/admin/v1/accounts/${upstream.buyer.id}`, {
            webhook_url: `${down.url}/upstream-webhooks/wholesale`
          })
          const shop = yield* account(down.url, "Shop", 100)
          // The status is polled often below: room above the default 60 requests a minute.
          yield* admin(down.url, "PATCH", `/admin/v1/accounts/${shop.id}`, { limits: { all: 10_000 } })
          const bundles = (yield* call(down.url, "GET", "/api/v1/networks/1/bundles", { key: shop.key })).body.bundles
          const bundleId = bundles.find((b: any) => b.is_active).id
          const place = (phone: string) =>
            call(down.url, "POST", "/api/v1/orders", {
              key: shop.key,
              body: { bundle_id: bundleId, phone_number: phone }
            })

          // Pending upstream for 8 s; its order.successful webhook settles ours long before the 60 s poll.
          const started = Date.now()
          const pending = yield* place("0249999999")
          assert.strictEqual(pending.body.order.status, "pending")
          const number = pending.body.order.order_number as string
          const status = (n: string) =>
            Effect.map(call(down.url, "GET", `/api/v1/orders/${n}`, { key: shop.key }), (r) => r.body.order.status)
          yield* eventually("the webhook settles the order", 30, status(number), (s) => s === "successful")
          assert.isBelow(Date.now() - started, 40_000, "settled by the webhook, not by the next poll")
          assert.match(down.output(), new RegExp(`"event":"upstream.webhook".*"order_number":"${number}"`))

          // Another pending order; deliveries that are not the upstream's change nothing.
          const second = (yield* place("0249999999")).body.order.order_number as string
          const forged = JSON.stringify({
            id: "evt_forged1",
            type: "order.successful",
            created_at: new Date().toISOString(),
            data: { reference: second }
          })
          const unsigned = yield* deliver(down.url, "wholesale", forged, undefined)
          assert.strictEqual(unsigned.status, 401)
          assert.deepInclude(unsigned.body, { success: false, code: "unauthorized" })
          const wrong = yield* deliver(
            down.url,
            "wholesale",
            forged,
            yield* signed("whsec_bm90IHRoZSBzZWNyZXQ=", forged)
          )
          assert.strictEqual(wrong.status, 401)
          const stale = yield* deliver(
            down.url,
            "wholesale",
            forged,
            yield* Effect.promise(() => Webhook.signatureHeader(secret, Math.floor(Date.now() / 1000) - 3600, forged))
          )
          assert.strictEqual(stale.status, 401)
          const unknown = yield* deliver(down.url, "nobody", forged, yield* signed(secret, forged))
          assert.strictEqual(unknown.status, 404)
          assert.isFalse(unknown.body.success)
          assert.strictEqual(yield* status(second), "pending", "a refused delivery settles nothing")

          // A genuine event, then its replay: the replay is recognised and does nothing.
          const genuine = JSON.stringify({
            id: "evt_genuine1",
            type: "wallet.debited",
            created_at: new Date().toISOString(),
            data: { reference: null }
          })
          const signature = yield* signed(secret, genuine)
          const first = yield* deliver(down.url, "wholesale", genuine, signature)
          assert.strictEqual(first.status, 200, JSON.stringify(first.body))
          assert.deepStrictEqual(first.body, { success: true, message: "Event evt_genuine1 received" })
          const replay = yield* deliver(down.url, "wholesale", genuine, signature)
          assert.strictEqual(replay.status, 200)
          assert.deepStrictEqual(replay.body, { success: true, message: "Event evt_genuine1 was already received" })
          yield* eventually(
            "the second order settles by its own webhook",
            20,
            status(second),
            (s) => s === "successful"
          )
        }),
      { timeout: 180_000 }
    )
  })
}
