/**
 * What the server reads from outside, against hostile fakes on loopback, on PGlite and
 * Postgres: an upstream whose catalogue prices bundles at zero, below zero or past the bound
 * (refused, shown in the diff, the rest synced), and one that answers an order with 400 MB,
 * streamed or declared (read to 1 MiB and refused; the order stays with that upstream and is
 * asked again under the same reference, charged once); a payment gateway that answers with
 * 400 MB (the payment stays pending, nothing credited); and a mail server whose greeting
 * never ends (the attempt fails, the email is tried again later).
 */
import { DashboardApi } from "@databundle/contract"
import { type Target, targets } from "@databundle/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as http from "node:http"
import * as net from "node:net"
import { ADMIN_TOKEN, mailed, newAccount, raw, serverLayer } from "./Harness.js"

const HUGE = 400 * 1024 * 1024

/** How a fake answers the requests it treats as hostile. */
type Flood = "streamed" | "declared"

/** Answers `response` with 400 MB: streamed as fast as it is read, or declared and never sent. Resolves with the bytes written. */
const flood = (response: http.ServerResponse, how: Flood) =>
  new Promise<number>((resolve) => {
    let written = 0
    response.once("close", () => resolve(written))
    if (how === "declared") {
      response.writeHead(200, { "content-type": "application/json", "content-length": String(HUGE) })
      response.write("{\"success\":true,")
      return
    }
    response.writeHead(200, { "content-type": "application/json" })
    const chunk = Buffer.alloc(64 * 1024, "a")
    response.write("{\"success\":true,\"padding\":\"")
    const more = () => {
      while (written < HUGE && !response.destroyed) {
        written += chunk.length
        if (!response.write(chunk)) return void response.once("drain", more)
      }
      response.end("\"}")
    }
    more()
  })

/** An HTTP server on a free port of 127.0.0.1 for the scope: its URL (every connection cut at the end). */
const listening = (handler: http.RequestListener) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(async () => {
        const server = http.createServer(handler)
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
        return server
      }),
      (server) =>
        Effect.promise(() =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
        )
    ),
    (server) => `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  )

const json = (response: http.ServerResponse, body: unknown) =>
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))

/** A fake upstream of this API: one network whose bundles are priced as given; orders answered by `flood`. */
const fakeUpstream = (prices: ReadonlyArray<number>, how: Flood) =>
  Effect.gen(function*() {
    const references: Array<string> = []
    const written: Array<number> = []
    const url = yield* listening((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/api/v1/networks") {
          return json(response, {
            success: true,
            networks: [{ id: 1, name: "MTN", slug: "mtn", color: "#FFCC00", delivery: "instant", bundles_count: 4 }]
          })
        }
        if (request.url === "/api/v1/networks/1/bundles") {
          return json(response, {
            success: true,
            network: "MTN",
            bundles: prices.map((price, i) => ({
              id: i + 1,
              size: `${i + 1}GB`,
              name: `MTN ${i + 1}GB`,
              price,
              badge: "",
              is_active: true
            }))
          })
        }
        if (request.url?.startsWith("/api/v1/orders")) {
          if (request.method === "POST") references.push(JSON.parse(body).reference)
          void flood(response, how).then((bytes) => written.push(bytes))
          return
        }
        response.writeHead(404, { "content-type": "application/json" }).end("{\"success\":false,\"message\":\"no\"}")
      })
    })
    return { url, references, written }
  })

const admin = (method: "GET" | "POST", path: string, body?: unknown) =>
  raw(method, `/admin/v1${path}`, { bearer: ADMIN_TOKEN, body })

const downstream = (target: Target, upstream: string) =>
  Layer.build(serverLayer(target, {
    BUNDLES_PROVIDER: "upstream",
    BUNDLES_UPSTREAM_NAME: "wholesale",
    BUNDLES_UPSTREAM_URL: `${upstream}/api/v1`,
    BUNDLES_UPSTREAM_API_KEY: `dbk_live_${"a".repeat(40)}`,
    BUNDLES_UPSTREAM_RETRY_SECONDS: "0.2",
    BUNDLES_UPSTREAM_POLL_SECONDS: "0.2",
    BUNDLES_UPSTREAM_BREAKER_FAILURES: "1000",
    BUNDLES_POLL_SECONDS: "0.1"
  }))

for (const target of targets) {
  describe(`answers from outside on ${target.name}`, () => {
    for (const how of ["streamed", "declared"] as const) {
      it.scopedLive(
        `an upstream's bad prices are refused in the sync; its 400 MB answer (${how}) is refused, charged once`,
        () =>
          Effect.gen(function*() {
            const upstream = yield* fakeUpstream([5.5, 0, -1, 2_000_000_000], how)
            const server = yield* downstream(target, upstream.url)
            yield* Effect.gen(function*() {
              // The dry run shows the refusals among the rest, and the sync applies the rest.
              const dry = yield* admin("POST", "/upstreams/catalog-sync", { markup: "10%", dry_run: true })
              assert.strictEqual(dry.status, 200, dry.text)
              const refused = dry.json.changes.filter((c: any) => c.change === "refuse")
              assert.deepStrictEqual(refused.map((c: any) => c.detail.slice(c.detail.indexOf(" at ") + 4)), [
                "GHS 0.00, at or below zero",
                "GHS -1.00, at or below zero",
                "GHS 2000000000.00, which with the markup passes GHS 1000000000.00, the most a price may be"
              ])
              assert.isTrue(dry.json.changes.some((c: any) => c.change === "create" && c.key === "mtn-1gb"))
              const synced = yield* admin("POST", "/upstreams/catalog-sync", { markup: "10%" })
              assert.strictEqual(synced.status, 200, synced.text)
              assert.deepStrictEqual(synced.json.changes, dry.json.changes)
              const exported = yield* admin("GET", "/catalog")
              const bundles = exported.json.networks.flatMap((n: any) => n.bundles)
              assert.deepStrictEqual(bundles.map((b: any) => [b.key, b.price, b.active]), [["mtn-1gb", 6.05, true]])

              // An order answered with 400 MB: refused after 1 MiB, left with that upstream, asked
              // again under the same reference, paid for once.
              const account = yield* newAccount(10_000n)
              const networks = (yield* raw("GET", "/api/v1/networks", { key: account.key })).json.networks
              const listed = yield* raw("GET", `/api/v1/networks/${networks[0].id}/bundles`, { key: account.key })
              const placed = yield* raw("POST", "/api/v1/orders", {
                key: account.key,
                body: { bundle_id: listed.json.bundles[0].id, phone_number: "0241234567", reference: `flood-${how}` }
              })
              assert.strictEqual(placed.status, 200, placed.text)
              assert.strictEqual(placed.json.order.status, "pending")
              for (let i = 0; i < 100 && upstream.written.length < 3; i++) yield* Effect.sleep("100 millis")
              assert.isAtLeast(upstream.references.length, 2, "asked again")
              assert.deepStrictEqual(new Set(upstream.references), new Set([placed.json.order.order_number]))
              for (const bytes of upstream.written) {
                assert.isBelow(bytes, 64 * 1024 * 1024, "read no further than the cap")
              }
              const order = yield* raw("GET", `/api/v1/orders/${placed.json.order.order_number}`, { key: account.key })
              assert.strictEqual(order.json.order.status, "pending")
              const balance = yield* raw("GET", "/api/v1/balance", { key: account.key })
              assert.strictEqual(balance.json.balance.main, 100 - 6.05, "debited once")
              const held = yield* admin("GET", "/upstreams")
              assert.strictEqual(held.json.upstreams[0].pending_orders, 1)
            }).pipe(Effect.provide(server))
          }),
        { timeout: 120_000 }
      )
    }

    it.scopedLive(
      "a payment gateway's 400 MB answer to a charge leaves the payment pending, nothing credited",
      () =>
        Effect.gen(function*() {
          const written: Array<number> = []
          // Paystack has never seen the payment; its charge is answered with 400 MB.
          const gateway = yield* listening((request, response) => {
            if (request.url?.startsWith("/transaction/verify/")) {
              return response.writeHead(400, { "content-type": "application/json" })
                .end("{\"status\":false,\"message\":\"Transaction reference not found\"}")
            }
            void flood(response, "streamed").then((n) => written.push(n))
          })
          const server = yield* Layer.build(serverLayer(target, {
            BUNDLES_PAYMENTS_PROVIDER: "paystack",
            BUNDLES_PAYSTACK_SECRET_KEY: "sk_test_flooded",
            BUNDLES_PAYSTACK_BASE_URL: gateway
          }))
          yield* Effect.gen(function*() {
            const prefix = DashboardApi.DASHBOARD_PREFIX
            const email = `flood${Date.now().toString(36)}@example.com`
            const password = "correct horse battery"
            yield* raw("POST", `${prefix}/register`, { body: { name: "Ama", email, phone: "0241234567", password } })
            const token = /token=([A-Za-z0-9_-]+)/.exec((yield* mailed(email)).link!)![1]!
            yield* raw("POST", `${prefix}/email/verify`, { body: { token } })
            const signedIn = yield* raw("POST", `${prefix}/session`, { body: { email, password } })
            const headers = {
              cookie: `bundles_session=${/bundles_session=([^;]+)/.exec(signedIn.headers["set-cookie"]!)![1]}`,
              "x-csrf-token": signedIn.json.csrf_token,
              "idempotency-key": "flooded-payment"
            }
            const created = yield* raw("POST", `${prefix}/payments`, {
              body: { method: "mtn_momo", amount: 20, payer_number: "0241234567" },
              headers
            })
            assert.strictEqual(created.status, 201, created.text)
            assert.strictEqual(created.json.payment.status, "pending")
            // (The gateway's side of the connection closes a moment after ours gave up.)
            for (let i = 0; i < 50 && written.length === 0; i++) yield* Effect.sleep("100 millis")
            assert.isAtLeast(written.length, 1)
            for (const bytes of written) assert.isBelow(bytes, 64 * 1024 * 1024)
            const ledger = yield* raw("GET", `${prefix}/ledger`, { headers })
            assert.strictEqual(ledger.json.balance.main, 0)
          }).pipe(Effect.provide(server))
        }),
      { timeout: 120_000 }
    )

    it.scopedLive(
      "a mail server whose greeting never ends: the attempt fails, the email waits for the next",
      () =>
        Effect.gen(function*() {
          let written = 0
          const smtp = yield* Effect.acquireRelease(
            Effect.promise(async () => {
              const sockets = new Set<net.Socket>()
              const server = net.createServer((socket) => {
                sockets.add(socket)
                socket.on("close", () => sockets.delete(socket))
                socket.on("error", () => {})
                const chunk = Buffer.alloc(64 * 1024, "x")
                socket.write("220-")
                const more = () => {
                  while (written < HUGE && !socket.destroyed) {
                    written += chunk.length
                    if (!socket.write(chunk)) return void socket.once("drain", more)
                  }
                }
                more()
              })
              await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
              return { server, sockets, port: (server.address() as net.AddressInfo).port }
            }),
            ({ server, sockets }) =>
              Effect.promise(() =>
                new Promise<void>((resolve) => {
                  for (const socket of sockets) socket.destroy()
                  server.close(() => resolve())
                })
              )
          )
          const server = yield* Layer.build(serverLayer(target, {
            BUNDLES_SMTP_URL: `smtp://user:pass@127.0.0.1:${smtp.port}`,
            BUNDLES_MAIL_FROM: "no-reply@bundles.test",
            BUNDLES_MAIL_RETRY_SECONDS: "60",
            BUNDLES_POLL_SECONDS: "0.1"
          }))
          yield* Effect.gen(function*() {
            const email = `smtpflood${Date.now().toString(36)}@example.com`
            yield* raw("POST", `${DashboardApi.DASHBOARD_PREFIX}/register`, {
              body: { name: "Ama", email, phone: "0241234567", password: "correct horse battery" }
            })
            yield* mailed(email)
            let mail: any
            for (let i = 0; i < 100; i++) {
              mail = (yield* admin("GET", `/emails?to=${encodeURIComponent(email)}`)).json.emails[0]
              if (mail.attempts > 0) break
              yield* Effect.sleep("100 millis")
            }
            assert.strictEqual(mail.status, "queued")
            assert.strictEqual(mail.attempts, 1)
            assert.match(mail.last_error, /exceeds maximum allowed size/)
            assert.isBelow(written, 64 * 1024 * 1024, "read no further than the cap")
          }).pipe(Effect.provide(server))
        }),
      { timeout: 120_000 }
    )
  })
}
