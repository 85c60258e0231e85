/**
 * The integrator's extensions end to end over real HTTP: the event feed and its cursor, test
 * events, webhook deliveries and their resending, the webhook settings, the account's own
 * ledger, and the OpenAPI mark of every endpoint beyond the specification.
 */
import { Event, Extension, Webhook } from "@databundle/contract"
import { Webhooks } from "@databundle/core"
import { targets } from "@databundle/core/testing"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ADMIN_TOKEN, adminClient, newAccount, raw, resellerClient, seedCatalog, serverLayer } from "./Harness.js"

interface Delivered {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A receiver on 127.0.0.1 answering each delivery with the next status of `statuses` (the last one repeats). */
const receiver = (statuses: ReadonlyArray<number>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<Delivered> = []
      const server = http.createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8")
        request.on("data", (chunk: string) => body += chunk)
        request.on("end", () => {
          received.push({ headers: request.headers, body })
          response.writeHead(statuses[Math.min(received.length - 1, statuses.length - 1)]!).end()
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

const until = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, ms = 20_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    while (!(yield* check)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep("25 millis")
    }
  })

/** A funded account with its typed client, and one with a webhook URL when `url` is given. */
const account = (main: bigint, url?: string) =>
  Effect.gen(function*() {
    yield* seedCatalog
    const created = yield* newAccount(main)
    const admin = yield* adminClient
    yield* admin.accounts.update({ path: { account_id: created.id }, payload: { limits: { all: 1000, orders: 1000 } } })
    if (url !== undefined) {
      yield* admin.accounts.update({ path: { account_id: created.id }, payload: { webhook_url: url } })
    }
    return { ...created, client: yield* resellerClient(created.key), admin }
  })

const buyable = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ id: number }>`
    SELECT b.id FROM bundles b JOIN networks n ON n.id = b.network_id WHERE b.active AND n.active ORDER BY b.id LIMIT 1
  `
  return row!.id
})

const EVENTS = { page: 1, per_page: 20 } as const

for (const target of targets) {
  describe(`events and deliveries on ${target.name}`, () => {
    // The test sees the server's own database (one build of `target.layer`) and the outbox service on it.
    const app = Layer.merge(serverLayer(target), Webhooks.Webhooks.Default.pipe(Layer.provideMerge(target.layer)))
    layer(app, { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("the feed lists every event of the account, newest first, and a cursor follows it", () =>
        Effect.gen(function*() {
          const me = yield* account(100_000n)
          const other = yield* account(100_000n)
          const bundle = yield* buyable
          const first = yield* me.client.events.list({ urlParams: EVENTS })
          // The funding, without any webhook URL.
          assert.deepStrictEqual(first.events.map((e) => e.type), ["wallet.funded"])
          assert.strictEqual(first.pagination.total, 1)
          const cursor = first.cursor

          const placed = yield* me.client.orders.place({
            payload: { bundle_id: bundle as any, phone_number: "0241234567", reference: "feed-1" }
          })
          yield* other.client.orders.place({ payload: { bundle_id: bundle as any, phone_number: "0241234567" } })
          const after = yield* me.client.events.list({ urlParams: { ...EVENTS, since: cursor } })
          assert.deepStrictEqual(after.events.map((e) => e.type), ["order.successful", "wallet.debited"])
          const success = after.events[0]!
          assert.strictEqual(success.type, "order.successful")
          if (success.type === "order.successful") {
            assert.strictEqual(success.data.order_number, placed.order.order_number)
            assert.strictEqual(success.test, undefined)
          }
          // The page's cursor is its newest event's: nothing after it yet.
          const empty = yield* me.client.events.list({ urlParams: { ...EVENTS, since: after.cursor } })
          assert.deepStrictEqual(empty.events, [])
          assert.strictEqual(empty.cursor, after.cursor)
          assert.strictEqual(empty.pagination.total, 0)

          // With `since`, page 1 is the oldest events after the cursor, shown newest first.
          const one = yield* me.client.events.list({ urlParams: { page: 1, per_page: 1, since: cursor } })
          assert.deepStrictEqual(one.events.map((e) => e.type), ["wallet.debited"])
          assert.deepStrictEqual(one.pagination, { current_page: 1, per_page: 1, total: 2, last_page: 2 })
          const next = yield* me.client.events.list({ urlParams: { page: 1, per_page: 1, since: one.cursor } })
          assert.deepStrictEqual(next.events.map((e) => e.type), ["order.successful"])
          assert.strictEqual(next.cursor, after.cursor)

          // Browsing: newest first across the whole feed, filtered by type.
          const all = yield* me.client.events.list({ urlParams: EVENTS })
          assert.deepStrictEqual(all.events.map((e) => e.type), ["order.successful", "wallet.debited", "wallet.funded"])
          assert.strictEqual(all.cursor, after.cursor)
          const debits = yield* me.client.events.list({ urlParams: { ...EVENTS, type: "wallet.debited" } })
          assert.deepStrictEqual(debits.events.map((e) => e.type), ["wallet.debited"])
          const whole = yield* me.client.events.list({ urlParams: { ...EVENTS, since: Event.START_CURSOR } })
          assert.strictEqual(whole.pagination.total, 3)

          // Nothing of another account, however the feed is read.
          const ids = new Set(all.events.map((e) => e.id))
          const theirs = yield* other.client.events.list({ urlParams: { ...EVENTS, since: Event.START_CURSOR } })
          for (const event of theirs.events) assert.isFalse(ids.has(event.id))

          for (const bad of ["x", "1.1", "01", "9223372036854775808", "-1", ""]) {
            const res = yield* raw("GET", `/api/v1/events?since=${encodeURIComponent(bad)}`, { key: me.key })
            assert.strictEqual(res.status, 422, res.text)
            assert.deepStrictEqual(Object.keys(res.json.errors), ["since"])
          }
          const badType = yield* raw("GET", "/api/v1/events?type=order.pending", { key: me.key })
          assert.strictEqual(badType.status, 422, badType.text)
        }))

      it.effect("an event never appears behind a cursor: the account's events commit in their order", () =>
        Effect.gen(function*() {
          // PGlite has one connection: nothing else runs while a transaction is open there.
          if (target.name !== "postgres") return
          const me = yield* account(1_000n)
          const sql = yield* SqlClient.SqlClient
          const webhooks = yield* Webhooks.Webhooks
          const start = yield* me.client.events.list({ urlParams: EVENTS })
          const inserted = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          // The slow transaction numbers its event first, then stays open.
          const slow = yield* sql.withTransaction(Effect.gen(function*() {
            yield* webhooks.enqueue(me.id, {
              type: "wallet.funded",
              data: {
                account_id: me.id as any,
                wallet: "agent",
                amount: 1n,
                balance: 1n,
                reason: "funding",
                order_number: null,
                note: "slow"
              }
            })
            yield* Deferred.succeed(inserted, undefined)
            yield* Deferred.await(release)
          })).pipe(Effect.fork)
          yield* Deferred.await(inserted)
          // A funding meanwhile waits to number its event until the slow transaction has ended.
          const funding = yield* me.admin.wallets.fund({
            headers: {},
            path: { account_id: me.id },
            payload: { amount: 200n }
          }).pipe(Effect.fork)
          yield* Effect.sleep("300 millis")
          const during = yield* me.client.events.list({ urlParams: { ...EVENTS, since: start.cursor } })
          assert.deepStrictEqual(during.events, [], "nothing committed yet")
          assert.strictEqual(during.cursor, start.cursor)
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(slow)
          yield* Fiber.join(funding)
          const after = yield* me.client.events.list({ urlParams: { ...EVENTS, since: during.cursor } })
          assert.deepStrictEqual(after.events.map((e) => e.type === "wallet.funded" ? e.data.wallet : e.type), [
            "main",
            "agent"
          ])
        }))

      it.scoped("test events: marked, in the feed, delivered signed when the account has a URL", () =>
        Effect.gen(function*() {
          const bare = yield* account(0n)
          for (const type of ["order.successful", "order.failed", "wallet.funded", "wallet.debited"] as const) {
            const res = yield* raw("POST", "/api/v1/events/test", { key: bare.key, body: { type } })
            assert.strictEqual(res.status, 201, res.text)
            assert.strictEqual(res.json.event.type, type)
            assert.strictEqual(res.json.event.test, true)
            assert.isNull(res.json.delivery, "no URL, no delivery")
          }
          const feed = yield* bare.client.events.list({ urlParams: EVENTS })
          assert.deepStrictEqual(feed.events.filter((e) => e.test === true).length, 4)
          const balance = yield* bare.client.wallet.balance()
          assert.strictEqual(balance.balance.main, 0n, "a test event moves no money")
          const bad = yield* raw("POST", "/api/v1/events/test", { key: bare.key, body: { type: "order.pending" } })
          assert.strictEqual(bad.status, 422, bad.text)

          const hook = yield* receiver([200])
          const me = yield* account(0n, hook.url)
          const triggered = yield* me.client.events.trigger({ payload: { type: "order.failed" } })
          assert.strictEqual(triggered.delivery?.state, "pending")
          yield* until("the test delivery", Effect.sync(() => hook.received.length === 1))
          const { secret } = (yield* me.client.webhooks.settings()).webhook
          const delivered = hook.received[0]!
          assert.strictEqual(delivered.headers["webhook-id"], triggered.event.id)
          const parsed = Webhook.parseSignatureHeader(String(delivered.headers["x-webhook-signature"]))!
          assert.isTrue(yield* Effect.promise(() => Webhook.verifySignature(secret, parsed, delivered.body)))
          assert.strictEqual(JSON.parse(delivered.body).test, true)
        }))

      it.scoped("deliveries show attempts and the last status; resend delivers again, 404 and 409 otherwise", () =>
        Effect.gen(function*() {
          const hook = yield* receiver([500, 200])
          const me = yield* account(0n, hook.url)
          yield* me.admin.wallets.fund({ headers: {}, path: { account_id: me.id }, payload: { amount: 300n } })
          yield* until("the first attempt", Effect.sync(() => hook.received.length === 1))
          const deliveries = (params: { state?: "pending" | "retrying" | "delivered" | "abandoned" } = {}) =>
            Effect.map(
              me.client.webhooks.deliveries({ urlParams: { page: 1, per_page: 20, ...params } }),
              (page) => page.deliveries
            )
          yield* until(
            "the failed attempt recorded",
            Effect.map(deliveries(), (list) => list[0]?.state === "retrying")
          )
          const [failed] = yield* deliveries()
          assert.strictEqual(failed!.event_type, "wallet.funded")
          assert.strictEqual(failed!.url, hook.url)
          assert.strictEqual(failed!.attempts, 1)
          assert.strictEqual(failed!.last_status, 500)
          assert.isNotNull(failed!.next_attempt_at)
          assert.isAbove(failed!.next_attempt_at!.getTime(), Date.now(), "the retry waits its back-off")
          assert.deepStrictEqual((yield* deliveries({ state: "delivered" })).length, 0)

          // Resend: attempted now rather than after the back-off, and it succeeds.
          const resent = yield* me.client.webhooks.resend({ path: { delivery_id: failed!.id } })
          assert.strictEqual(resent.delivery.state, "pending")
          assert.strictEqual(resent.delivery.attempts, 0)
          yield* until(
            "the resent delivery",
            Effect.map(deliveries({ state: "delivered" }), (list) => list.length === 1)
          )
          const [done] = yield* deliveries({ state: "delivered" })
          assert.strictEqual(done!.last_status, 200)
          assert.isNull(done!.next_attempt_at)
          assert.strictEqual(hook.received.length, 2)
          assert.strictEqual(hook.received[1]!.headers["webhook-id"], failed!.id)
          // A delivered event can be delivered again on request.
          const again = yield* me.client.webhooks.resend({ path: { delivery_id: failed!.id } })
          assert.strictEqual(again.delivery.state, "pending")
          yield* until("the second resend", Effect.sync(() => hook.received.length === 3))

          // Another account's delivery and an unknown one are not found; without a URL, 409.
          const other = yield* account(500n)
          const theirs = yield* raw("POST", `/api/v1/webhooks/deliveries/${failed!.id}/resend`, { key: other.key })
          assert.strictEqual(theirs.status, 404, theirs.text)
          assert.strictEqual(theirs.json._tag, "DeliveryNotFound")
          const unknown = yield* raw("POST", "/api/v1/webhooks/deliveries/evt_nothing/resend", { key: me.key })
          assert.strictEqual(unknown.status, 404, unknown.text)
          const [own] = (yield* other.client.events.list({ urlParams: EVENTS })).events
          const noUrl = yield* raw("POST", `/api/v1/webhooks/deliveries/${own!.id}/resend`, { key: other.key })
          assert.strictEqual(noUrl.status, 409, noUrl.text)
          assert.match(noUrl.json.message, /no webhook URL/)
          assert.deepStrictEqual(
            (yield* other.client.webhooks.deliveries({ urlParams: { page: 1, per_page: 20 } })).deliveries,
            []
          )
          // Once the account has a URL, an event recorded before it can be delivered.
          yield* other.admin.accounts.update({ path: { account_id: other.id }, payload: { webhook_url: hook.url } })
          const late = yield* other.client.webhooks.resend({ path: { delivery_id: own!.id } })
          assert.strictEqual(late.delivery.id, own!.id)
          yield* until("the late delivery", Effect.sync(() => hook.received.length === 4))
        }))

      it.effect("the webhook settings: every account has its secret from the start, never cached", () =>
        Effect.gen(function*() {
          const me = yield* account(0n)
          const first = yield* raw("GET", "/api/v1/webhooks", { key: me.key })
          assert.strictEqual(first.status, 200, first.text)
          assert.isNull(first.json.webhook.url)
          assert.match(first.json.webhook.secret, /^whsec_[0-9A-Za-z]{40}$/)
          assert.strictEqual(first.headers["cache-control"], "no-store")
          // The operator sees only the secret's start, in every answer of the admin API.
          const created = yield* raw("GET", `/admin/v1/accounts/${me.id}`, { bearer: ADMIN_TOKEN })
          assert.strictEqual(created.json.webhook_secret_prefix, first.json.webhook.secret.slice(0, 10))
          assert.notInclude(created.text, first.json.webhook.secret)
          // Setting the URL keeps the secret the receiver was set up with.
          const set = yield* raw("PATCH", `/admin/v1/accounts/${me.id}`, {
            bearer: ADMIN_TOKEN,
            body: { webhook_url: "https://x.test/h" }
          })
          assert.notInclude(set.text, first.json.webhook.secret)
          assert.strictEqual((yield* me.client.webhooks.settings()).webhook.secret, first.json.webhook.secret)
          // A rotation makes a new one, which only the account reads.
          const rotated = yield* raw("PATCH", `/admin/v1/accounts/${me.id}`, {
            bearer: ADMIN_TOKEN,
            body: { rotate_webhook_secret: true }
          })
          const renewed = (yield* me.client.webhooks.settings()).webhook.secret
          assert.notStrictEqual(renewed, first.json.webhook.secret)
          assert.notInclude(rotated.text, renewed)
          assert.strictEqual(rotated.json.webhook_secret_prefix, renewed.slice(0, 10))
          assert.strictEqual((yield* me.client.webhooks.settings()).webhook.url, "https://x.test/h")
        }))

      it.effect("the account's own ledger, newest first, with the admin ledger's filters and more", () =>
        Effect.gen(function*() {
          const me = yield* account(10_000n)
          const bundle = yield* buyable
          yield* me.admin.wallets.fund({
            headers: {},
            path: { account_id: me.id },
            payload: { amount: 55n, wallet: "agent", note: "bonus" }
          })
          const placed = yield* me.client.orders.place({
            payload: { bundle_id: bundle as any, phone_number: "0241234567" }
          })
          const failed = yield* me.client.orders.place({
            payload: { bundle_id: bundle as any, phone_number: "0241230000" }
          })
          assert.strictEqual(failed.order.status, "failed")
          const list = (params: Record<string, string | number> = {}) =>
            Effect.map(
              raw("GET", `/api/v1/wallet/transactions?${new URLSearchParams(params as any)}`, { key: me.key }),
              (res) => {
                assert.strictEqual(res.status, 200, res.text)
                return res.json
              }
            )
          const all = yield* list()
          assert.deepStrictEqual(all.entries.map((e: any) => `${e.wallet}:${e.reason}`), [
            "main:refund",
            "main:order",
            "main:order",
            "agent:funding",
            "main:funding"
          ])
          assert.strictEqual(all.entries[2].order_number, placed.order.order_number)
          assert.strictEqual(all.entries[2].amount, -Number(placed.order.amount_paid) / 100)
          assert.strictEqual(all.entries[3].note, "bonus")
          assert.deepStrictEqual(all.pagination, { current_page: 1, per_page: 50, total: 5, last_page: 1 })
          // The admin ledger shows the same entries.
          const admin = yield* me.admin.wallets.ledger({ path: { account_id: me.id }, urlParams: {} })
          assert.deepStrictEqual(admin.entries.map((e) => e.id), all.entries.map((e: any) => e.id))

          assert.strictEqual((yield* list({ wallet: "agent" })).entries.length, 1)
          assert.strictEqual((yield* list({ reason: "order" })).entries.length, 2)
          assert.strictEqual((yield* list({ per_page: 2, page: 3 })).entries.length, 1)
          const today = new Date().toISOString().slice(0, 10)
          assert.strictEqual((yield* list({ from: today, to: today })).entries.length, 5)
          assert.strictEqual((yield* list({ to: "2020-01-01" })).entries.length, 0)
          const typed = yield* me.client.wallet.transactions({ urlParams: { reason: "refund" } })
          assert.strictEqual(typed.entries[0]!.amount, failed.order.amount_paid)

          for (
            const [name, value] of [["reason", "gift"], ["wallet", "bonus"], ["from", "2026-02-30"], ["page", "0"]]
          ) {
            const res = yield* raw("GET", `/api/v1/wallet/transactions?${name}=${value}`, { key: me.key })
            assert.strictEqual(res.status, 422, res.text)
            assert.deepStrictEqual(Object.keys(res.json.errors), [name])
          }
          const anonymous = yield* raw("GET", "/api/v1/wallet/transactions")
          assert.strictEqual(anonymous.status, 401)
        }))

      it.effect("the OpenAPI document marks exactly the endpoints beyond the specification", () =>
        Effect.gen(function*() {
          const res = yield* raw("GET", "/api/v1/openapi.json")
          assert.strictEqual(res.status, 200)
          const marked: Array<string> = []
          for (const [path, operations] of Object.entries<Record<string, any>>(res.json.paths)) {
            for (const [method, operation] of Object.entries(operations)) {
              if (operation[Extension.OPENAPI_FIELD] === true) marked.push(`${method.toUpperCase()} ${path}`)
            }
          }
          assert.sameMembers(marked, [
            "GET /api/v1/wallet/transactions",
            "POST /api/v1/wallet/transfers",
            "GET /api/v1/phone-numbers/{phone_number}",
            "GET /api/v1/events",
            "POST /api/v1/events/test",
            "GET /api/v1/webhooks",
            "GET /api/v1/webhooks/deliveries",
            "POST /api/v1/webhooks/deliveries/{delivery_id}/resend"
          ])
        }))
    })
  })
}
