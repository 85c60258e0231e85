/**
 * The security review's probes, run black-box against the built server as an attacker would
 * run them: other path spellings with a huge body, a flood of bad keys from one address, slow
 * headers and slow bodies, a client that goes away mid-request, and a restart that must not
 * print the demo key again.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"
import * as Wire from "./Wire.js"

const portOf = (url: string) => Number(new URL(url).port)

/** The JSON log lines a server wrote, by request id. */
const logLines = (output: string) =>
  new Map(
    output.split("\n").flatMap((line) => {
      try {
        const entry = JSON.parse(line)
        const id = entry?.annotations?.request_id
        return typeof id === "string" ? [[id, entry.annotations] as const] : []
      } catch {
        return []
      }
    })
  )

describe("the built server under the review's probes", () => {
  it.live(
    "holds: spellings, huge bodies, bad-key floods, slow and vanishing clients, the demo key",
    () =>
      Effect.gen(function*() {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-probe-"))
        const env = { BUNDLES_DATA_DIR: dataDir, BUNDLES_AUTH_FAILURE_LIMIT: "5" }
        const first = yield* Effect.scoped(Effect.gen(function*() {
          const server = yield* Processes.start(env, ["--demo"])
          const port = portOf(server.url)
          const key = fs.readFileSync(path.join(dataDir, "demo-api-key"), "utf8").trim()
          assert.include(server.output(), key, "the first start shows the demo key")
          const headers = { "x-api-key": key, "content-type": "application/json" }

          // Slow clients, started first: they take 10 and 20 seconds to be cut.
          const slowHeaders = yield* Effect.fork(
            Wire.exchange(port, { method: "GET", target: "/api/v1/balance", headless: true })
          )
          const slowBody = yield* Effect.fork(Wire.exchange(port, {
            method: "POST",
            target: "/api/v1/orders",
            headers: { ...headers, "content-length": "100" },
            body: "{\"bundle_id\":"
          }))

          // Other spellings, with a body far past any limit: 404 at once, the body not read. A
          // client still sending when the connection closes may see a reset instead of the
          // answer; the server's log line says what it answered.
          const spellings = ["/API/V1/ORDERS", "/api/v1/%6Frders", "/api/v1//orders", "/api/v1/./orders"]
          for (const spelling of spellings) {
            const res = yield* Wire.exchange(port, {
              method: "POST",
              target: spelling,
              headers,
              endless: { chunk: 16 * 1024, max: 256 * 1024 * 1024 }
            })
            assert.include([404, 0], res.status, `${spelling}: ${res.text}`)
            assert.isBelow(res.bytesSent, 32 * 1024 * 1024, spelling)
          }

          // A flood of bad keys from this address, then the good key and the admin token from it.
          for (let i = 0; i < 30; i++) {
            yield* Wire.exchange(port, {
              method: "GET",
              target: "/api/v1/balance",
              headers: { "x-api-key": `dbk_${i}` }
            })
          }
          const token = fs.readFileSync(path.join(dataDir, "admin-token"), "utf8").trim()
          assert.strictEqual(
            (yield* Wire.exchange(port, { method: "GET", target: "/api/v1/balance", headers })).status,
            200
          )
          const admin = yield* Wire.exchange(port, {
            method: "GET",
            target: "/admin/v1/accounts",
            headers: { authorization: `Bearer ${token}` }
          })
          assert.strictEqual(admin.status, 200)

          // A client that goes away mid-body.
          yield* Wire.exchange(port, {
            method: "POST",
            target: "/api/v1/orders",
            headers: { ...headers, "content-length": "100" },
            body: "{",
            hangUpAfterMs: 300
          })

          const cutHeaders = yield* slowHeaders.await.pipe(Effect.flatMap((exit) => exit))
          assert.strictEqual(cutHeaders.status, 408)
          assert.isAtMost(cutHeaders.elapsedMs, 12_500)
          const cutBody = yield* slowBody.await.pipe(Effect.flatMap((exit) => exit))
          assert.strictEqual(cutBody.status, 408, cutBody.text)
          assert.strictEqual(cutBody.json?._tag, "RequestTimeout")
          assert.isAtMost(cutBody.elapsedMs, 31_000)
          yield* Effect.sleep("300 millis")

          const lines = logLines(server.output())
          for (const spelling of spellings) {
            assert.isTrue([...lines.values()].some((line) => line.path === spelling && line.status === 404), spelling)
          }
          for (const cut of [cutHeaders, cutBody]) {
            const id = cut.headers["x-request-id"]
            assert.isString(id)
            assert.strictEqual(lines.get(id!)?.status, 408, `log line of ${id}`)
          }
          assert.isTrue([...lines.values()].some((line) => line.status === 499), "the vanished client's line")
          assert.notMatch(server.output(), /"logLevel":"ERROR"/)
          return key
        }))

        // A later start says where the key is kept, and does not print it.
        yield* Effect.scoped(Effect.gen(function*() {
          const again = yield* Processes.start(env, ["--demo"])
          assert.notInclude(again.output(), first)
          assert.include(again.output(), path.join(dataDir, "demo-api-key"))
        }))
        fs.rmSync(dataDir, { recursive: true, force: true })
      }),
    { timeout: 90_000 }
  )
})
