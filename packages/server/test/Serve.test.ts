import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as https from "node:https"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Serve from "../src/Serve.js"

const freePort = Effect.async<number>((resume) => {
  const probe = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

describe("serve", () => {
  it.live(
    "stopping the server (SIGTERM, SIGINT) refuses new connections and answers the requests in flight",
    () =>
      Effect.gen(function*() {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-shutdown-"))
        const port = yield* freePort
        const config = ConfigProvider.fromMap(new Map([["BUNDLES_DATA_DIR", dataDir], ["BUNDLES_ADMIN_TOKEN", "t"]]))
        const server = yield* Layer.launch(Serve.layer({ port: Option.some(port), host: Option.none(), demo: true }))
          .pipe(
            Effect.withConfigProvider(config),
            Effect.fork
          )
        const base = `http://127.0.0.1:${port}`
        const key = yield* Effect.promise(async () => {
          for (let i = 0; i < 200; i++) {
            const file = path.join(dataDir, "demo-api-key")
            if (fs.existsSync(file)) {
              const key = fs.readFileSync(file, "utf8").trim()
              if ((await fetch(`${base}/api/v1/balance`, { headers: { "x-api-key": key } }).catch(() => null))?.ok) {
                return key
              }
            }
            await new Promise((r) => setTimeout(r, 50))
          }
          throw new Error("server did not start")
        })
        // An order whose body is still arriving when the server is told to stop.
        const body = JSON.stringify({ bundle_id: 1, phone_number: "0241000001", reference: "shutdown-1" })
        const socket = net.connect(port, "127.0.0.1")
        const answer = new Promise<string>((resolve) => {
          let text = ""
          socket.on("data", (chunk) => text += chunk)
          socket.on("close", () => resolve(text))
        })
        socket.write(
          `POST /api/v1/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${key}\r\n` +
            `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`
        )
        yield* Effect.sleep("200 millis")
        const stopping = yield* Effect.fork(Fiber.interrupt(server))
        yield* Effect.sleep("200 millis")
        // New connections are refused while the one in flight is still served.
        const refused = yield* Effect.promise(() =>
          fetch(`${base}/api/v1/balance`).then(() => "served", () => "refused")
        )
        assert.strictEqual(refused, "refused")
        socket.write(body.slice(10))
        // `answer` settles when the server closes the connection after answering.
        const response = yield* Effect.promise(() => answer)
        assert.match(response, /^HTTP\/1\.1 200 /)
        assert.match(response, /"status":"successful"/)
        yield* Fiber.join(stopping)
        // The port is free again and the data directory is unlocked.
        assert.isFalse(fs.existsSync(path.join(dataDir, "server.pid")))
        fs.rmSync(dataDir, { recursive: true, force: true })
      }),
    { timeout: 60_000 }
  )

  it.live("serves HTTPS with TLS_CERT and TLS_KEY", () =>
    Effect.gen(function*() {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-tls-"))
      const port = yield* freePort
      const fixture = (name: string) => new URL(`fixtures/${name}`, import.meta.url).pathname
      const config = ConfigProvider.fromMap(
        new Map([
          ["BUNDLES_DATA_DIR", dataDir],
          ["BUNDLES_ADMIN_TOKEN", "t"],
          ["TLS_CERT", fixture("tls-cert.pem")],
          ["TLS_KEY", fixture("tls-key.pem")]
        ])
      )
      const server = yield* Layer.launch(Serve.layer({ port: Option.some(port), host: Option.none(), demo: false }))
        .pipe(
          Effect.withConfigProvider(config),
          Effect.fork
        )
      const get = () =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const request = https.get({
            host: "127.0.0.1",
            port,
            path: "/api/v1/balance",
            ca: fs.readFileSync(fixture("tls-cert.pem"))
          }, (response) => {
            let body = ""
            response.on("data", (chunk) => body += chunk)
            response.on("end", () => resolve({ status: response.statusCode!, body }))
          })
          request.on("error", reject)
        })
      const answer = yield* Effect.promise(async () => {
        for (let i = 0; i < 200; i++) {
          const result = await get().catch(() => null)
          if (result !== null) return result
          await new Promise((r) => setTimeout(r, 50))
        }
        throw new Error("no HTTPS answer")
      })
      assert.strictEqual(answer.status, 401)
      assert.strictEqual(JSON.parse(answer.body).success, false)
      // Plain HTTP on the same port is not served.
      const plain = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/api/v1/balance`).then((r) => r.status, () => "refused")
      )
      assert.notStrictEqual(plain, 401)
      yield* Fiber.interrupt(server)
      fs.rmSync(dataDir, { recursive: true, force: true })
    }), { timeout: 60_000 })

  it.live(
    "answers requests Node refuses itself (oversized headers, garbage) with the JSON envelope",
    () =>
      Effect.gen(function*() {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-limits-"))
        const port = yield* freePort
        const config = ConfigProvider.fromMap(new Map([["BUNDLES_DATA_DIR", dataDir], ["BUNDLES_ADMIN_TOKEN", "t"]]))
        const server = yield* Layer.launch(Serve.layer({ port: Option.some(port), host: Option.none(), demo: false }))
          .pipe(
            Effect.withConfigProvider(config),
            Effect.fork
          )
        const send = (text: string) =>
          new Promise<string>((resolve) => {
            const socket = net.connect(port, "127.0.0.1", () => socket.write(text))
            let answer = ""
            socket.on("data", (chunk) => answer += chunk)
            socket.on("close", () => resolve(answer))
            socket.on("error", () => resolve(answer))
          })
        const ready = yield* Effect.promise(async () => {
          for (let i = 0; i < 200; i++) {
            if (await fetch(`http://127.0.0.1:${port}/api/v1/balance`).then(() => true, () => false)) return true
            await new Promise((r) => setTimeout(r, 50))
          }
          return false
        })
        assert.isTrue(ready)
        const huge = yield* Effect.promise(() =>
          send(`GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nx-padding: ${"a".repeat(20_000)}\r\n\r\n`)
        )
        assert.match(huge, /^HTTP\/1\.1 431 /)
        const hugeId = /\r\nx-request-id: (\S+)\r\n/.exec(huge)?.[1]
        assert.isString(hugeId)
        assert.deepStrictEqual(JSON.parse(huge.slice(huge.indexOf("\r\n\r\n") + 4)), {
          success: false,
          message: "Request headers too large",
          _tag: "HeadersTooLarge",
          code: "headers_too_large",
          request_id: hugeId
        })
        const garbage = yield* Effect.promise(() => send("NOT HTTP AT ALL\r\n\r\n"))
        assert.match(garbage, /^HTTP\/1\.1 400 /)
        assert.strictEqual(JSON.parse(garbage.slice(garbage.indexOf("\r\n\r\n") + 4)).success, false)
        yield* Fiber.interrupt(server)
        fs.rmSync(dataDir, { recursive: true, force: true })
      }),
    { timeout: 60_000 }
  )
})
