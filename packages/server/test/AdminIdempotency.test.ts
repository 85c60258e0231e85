/**
 * `Idempotency-Key` on the admin requests that move money (wallet fund and adjust, order
 * resolve), end to end over real HTTP: concurrent repeats credit once and all get the first
 * result with `Idempotent-Replayed: true`; another body under the same key is a 422 that moves
 * nothing; a malformed key is a 422. And the admin CLI: it sends a key on every such command,
 * `--idempotency-key` sets it, and a cut connection is retried with the same key.
 */
import { targets } from "@databundle/core/testing"
import { capturingConsole } from "@databundle/terminal/testing"
import { HttpServer } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Cli from "../src/Cli.js"
import {
  ADMIN_TOKEN,
  adminClient,
  bundlesByName,
  newAccount,
  raw,
  type RawOptions,
  type RawResponse,
  resellerClient,
  serverLayer
} from "./Harness.js"

const adminRaw = (method: "GET" | "POST", path: string, options: RawOptions = {}) =>
  raw(method, `/admin/v1${path}`, { bearer: ADMIN_TOKEN, ...options })

const post = (path: string, body: unknown, key?: string) =>
  adminRaw("POST", path, { body, headers: key === undefined ? {} : { "Idempotency-Key": key } })

const expect422 = (res: RawResponse, pattern: RegExp) => {
  assert.strictEqual(res.status, 422, res.text)
  assert.strictEqual(res.json.success, false, res.text)
  assert.match(res.json.message, pattern, res.text)
  assert.isString(res.headers["x-request-id"])
}

const balances = (accountId: number) =>
  Effect.flatMap(
    adminClient,
    (admin) => Effect.map(admin.accounts.show({ path: { account_id: accountId as any } }), (a) => a.balance)
  )

const ledger = (accountId: number) =>
  Effect.flatMap(
    adminClient,
    (admin) =>
      Effect.map(admin.wallets.ledger({ path: { account_id: accountId as any }, urlParams: {} }), (l) => l.entries)
  )

const fresh = (label: string) => `${label}-${Math.random().toString(36).slice(2)}`

/** Runs `bundles-server admin ...args` in process; returns how it ended and what it printed. */
const runAdmin = (url: string, ...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { console: capturing, stderr, stdout } = yield* capturingConsole
    const exit = yield* Cli.run(["node", "bundles-server", "admin", ...args, "--url", url, "--token", ADMIN_TOKEN])
      .pipe(
        Effect.provide(NodeContext.layer),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
        Effect.withConsole(capturing),
        Effect.exit
      )
    assert.isTrue(Exit.isSuccess(exit), `admin ${args.join(" ")} failed: ${String(exit)}\n${stderr.join("\n")}`)
    return stdout.join("\n")
  })

/**
 * A proxy to the test server that records each request's Idempotency-Key and, while `drops`
 * is above zero, forwards a POST and then cuts the connection instead of answering.
 */
const keyProxy = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const keys: Array<string | undefined> = []
      const state = { drops: 0 }
      const server = http.createServer(async (request, response) => {
        const chunks: Array<Buffer> = []
        for await (const chunk of request) chunks.push(chunk as Buffer)
        if (request.method === "POST") keys.push(request.headers["idempotency-key"] as string | undefined)
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(request.headers)) {
          if (typeof value === "string" && !["host", "connection", "content-length"].includes(name)) {
            headers[name] = value
          }
        }
        const body = Buffer.concat(chunks)
        const answer = await fetch(`${target}${request.url}`, {
          method: request.method!,
          headers,
          ...(body.length > 0 ? { body: new Uint8Array(body) } : {})
        })
        const text = Buffer.from(await answer.arrayBuffer())
        if (request.method === "POST" && state.drops > 0) {
          state.drops--
          request.socket.destroy()
          return
        }
        response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" })
        response.end(text)
      })
      return new Promise<{ url: string; keys: typeof keys; state: typeof state; server: http.Server }>((ok) =>
        server.listen(0, "127.0.0.1", () =>
          ok({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys, state, server }))
      )
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((ok) => server.close(() => ok()))
      )
  )

const serverUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("the test server does not listen on TCP")
  return `http://127.0.0.1:${address.port}`
})

for (const target of targets) {
  describe(`admin idempotency on ${target.name}`, () => {
    const server = serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "600" })
    layer(server, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("twenty concurrent funds with one key credit once; all get the first body and the replay header", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(0n)
          const key = fresh("fund")
          const results = yield* Effect.forEach(
            Array.from({ length: 20 }, (_, i) => i),
            () => post(`/accounts/${account.id}/wallet/fund`, { amount: 12.5, note: "MoMo 1" }, key),
            { concurrency: "unbounded" }
          )
          for (const res of results) assert.strictEqual(res.status, 200, res.text)
          const bodies = new Set(results.map((res) => res.text))
          assert.strictEqual(bodies.size, 1, [...bodies].join("\n"))
          const replayed = results.filter((res) => res.headers["idempotent-replayed"] === "true")
          assert.strictEqual(replayed.length, 19)
          assert.strictEqual(results[0]!.json.balance.main, 12.5)
          assert.strictEqual((yield* balances(account.id)).main, 1250n)
          const entries = yield* ledger(account.id)
          assert.deepStrictEqual(entries.map((e) => [e.reason, e.amount]), [["funding", 1250n]])
          // Later, the same request with the same key still replays.
          const again = yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 12.5, note: "MoMo 1" }, key)
          assert.strictEqual(again.text, results[0]!.text)
          assert.strictEqual(again.headers["idempotent-replayed"], "true")
          // Without a key, or with another, it is a new funding.
          const other = yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 12.5, note: "MoMo 1" })
          assert.strictEqual(other.status, 200)
          assert.isUndefined(other.headers["idempotent-replayed"])
          assert.strictEqual((yield* balances(account.id)).main, 2500n)
        }))

      it.effect("the same key with another body, endpoint or account is a 422 that moves nothing", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(0n)
          const otherAccount = yield* newAccount(0n)
          const key = fresh("mismatch")
          const first = yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 5 }, key)
          assert.strictEqual(first.status, 200, first.text)
          const conflict = /Idempotency-Key was already used for another request/
          expect422(yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 6 }, key), conflict)
          expect422(
            yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 5, note: "another" }, key),
            conflict
          )
          expect422(yield* post(`/accounts/${otherAccount.id}/wallet/fund`, { amount: 5 }, key), conflict)
          expect422(yield* post(`/accounts/${account.id}/wallet/adjust`, { amount: 5, note: "x" }, key), conflict)
          const mismatch = yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 6 }, key)
          assert.deepStrictEqual(Object.keys(mismatch.json.errors), ["Idempotency-Key"])
          assert.strictEqual((yield* balances(account.id)).main, 500n)
          assert.strictEqual((yield* balances(otherAccount.id)).main, 0n)
          assert.strictEqual((yield* ledger(account.id)).length, 1)
        }))

      it.effect("a malformed key is a 422 that names the rule, and moves nothing", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(0n)
          for (const key of ["has space", "a".repeat(129), "semi;colon", "é"]) {
            const res = yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 5 }, key)
            expect422(res, /1 to 128 characters of A-Z, a-z, 0-9, _, \., : and -/)
          }
          const longest = yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 5 }, "a".repeat(128))
          assert.strictEqual(longest.status, 200, longest.text)
          assert.strictEqual((yield* balances(account.id)).main, 500n)
        }))

      it.effect("adjust replays; a failed adjustment is not recorded, so the key can be used once it can succeed", () =>
        Effect.gen(function*() {
          const account = yield* newAccount(1000n)
          const key = fresh("adjust")
          const body = { amount: -20, note: "correction" }
          const refused = yield* post(`/accounts/${account.id}/wallet/adjust`, body, key)
          assert.strictEqual(refused.status, 400, refused.text)
          yield* post(`/accounts/${account.id}/wallet/fund`, { amount: 20 })
          const results = yield* Effect.forEach(
            [1, 2, 3, 4, 5],
            () => post(`/accounts/${account.id}/wallet/adjust`, body, key),
            { concurrency: "unbounded" }
          )
          for (const res of results) assert.strictEqual(res.status, 200, res.text)
          assert.strictEqual(new Set(results.map((res) => res.text)).size, 1)
          assert.strictEqual(results.filter((res) => res.headers["idempotent-replayed"] === "true").length, 4)
          assert.strictEqual((yield* balances(account.id)).main, 1000n)
          const adjustments = (yield* ledger(account.id)).filter((e) => e.reason === "adjustment")
          assert.deepStrictEqual(adjustments.map((e) => e.amount), [-2000n])
        }))

      it.effect("resolve replays: a repeated resolve with the key is the first 200, not a 409, and refunds once", () =>
        Effect.gen(function*() {
          const bundles = yield* bundlesByName
          const account = yield* newAccount(10_000n)
          const client = yield* resellerClient(account.key)
          const placed = yield* client.orders.place({
            payload: { bundle_id: bundles.get("MTN 1GB")!.id, phone_number: "0249999999" }
          })
          assert.strictEqual(placed.order.status, "pending")
          const path = `/orders/${placed.order.order_number}/resolve`
          const key = fresh("resolve")
          const results = yield* Effect.forEach([1, 2, 3, 4, 5, 6], () => post(path, { status: "failed" }, key), {
            concurrency: "unbounded"
          })
          for (const res of results) assert.strictEqual(res.status, 200, res.text)
          assert.strictEqual(new Set(results.map((res) => res.text)).size, 1)
          assert.strictEqual(results.filter((res) => res.headers["idempotent-replayed"] === "true").length, 5)
          assert.strictEqual((yield* balances(account.id)).main, 10_000n)
          const refunds = (yield* ledger(account.id)).filter((e) => e.reason === "refund")
          assert.strictEqual(refunds.length, 1)
          expect422(yield* post(path, { status: "successful" }, key), /already used/)
          // Without the key, resolving again is still the conflict it was.
          assert.strictEqual((yield* post(path, { status: "failed" })).status, 409)
        }))

      it.effect("the admin CLI sends a fresh key per run, --idempotency-key sets it, a cut connection retries it", () =>
        Effect.scoped(Effect.gen(function*() {
          const account = yield* newAccount(0n)
          const proxy = yield* keyProxy(yield* serverUrl)
          const id = String(account.id)
          yield* runAdmin(proxy.url, "wallet", "fund", "--account", id, "--amount", "1.00")
          yield* runAdmin(proxy.url, "wallet", "fund", "--account", id, "--amount", "1.00")
          assert.strictEqual(proxy.keys.length, 2)
          for (const key of proxy.keys) assert.match(key ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-/)
          assert.notStrictEqual(proxy.keys[0], proxy.keys[1])
          assert.strictEqual((yield* balances(account.id)).main, 200n)

          const key = fresh("cli")
          yield* runAdmin(proxy.url, "wallet", "fund", "--account", id, "--amount", "3.00", "--idempotency-key", key)
          yield* runAdmin(proxy.url, "wallet", "fund", "--account", id, "--amount", "3.00", "--idempotency-key", key)
          assert.deepStrictEqual(proxy.keys.slice(2), [key, key])
          assert.strictEqual((yield* balances(account.id)).main, 500n)

          // The server funds, the answer is lost; the CLI retries with the same key and gets the replay.
          proxy.state.drops = 1
          const out = yield* runAdmin(
            proxy.url,
            "wallet",
            "adjust",
            "--account",
            id,
            "--amount",
            "-1.00",
            "--note",
            "fix"
          )
          assert.match(out, /Adjusted the main wallet/)
          const [lost, retried] = proxy.keys.slice(4)
          assert.isString(lost)
          assert.strictEqual(retried, lost)
          assert.strictEqual((yield* balances(account.id)).main, 400n)
        })))
    })
  })
}
