/**
 * The extensions through both faces against the real server: the ledger, the event feed and
 * following it, test events, the webhook settings, deliveries and their resend, and the errors
 * of resending (404, 409) as their classes.
 */
import { targets } from "@databundle/core/testing"
import { FetchHttpClient } from "@effect/platform"
import { afterAll, assert, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Stream } from "effect"
import { BundlesClient, ConflictError, createClient, DeliveryNotFoundError, webhookBody } from "../src/index.js"
import { startServer, type TestServer } from "./Server.js"

const target = targets[0]!

describe(`the extensions through both faces on ${target.name}`, () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer(target)
  })
  afterAll(() => server?.dispose())

  it("the ledger, the feed and its cursor, test events, settings, and resend's errors (Promise face)", async () => {
    const { id, key } = await server.account({ funds: 2_000n })
    const client = createClient({ apiKey: key, baseUrl: server.baseUrl })

    const ledger = await client.wallet.transactions({ perPage: 10 })
    assert.deepStrictEqual(ledger.entries.map((e) => [e.wallet, e.reason, e.amount, e.balanceAfter]), [
      ["main", "funding", 2_000n, 2_000n]
    ])
    assert.deepStrictEqual(ledger.pagination, { currentPage: 1, perPage: 10, total: 1, lastPage: 1 })

    const first = await client.events.list()
    assert.deepStrictEqual(first.events.map((e) => e.type), ["wallet.funded"])
    // Events are as a delivery carries them: snake_case, amounts in pesewas.
    const funded = first.events[0]!
    assert.strictEqual(funded.type === "wallet.funded" ? funded.data.amount : undefined, 2_000n)
    assert.strictEqual(JSON.parse(webhookBody(funded)).data.amount, 20)

    const triggered = await client.events.trigger("order.successful")
    assert.strictEqual(triggered.event.test, true)
    assert.isNull(triggered.delivery)
    const after = await client.events.list({ since: first.cursor })
    assert.deepStrictEqual(after.events.map((e) => e.id), [triggered.event.id])

    const settings = await client.webhooks.settings()
    assert.isNull(settings.url)
    assert.match(settings.secret, /^whsec_/)
    assert.deepStrictEqual((await client.webhooks.deliveries()).deliveries, [])

    await expect(client.webhooks.resend(triggered.event.id)).rejects.toThrow(ConflictError)
    await expect(client.webhooks.resend("evt_unknown")).rejects.toThrow(DeliveryNotFoundError)
    await server.setWebhook(id, "http://127.0.0.1:9/none")
    const resent = await client.webhooks.resend(triggered.event.id)
    assert.strictEqual(resent.id, triggered.event.id)
    assert.strictEqual(resent.eventType, "order.successful")
  })

  it("follow hands out each new event once, oldest first, until aborted", async () => {
    const { id, key } = await server.account({ funds: 100n })
    const client = createClient({ apiKey: key, baseUrl: server.baseUrl })
    const abort = new AbortController()
    const seen: Array<string> = []
    const following = (async () => {
      for await (const event of client.events.follow({ intervalMs: 100 }, { signal: abort.signal })) {
        seen.push(event.type === "wallet.funded" ? `${event.data.amount}` : event.type)
        if (seen.length === 3) abort.abort()
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 500))
    for (const amount of [1n, 2n, 3n]) await server.fund(id, amount)
    await following
    // The funding before it started is not among them.
    assert.deepStrictEqual(seen, ["1", "2", "3"])
  })

  it.live("followEvents (Effect face): a Stream of the events after the cursor", () =>
    Effect.gen(function*() {
      const { id, key } = yield* Effect.promise(() => server.account({ funds: 100n }))
      const client = yield* BundlesClient.make({ apiKey: key, baseUrl: server.baseUrl })
      const { cursor } = yield* client.events({ per_page: 1 })
      const fiber = yield* client.followEvents({ since: cursor, interval: "100 millis" }).pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.fork
      )
      yield* Effect.promise(() => server.fund(id, 5n))
      yield* Effect.promise(() => server.fund(id, 6n))
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      assert.deepStrictEqual(events.map((e) => e.type === "wallet.funded" ? e.data.amount : 0n), [5n, 6n])
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
