/**
 * Webhook delivery as the server runs it: its background worker, its transport, real
 * receivers on real ports and a real database. A redirect is a failed attempt and is never
 * followed; private destinations are refused unless allowed; a receiver that never answers
 * does not delay another account's events.
 */
import type { Account } from "@databundle/contract"
import { Accounts, OperatorActions, Wallet } from "@databundle/core"
import { type Target, targets } from "@databundle/core/testing"
import { SqlClient } from "@effect/sql"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Http from "../src/Http.js"
import { refusal } from "../src/WebhookTransport.js"

/**
 * The application (domain and workers, webhook transport included) on `target`, with only
 * the settings given: the suite's harness allows private targets, this one must not by default.
 */
const appRuntime = (target: Target, settings: Record<string, string>) =>
  ManagedRuntime.make(
    Http.AppLive.pipe(
      Layer.provideMerge(target.layer),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
        new Map(Object.entries({ BUNDLES_POLL_SECONDS: "0.2", ...settings }))
      ))),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )

type App = ReturnType<typeof appRuntime>

interface Receiver {
  readonly port: number
  readonly url: string
  /** Requests seen, in order: method, path, when. */
  readonly hits: Array<{ method: string; path: string; at: number }>
  /** The most requests that were open at once. */
  readonly mostOpen: () => number
  readonly close: () => Promise<void>
}

/** A receiver on 127.0.0.1 that answers each request with `answer` (or never, when it returns `undefined`). */
const startReceiver = async (
  answer: (response: http.ServerResponse) => void | undefined
): Promise<Receiver> => {
  const hits: Receiver["hits"] = []
  let open = 0
  let most = 0
  const server = http.createServer((request, response) => {
    hits.push({ method: request.method ?? "", path: request.url ?? "", at: Date.now() })
    open++
    most = Math.max(most, open)
    response.on("close", () => open--)
    request.resume()
    request.on("end", () => answer(response))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks`,
    hits,
    mostOpen: () => most,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const until = async (what: string, condition: () => Promise<boolean> | boolean, ms = 20_000) => {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** A new account with its webhook at `url`; returns its id. */
const accountWithWebhook = (app: App, url: string) =>
  app.runPromise(Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const account = yield* accounts.create({ name: "Webhook receiver", price_group: null })
    yield* accounts.update(account.id, { webhook_url: url })
    return account.id
  }))

const fund = (app: App, accountId: Account.AccountId, amount: bigint) =>
  app.runPromise(Effect.flatMap(Wallet.Wallet, (wallet) => wallet.fund(accountId, { amount })))

interface EventRow {
  readonly attempts: number
  readonly delivered: boolean
  readonly leased: boolean
  readonly last_error: string | null
}

const events = (app: App, accountId: number) =>
  app.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<EventRow>`
      SELECT attempts, delivered_at IS NOT NULL AS delivered, leased_until IS NOT NULL AS leased, last_error
      FROM webhook_events WHERE account_id = ${accountId} ORDER BY created_at
    `))

/** True once every event of the account has had an attempt that finished. */
const attempted = (app: App, accountId: number) => async () => {
  const rows = await events(app, accountId)
  return rows.length > 0 && rows.every((row) => row.attempts > 0 && !row.leased)
}

describe("which addresses are refused", () => {
  it("private, loopback, link-local, unique-local, multicast and unspecified, in IPv4 and IPv6", () => {
    for (
      const address of [
        "127.0.0.1",
        "127.255.0.9",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "fe80::1",
        "fc00::1",
        "fd12:3456::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "[::1]"
      ]
    ) {
      assert.isDefined(refusal(address), address)
    }
    for (const address of ["8.8.8.8", "172.32.0.1", "192.169.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"]) {
      assert.isUndefined(refusal(address), address)
    }
    assert.isDefined(refusal("example.com"))
  })
})

for (const target of targets) {
  describe(`webhook delivery on ${target.name}, private targets allowed`, () => {
    let app: App
    let recorder: Receiver
    beforeAll(async () => {
      app = appRuntime(target, { BUNDLES_WEBHOOK_ALLOW_PRIVATE: "1" })
      await app.runPromise(Effect.void)
      recorder = await startReceiver((response) => void response.writeHead(204).end())
    })
    afterAll(async () => {
      await recorder?.close()
      await app?.dispose()
    })

    it("never follows a redirect: a 302 is a failed attempt and its target is never hit", async () => {
      const redirector = await startReceiver((response) =>
        void response.writeHead(302, { location: `${recorder.url}/redirected` }).end()
      )
      try {
        const account = await accountWithWebhook(app, redirector.url)
        await fund(app, account, 100n)
        await until("the attempt", attempted(app, account))
        const [row] = await events(app, account)
        assert.strictEqual(redirector.hits.length, 1)
        assert.strictEqual(redirector.hits[0]!.method, "POST")
        assert.isFalse(row!.delivered)
        assert.match(row!.last_error ?? "", /302/)
        // Give a follower every chance to show itself.
        await new Promise((resolve) => setTimeout(resolve, 500))
        assert.deepStrictEqual(recorder.hits.filter((hit) => hit.path.includes("redirected")), [])
      } finally {
        await redirector.close()
      }
    }, 60_000)

    it("a receiver that never answers, with 20 events queued, does not delay another account's event", async () => {
      const blackhole = await startReceiver(() => undefined)
      try {
        const stuck = await accountWithWebhook(app, blackhole.url)
        for (let i = 0; i < 20; i++) await fund(app, stuck, 1n)
        await until("the blackhole to hold its deliveries", () => blackhole.hits.length >= 2)
        const healthy = await accountWithWebhook(app, `${recorder.url}/healthy`)
        const before = recorder.hits.length
        const started = Date.now()
        await fund(app, healthy, 250n)
        await until("the healthy delivery", () => recorder.hits.length > before, 30_000)
        const latency = recorder.hits[before]!.at - started
        console.log(`healthy endpoint's delivery latency beside a blackhole (${target.name}): ${latency} ms`)
        assert.isBelow(latency, 2_000)
        const [row] = await events(app, healthy)
        await until("the healthy event marked delivered", async () => (await events(app, healthy))[0]!.delivered)
        assert.strictEqual(row!.attempts, 1)
        // The blackhole never had more than two attempts at once.
        assert.isAtMost(blackhole.mostOpen(), 2)
      } finally {
        await blackhole.close()
      }
    }, 60_000)
  })

  describe(`webhook delivery on ${target.name}, private targets refused (the default)`, () => {
    let app: App
    let receiver: Receiver
    beforeAll(async () => {
      app = appRuntime(target, {})
      await app.runPromise(Effect.void)
      receiver = await startReceiver((response) => void response.writeHead(204).end())
    })
    afterAll(async () => {
      await receiver?.close()
      await app?.dispose()
    })

    it(
      "refuses a loopback address written in the URL, IPv4-mapped IPv6 included, and a name resolving to one",
      async () => {
        const urls = [
          receiver.url,
          `http://[::ffff:127.0.0.1]:${receiver.port}/hooks`,
          `http://localhost:${receiver.port}/hooks`
        ]
        const accounts: Array<Account.AccountId> = []
        for (const url of urls) accounts.push(await accountWithWebhook(app, url))
        for (const account of accounts) await fund(app, account, 100n)
        for (const account of accounts) await until("the attempt", attempted(app, account))
        for (const [i, account] of accounts.entries()) {
          const [row] = await events(app, account)
          assert.isFalse(row!.delivered, urls[i])
          assert.match(row!.last_error ?? "", /refused: .*loopback/, urls[i])
        }
        assert.match((await events(app, accounts[2]!))[0]!.last_error ?? "", /localhost resolves to/)
        assert.deepStrictEqual(receiver.hits, [])
      },
      60_000
    )
  })
}

for (const target of targets) {
  describe(`a webhook URL with credentials on ${target.name}`, () => {
    it("sends them as Basic auth; no log line, delivery error or action-log line holds them", async () => {
      const lines: Array<string> = []
      const capture = Logger.make(({ annotations, message }) => {
        lines.push(`${String(message)} ${JSON.stringify(Object.fromEntries(annotations))}`)
      })
      const app = ManagedRuntime.make(
        Http.AppLive.pipe(
          Layer.provideMerge(target.layer),
          Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
            new Map(Object.entries({ BUNDLES_POLL_SECONDS: "0.2", BUNDLES_WEBHOOK_ALLOW_PRIVATE: "1" }))
          ))),
          Layer.provide(Logger.replace(Logger.defaultLogger, capture)),
          Layer.provide(Logger.minimumLogLevel(LogLevel.Info))
        )
      )
      const authorizations: Array<string | undefined> = []
      const server = http.createServer((request, response) => {
        authorizations.push(request.headers.authorization)
        request.resume()
        request.on("end", () => void response.writeHead(503).end())
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      try {
        const port = (server.address() as AddressInfo).port
        const url = `http://hook%40user:s3cret-p%40ss@127.0.0.1:${port}/hooks`
        const account = await accountWithWebhook(app, url)
        await fund(app, account, 100n)
        await until("the attempt", attempted(app, account))
        assert.deepStrictEqual(authorizations, [`Basic ${Buffer.from("hook@user:s3cret-p@ss").toString("base64")}`])
        const [row] = await events(app, account)
        assert.match(row!.last_error ?? "", /503/)
        await app.runPromise(Effect.flatMap(OperatorActions.OperatorActions, (log) =>
          log.record({
            actor: { kind: "token" },
            action: "account.update",
            targetKind: "account",
            targetId: account,
            summary: `webhook URL ${url}`,
            detail: { webhook_url: url }
          })))
        const logged = await app.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ summary: string; detail: unknown }>`
            SELECT summary, detail FROM operator_actions WHERE target_id = ${String(account)}
          `)
        )
        assert.deepStrictEqual(logged.map((line) => line.summary), [`webhook URL http://***@127.0.0.1:${port}/hooks`])
        const written = [...lines, row!.last_error, JSON.stringify(logged)].join("\n")
        assert.include(written, "webhook attempt failed", "the failure was logged")
        assert.notInclude(written, "s3cret")
        assert.notInclude(written, "p%40ss")
      } finally {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
        await app.dispose()
      }
    }, 60_000)
  })
}
