/**
 * Many silent connections against the built server with a lowered descriptor limit (256,
 * through `prlimit`): one address holds at most its share, the rest are refused with a 503;
 * the silent ones get their 408 after 10 s and are destroyed, so their descriptors come back
 * although the client never reads nor closes; and `/healthz` from another address answers
 * throughout. A `Transfer-Encoding` Node cannot frame is answered (501), not dropped. On PGlite,
 * and on Postgres when TEST_DATABASE_URL is set.
 */
import { freshDatabase } from "@databundle/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"
import * as Wire from "./Wire.js"

const DESCRIPTORS = 256

/** `GET /healthz` from 127.0.0.2: its status (0: no answer) and how long it took. */
const probe = (port: number) =>
  Effect.async<{ status: number; ms: number }>((resume) => {
    const started = Date.now()
    const request = http.get({ host: "127.0.0.1", port, path: "/healthz", localAddress: "127.0.0.2", agent: false }, (
      response
    ) => {
      response.resume()
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, ms: Date.now() - started })))
    })
    request.setTimeout(2_000, () => request.destroy())
    request.on("error", () => resume(Effect.succeed({ status: 0, ms: Date.now() - started })))
  })

/** Connections that send nothing and read nothing (their data is never consumed). */
const silent = (port: number, count: number) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      Promise.all(Array.from({ length: count }, () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect({ host: "127.0.0.1", port, localAddress: "127.0.0.1" })
          socket.on("error", () => {})
          socket.once("connect", () => {
            socket.pause()
            resolve(socket)
          })
        })))
    ),
    (sockets) => Effect.sync(() => sockets.forEach((socket) => socket.destroy()))
  )

/** How many descriptors the process has open. */
const descriptors = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).length

const targets = [
  { name: "pglite", env: Effect.succeed({}) },
  ...(process.env.TEST_DATABASE_URL
    ? [{
      name: "postgres",
      env: Effect.map(freshDatabase(process.env.TEST_DATABASE_URL), (url) => ({ DATABASE_URL: url }))
    }]
    : [])
]

for (const target of targets) {
  describe(`connections against the built server on ${target.name}`, () => {
    it.scopedLive(
      "300 silent clients from one address: capped, cut after 10 s with their descriptors back; /healthz answers",
      () =>
        Effect.gen(function*() {
          const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-connections-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
          const server = yield* Processes.start({ ...(yield* target.env), BUNDLES_DATA_DIR: dataDir }, [], {
            descriptors: DESCRIPTORS
          })
          const port = Number(new URL(server.url).port)
          const pid = server.child.pid!
          assert.include(fs.readFileSync(`/proc/${pid}/limits`, "utf8"), `Max open files            ${DESCRIPTORS}`)
          const baseline = descriptors(pid)

          // A Transfer-Encoding Node cannot frame is answered in the envelope, not dropped.
          const framed = yield* Wire.exchange(port, {
            method: "POST",
            target: "/api/v1/orders",
            headers: { "transfer-encoding": "xchunked", "content-type": "application/json" },
            body: "5\r\nhello\r\n0\r\n\r\n"
          })
          assert.strictEqual(framed.status, 501, framed.text)
          assert.strictEqual(framed.json.code, "not_implemented")
          assert.isString(framed.json.request_id)

          // Health probes from another address, every 200 ms, for as long as the flood lasts.
          const probes: Array<{ status: number; ms: number; at: number }> = []
          const started = Date.now()
          const prober = yield* Effect.fork(Effect.forever(
            Effect.zipRight(
              Effect.flatMap(probe(port), (result) =>
                Effect.sync(() => probes.push({ ...result, at: Date.now() - started }))),
              Effect.sleep("200 millis")
            )
          ))
          const flood = yield* silent(port, 300)
          assert.strictEqual(flood.length, 300)
          yield* Effect.sleep("1 second")
          // One address holds at most half of what the limit leaves for connections (128 - 0.5).
          const held = descriptors(pid) - baseline
          assert.isAtMost(held, 64 + 8, `descriptors held by the flood: ${held}`)
          // A refused connection is told why.
          const refused = yield* Wire.exchange(port, { method: "GET", target: "/healthz" })
          assert.strictEqual(refused.status, 503, refused.text)
          assert.strictEqual(refused.json.code, "too_many_connections")
          // After the head timeout (10 s) the silent ones have had their 408 and are gone.
          yield* Effect.sleep("11 seconds")
          const after = descriptors(pid) - baseline
          assert.isAtMost(after, 8, `descriptors still held: ${after}`)
          yield* Fiber.interrupt(prober)
          const failed = probes.filter((p) =>
            p.status !== 200 || p.ms > 1_000
          )
          assert.isAtLeast(probes.length, 30)
          assert.deepStrictEqual(failed, [], "every health probe answered within a second")
          // And the address is served again.
          assert.strictEqual((yield* Wire.exchange(port, { method: "GET", target: "/healthz" })).status, 200)
          assert.notInclude(server.output(), "EMFILE")
        }),
      { timeout: 120_000 }
    )
  })
}
