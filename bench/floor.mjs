#!/usr/bin/env node
// The floors our server's reads are measured against: a server that does nothing but answer
// GET /api/v1/networks with the same body our server sends, built two ways.
//
//   node bench/floor.mjs --mode httpapi --body FILE --port N   # a bare Effect HttpApi server
//   node bench/floor.mjs --mode raw --body FILE --port N       # node:http and JSON.stringify
//
// `httpapi` is the framework floor: one HttpApi endpoint whose success schema has the shape of
// the contract's NetworksResponse, served by HttpApiBuilder on NodeHttpServer, on the same
// Effect packages as the server, with no middleware. `raw` is what Node alone costs. Both
// print "listening on http://…" once they listen, and stop on SIGINT/SIGTERM.
import * as fs from "node:fs"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const { values: opts } = parseArgs({
  options: {
    mode: { type: "string", default: "httpapi" },
    body: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" }
  }
})
if (opts.body === undefined) {
  console.error("--body FILE (the JSON body of GET /api/v1/networks) is required")
  process.exit(2)
}
const body = JSON.parse(fs.readFileSync(opts.body, "utf8"))
const port = Number(opts.port)

if (opts.mode === "raw") {
  const server = http.createServer((request, response) => {
    if (request.method === "GET" && request.url === "/api/v1/networks") {
      const text = JSON.stringify(body)
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      response.end(text)
    } else {
      response.writeHead(404, { "content-type": "application/json" })
      response.end("{\"success\":false}")
    }
  })
  server.listen(port, opts.host, () => console.log(`listening on http://${opts.host}:${server.address().port}`))
  const stop = () => server.close(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
} else if (opts.mode === "httpapi") {
  // The server's own copies of the Effect packages (the bench has no dependencies of its own).
  const require = createRequire(
    path.join(path.dirname(fileURLToPath(import.meta.url)), "../packages/server/package.json")
  )
  const { Effect, Layer, Schema } = require("effect")
  const { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } = require("@effect/platform")
  const { NodeHttpServer, NodeRuntime } = require("@effect/platform-node")

  const Network = Schema.Struct({
    id: Schema.Int,
    name: Schema.String,
    slug: Schema.String,
    color: Schema.String,
    delivery: Schema.String,
    bundles_count: Schema.Int
  })
  const NetworksResponse = Schema.Struct({ success: Schema.Literal(true), networks: Schema.Array(Network) })
  const Api = HttpApi.make("floor").add(
    HttpApiGroup.make("catalog").add(HttpApiEndpoint.get("networks", "/networks").addSuccess(NetworksResponse))
  ).prefix("/api/v1")
  const CatalogLive = HttpApiBuilder.group(
    Api,
    "catalog",
    (handlers) => handlers.handle("networks", () => Effect.succeed(body))
  )
  const announce = Layer.effectDiscard(
    HttpServer.addressWith((address) =>
      Effect.sync(() => console.log(`listening on http://${opts.host}:${address.port}`))
    )
  )
  const ServerLive = Layer.mergeAll(HttpApiBuilder.serve(), announce).pipe(
    Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(CatalogLive))),
    Layer.provide(NodeHttpServer.layer(http.createServer, { port, host: opts.host }))
  )
  NodeRuntime.runMain(Layer.launch(ServerLive))
} else {
  console.error(`unknown --mode ${opts.mode} (httpapi or raw)`)
  process.exit(2)
}
