/**
 * The low upstream balance alert end to end: two real server processes chained, the
 * downstream watching its balance at the upstream, an operator's webhook receiver.
 */
import { Webhook } from "@databundle/contract"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import * as Processes from "./Processes.js"
import { admin, call, databaseEnv, databases, eventually, FAST, startUpstream } from "./UpstreamHarness.js"

const SECRET = "whsec_b3BlcmF0b3Itc2VjcmV0LWZvci10ZXN0cy0xMjM0NQ=="

interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A receiver that answers 204 to everything and keeps what it got. */
const receiver = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ url: string; received: Array<Received>; server: http.Server }>((resolve) => {
      const received: Array<Received> = []
      const server = http.createServer((req, res) => {
        let body = ""
        req.on("data", (chunk) => body += chunk)
        req.on("end", () => {
          received.push({ headers: req.headers, body })
          res.writeHead(204).end()
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({ url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/alerts`, received, server }))
    })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/** One sample of the downstream's metrics, or undefined. */
const sample = (base: string, line: string) =>
  Effect.map(call(base, "GET", "/metrics", { admin: true }), (r) => {
    const found = String(r.body).split("\n").find((l) => l.startsWith(`${line} `))
    return found === undefined ? undefined : Number(found.slice(line.length + 1))
  })

for (const database of databases) {
  describe(`low upstream balance alert on ${database.name}`, () => {
    it.scopedLive(
      "is raised once per crossing: a log line, the metrics and one signed operator webhook",
      () =>
        Effect.gen(function*() {
          const operator = yield* receiver
          const upstream = yield* startUpstream(database.url, 100)
          const env = yield* databaseEnv(database.url)
          const down = yield* Processes.start({
            ...env,
            ...FAST,
            BUNDLES_PROVIDER: "upstream",
            BUNDLES_UPSTREAM_NAME: "wholesale",
            BUNDLES_UPSTREAM_URL: `${upstream.server.url}/api/v1`,
            BUNDLES_UPSTREAM_API_KEY: upstream.buyer.key,
            BUNDLES_UPSTREAM_LOW_BALANCE: "50",
            BUNDLES_UPSTREAM_BALANCE_SECONDS: "0.3",
            BUNDLES_OPERATOR_WEBHOOK_URL: operator.url,
            BUNDLES_OPERATOR_WEBHOOK_SECRET: SECRET
          })
          const balance = `bundles_upstream_balance{upstream="wholesale"}`
          const low = `bundles_upstream_balance_low{upstream="wholesale"}`
          yield* eventually("the balance is read", 10, sample(down.url, balance), (v) => v === 100)
          assert.strictEqual(yield* sample(down.url, low), 0)
          const buyer = `/admin/v1/accounts/${upstream.buyer.id}/wallet`

          // Spent down below the threshold: one alert, however many polls see it low.
          yield* admin(upstream.server.url, "POST", `${buyer}/adjust`, { amount: -70, note: "spent" })
          yield* eventually("the alert arrives", 10, Effect.sync(() => operator.received.length), (n) => n === 1)
          yield* eventually("the metric flags it", 10, sample(down.url, low), (v) => v === 1)
          assert.strictEqual(yield* sample(down.url, balance), 30)
          yield* Effect.sleep("1500 millis")
          assert.strictEqual(operator.received.length, 1, "not raised again on every poll")
          const logged = down.output().split("\n").filter((l) => l.includes(`"event":"upstream.balance_low"`))
          assert.strictEqual(logged.length, 1, down.output())
          assert.include(logged[0], `"upstream":"wholesale"`)
          const [alert] = operator.received
          const event = JSON.parse(alert!.body)
          assert.deepInclude(event, { type: "upstream.balance_low", livemode: true })
          assert.deepStrictEqual(event.data, { upstream: "wholesale", balance: 30, threshold: 50 })
          assert.match(event.id, /^evt_/)
          assert.strictEqual(alert!.headers[Webhook.ID_HEADER], event.id)
          assert.strictEqual(alert!.headers[Webhook.EVENT_HEADER], "upstream.balance_low")
          const parsed = Webhook.parseSignatureHeader(String(alert!.headers[Webhook.SIGNATURE_HEADER]))
          assert.isDefined(parsed)
          assert.isTrue(yield* Effect.promise(() => Webhook.verifySignature(SECRET, parsed!, alert!.body)))
          assert.isFalse(
            yield* Effect.promise(() => Webhook.verifySignature(SECRET, parsed!, alert!.body.replace("30", "31")))
          )
          const timestamp = Number(alert!.headers[Webhook.STANDARD_TIMESTAMP_HEADER])
          assert.strictEqual(
            alert!.headers[Webhook.STANDARD_SIGNATURE_HEADER],
            yield* Effect.promise(() => Webhook.standardSignature(SECRET, event.id, timestamp, alert!.body))
          )

          // Topped up: the flag clears and the alert re-arms; the next drop raises it once more.
          yield* admin(upstream.server.url, "POST", `${buyer}/fund`, { amount: 100 })
          yield* eventually("the flag clears", 10, sample(down.url, low), (v) => v === 0)
          assert.strictEqual(operator.received.length, 1)
          yield* admin(upstream.server.url, "POST", `${buyer}/adjust`, { amount: -100, note: "spent again" })
          yield* eventually("the second alert", 10, Effect.sync(() => operator.received.length), (n) => n === 2)
          assert.strictEqual(JSON.parse(operator.received[1]!.body).data.balance, 30)
          assert.notStrictEqual(JSON.parse(operator.received[1]!.body).id, event.id)
        }),
      { timeout: 120_000 }
    )
  })
}
