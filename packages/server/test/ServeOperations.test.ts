/**
 * `serve` as an operator runs it: a busy port named, the admin CLI finding the server through
 * the data directory, traces sent to an OTLP/HTTP receiver, and (on Postgres) one scrape for
 * the whole server under `--workers`.
 */
import { freshDatabase } from "@databundle/core/testing"
import { capturingConsole } from "@databundle/terminal/testing"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Fiber, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Cli from "../src/Cli.js"
import * as Serve from "../src/Serve.js"
import { parseExposition, sample } from "./Exposition.js"
import * as Processes from "./Processes.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "bundles-ops-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** A port something else listens on, for the scope's lifetime. */
const busyPort = Effect.acquireRelease(
  Effect.async<net.Server>((resume) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(Effect.map((server) => (server.address() as net.AddressInfo).port))

const freePort = Effect.async<number>((resume) => {
  const probe = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as net.AddressInfo
    probe.close(() => resume(Effect.succeed(port)))
  })
})

/** Runs `bundles-server ...args` in-process with `env` as its whole environment. */
const runCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.gen(function*() {
    const { console: capturing, stderr, stdout } = yield* capturingConsole
    const exit = yield* Cli.run(["node", "bundles-server", ...args]).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.withConsole(capturing),
      Effect.exit
    )
    return { stdout: stdout.join("\n"), stderr: stderr.join("\n"), exit }
  })

/** A node:http receiver of OTLP/HTTP that keeps every JSON body POSTed to it. */
const otlpReceiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly bodies: Array<any>; readonly server: http.Server }>((resume) => {
    const bodies: Array<any> = []
    const server = http.createServer((request, response) => {
      let text = ""
      request.on("data", (chunk) => text += chunk)
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/traces") bodies.push(JSON.parse(text))
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, bodies, server }))
    })
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

/** Every span of the OTLP/JSON bodies received, with its attributes as a plain record. */
const spansOf = (bodies: ReadonlyArray<any>) =>
  bodies.flatMap((body) =>
    body.resourceSpans.flatMap((resource: any) =>
      resource.scopeSpans.flatMap((scope: any) =>
        scope.spans.map((span: any) => ({
          name: span.name as string,
          traceId: span.traceId as string,
          service: resource.resource.attributes.find((a: any) => a.key === "service.name")?.value.stringValue,
          attributes: Object.fromEntries(
            span.attributes.map((a: any) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.boolValue])
          ) as Record<string, unknown>
        }))
      )
    )
  )

describe("serve, operated", () => {
  it.scopedLive("on a busy port says which port and why, and exits 1", () =>
    Effect.gen(function*() {
      const port = yield* busyPort
      const dir = yield* tempDir
      const error = yield* Effect.flip(
        Processes.start({ BUNDLES_DATA_DIR: dir, BUNDLES_ADMIN_TOKEN: "t" }, ["--port", String(port)])
      )
      assert.include(error.message, "server exited (1)")
      assert.include(
        error.message,
        `bundles-server: Cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE), probably by another server. ` +
          "Stop it, or choose another port with --port or PORT."
      )
      assert.notInclude(error.message, "ServeError")
    }), 60_000)

  it.scopedLive(
    "the admin CLI finds a local server on any port through the data directory",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        // No token in the environment: the server writes one into the data directory, and the CLI reads it there.
        const env = { BUNDLES_DATA_DIR: dir }
        const stopped = yield* Effect.scoped(Effect.gen(function*() {
          const server = yield* Processes.start(env)
          const address = JSON.parse(fs.readFileSync(path.join(dir, "server.json"), "utf8"))
          assert.strictEqual(address.url, server.url)
          assert.strictEqual(address.pid, server.child.pid)
          const found = yield* runCli(["admin", "accounts", "list", "--json"], env)
          assert.isTrue(Exit.isSuccess(found.exit), found.stderr)
          assert.deepStrictEqual(JSON.parse(found.stdout).accounts, [])
          return server
        }))
        // A clean stop removes the address, and a CLI without one says how to name the server.
        assert.strictEqual(stopped.child.exitCode, 0)
        assert.isFalse(fs.existsSync(path.join(dir, "server.json")))
        const closed = yield* freePort
        const missing = yield* runCli(["admin", "accounts", "list", "--url", `http://127.0.0.1:${closed}`], env)
        assert.isTrue(Exit.isFailure(missing.exit))
        assert.strictEqual(
          missing.stderr,
          `Cannot reach the server at http://127.0.0.1:${closed} (ECONNREFUSED); ` +
            "pass --url or set BUNDLES_ADMIN_URL to the server's address"
        )
      }),
    90_000
  )

  it.scopedLive(
    "sends traces over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, with request ids and order numbers",
    () =>
      Effect.gen(function*() {
        const receiver = yield* otlpReceiver
        const dir = yield* tempDir
        const port = yield* freePort
        const config = ConfigProvider.fromMap(
          new Map([
            ["BUNDLES_DATA_DIR", dir],
            ["BUNDLES_ADMIN_TOKEN", "t"],
            ["OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url],
            ["OTEL_SERVICE_NAME", "bundles-test"],
            ["OTEL_BSP_SCHEDULE_DELAY", "100"]
          ])
        )
        const server = yield* Layer.launch(Serve.layer({ port: Option.some(port), host: Option.none(), demo: true }))
          .pipe(
            Effect.withConfigProvider(config),
            Effect.fork
          )
        const base = `http://127.0.0.1:${port}`
        const keyFile = path.join(dir, "demo-api-key")
        const order = yield* Effect.promise(async () => {
          for (let i = 0; i < 600; i++) {
            if (fs.existsSync(keyFile)) {
              const key = fs.readFileSync(keyFile, "utf8").trim()
              const response = await fetch(`${base}/api/v1/orders`, {
                method: "POST",
                headers: { "x-api-key": key, "content-type": "application/json" },
                body: JSON.stringify({ bundle_id: 1, phone_number: "0241000001", reference: "trace-1" })
              }).catch(() => null)
              if (response?.ok) {
                return { id: response.headers.get("x-request-id")!, number: (await response.json()).order.order_number }
              }
            }
            await new Promise((r) => setTimeout(r, 100))
          }
          throw new Error("server did not start")
        })
        const spans = yield* Effect.promise(async () => {
          for (let i = 0; i < 100; i++) {
            const found = spansOf(receiver.bodies)
            if (found.some((span) => span.attributes.request_id === order.id)) return found
            await new Promise((r) => setTimeout(r, 100))
          }
          return spansOf(receiver.bodies)
        })
        const request = spans.find((span) => span.attributes.request_id === order.id)
        assert.isDefined(request, `no span with request_id ${order.id}: ${JSON.stringify(spans.map((s) => s.name))}`)
        assert.strictEqual(request!.name, "http.server POST")
        assert.strictEqual(request!.service, "bundles-test")
        assert.strictEqual(String(request!.attributes["http.response.status_code"]), "200")
        // The route is named as the router names it, though the gateway called the handler itself.
        assert.strictEqual(request!.attributes["http.route"], "/api/v1/orders")
        // The order number is on a span of the same request's trace.
        assert.isTrue(
          spans.some((span) => span.traceId === request!.traceId && span.attributes.order_number === order.number),
          JSON.stringify(spans.filter((span) => span.traceId === request!.traceId))
        )
        // No key or token travels in a span.
        const key = fs.readFileSync(keyFile, "utf8").trim()
        assert.notInclude(JSON.stringify(receiver.bodies), key)
        yield* Fiber.interrupt(server)
      }),
    90_000
  )
})

const databaseUrl = process.env.TEST_DATABASE_URL

describe.skipIf(!databaseUrl)("serve --workers 2, scraped", () => {
  it.scopedLive(
    "answers /metrics for the whole server, on the main port and on --metrics-port",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const metricsPort = yield* freePort
        const server = yield* Processes.start({
          DATABASE_URL: yield* freshDatabase(databaseUrl!),
          BUNDLES_DATA_DIR: dir,
          BUNDLES_ADMIN_TOKEN: "t"
        }, ["--workers", "2", "--metrics-port", String(metricsPort)])
        const probes = 40
        yield* Effect.promise(() =>
          Promise.all(Array.from({ length: probes }, () => fetch(`${server.url}/healthz`).then((r) => r.text())))
        )
        const count = (text: string) =>
          sample(parseExposition(text), "bundles_http_request_duration_seconds_count", {
            route: "/healthz",
            status: "200"
          })
        const main = yield* Effect.promise(() =>
          fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer t" } }).then((r) => r.text())
        )
        assert.strictEqual(count(main), probes, main)
        const own = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()))
        assert.strictEqual(count(own), probes)
        // Figures of the database are counted once, not once per worker.
        assert.strictEqual(sample(parseExposition(own), "bundles_orders", { status: "pending" }), 0)
        assert.include(own, "bundles_orders{status=\"successful\"} 0")
      }),
    120_000
  )
})
