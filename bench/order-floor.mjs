// The floors our POST /api/v1/orders is measured against: the same placement on the same
// kind of database, served two ways, each without our gateway, request log, credentials or
// rate limits.
//
//   node <bundle> --mode raw --port N       # node:http and node-postgres, our placement statement
//   node <bundle> --mode httpapi --port N   # a bare Effect HttpApi endpoint calling Orders.place
//
// `raw` is the database's floor: the very statement `Orders.place` sends (captured from one
// order placed through it at start), sent by node-postgres as the same named statement with
// each order's values, from a plain node:http handler. `httpapi` is the framework's and the
// domain's: one HttpApi endpoint with the contract's payload and answer, whose handler is
// `Orders.place` itself. Both seed their database (DATABASE_URL, empty) with
// examples/catalog.json and one funded account, take the body's phone number (every order
// buys the catalogue's first bundle, whatever the body's bundle_id: the raw statement was
// captured for that one), print "listening on http://…" and stop on SIGINT/SIGTERM.
//
// It imports the workspace's sources, so it runs bundled: bench/suite.mjs bundles it with
// esbuild (`orderFloorBundle` there).
import { Catalog as CatalogContract, Order, Phone, ResellerApi } from "@databundle/contract"
import { Accounts, Catalog, Fulfillment, Migrations, Orders, Prepared, Tokens, Wallet } from "@databundle/core"
import { Postgres } from "@databundle/sql-pg"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { parseArgs } from "node:util"
import pg from "pg"

const { values: opts } = parseArgs({
  options: {
    mode: { type: "string", default: "raw" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    catalog: { type: "string", default: path.resolve("examples/catalog.json") }
  }
})
if (opts.mode !== "raw" && opts.mode !== "httpapi") {
  console.error(`unknown --mode ${opts.mode} (raw or httpapi)`)
  process.exit(2)
}
const url = process.env.DATABASE_URL
if (url === undefined) {
  console.error("DATABASE_URL (an empty database) is required")
  process.exit(2)
}
const port = Number(opts.port)

// The placement as node-postgres is asked to send it: the first named statement that inserts an order.
let captured
const query = pg.Client.prototype.query
pg.Client.prototype.query = function(config, ...rest) {
  if (
    captured === undefined && typeof config === "object" && config?.name && config.text.includes("INSERT INTO orders")
  ) {
    captured = { name: config.name, text: config.text, values: [...config.values] }
  }
  return query.call(this, config, ...rest)
}

const Domain = Layer.mergeAll(
  Accounts.Accounts.Default,
  Catalog.Catalog.Default,
  Wallet.Wallet.Default,
  Orders.Orders.Default
).pipe(
  Layer.provide(Fulfillment.FulfillmentProvider.Simulator),
  Layer.provideMerge(Postgres.layer({ url: Redacted.make(url), maxConnections: 10, prepare: Prepared.isPrepared })),
  Layer.provide(Layer.setTracerEnabled(false))
)

/** Migrates, imports the catalogue, funds one account and places its first order: the account, bundle and placement. */
const seed = Effect.gen(function*() {
  yield* Migrations.migrate
  const catalog = yield* Catalog.Catalog
  const file = Schema.decodeUnknownSync(CatalogContract.CatalogFile)(JSON.parse(fs.readFileSync(opts.catalog, "utf8")))
  yield* catalog.importFile(file)
  const [network] = yield* catalog.networks
  const [bundle] = (yield* catalog.bundles(network.id, null)).bundles
  const account = yield* (yield* Accounts.Accounts).create({ name: "Order floor", price_group: null })
  yield* (yield* Wallet.Wallet).fund(account.id, { amount: 1_000_000_000_00n, wallet: "main" })
  const first = yield* (yield* Orders.Orders).place(account.id, { bundle_id: bundle.id, phone_number: "0241112233" })
  return { accountId: account.id, bundleId: bundle.id, first }
})

const announce = (address) => console.log(`listening on http://${opts.host}:${address.port}`)

if (opts.mode === "raw") {
  const { first } = await Effect.runPromise(Effect.scoped(Effect.provide(seed, Domain)))
  if (captured === undefined) throw new Error("the placement statement was not seen: is it still a named statement?")
  // Where the first order's own values stand in the statement, so each order can put its own there.
  const { name, text, values } = captured
  const at = (value) => values.flatMap((v, i) => (v === value ? [i] : []))
  const slots = {
    orderNumber: at(first.order.order_number),
    phone: at("0241112233"),
    national: at(Phone.nationalDigits("0241112233")),
    createdAt: values.flatMap((v, i) => (typeof v === "string" && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(v) ? [i] : [])),
    events: [...new Set(values.filter((v) => typeof v === "string" && v.startsWith("evt_")))].map(at)
  }
  for (const [slot, places] of Object.entries(slots)) {
    if (places.length === 0) throw new Error(`the placement statement has no ${slot}`)
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const cedis = (pesewas) => Number(pesewas) / 100
  const server = http.createServer((request, response) => {
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      const { phone_number } = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      const own = [...values]
      const put = (places, value) => places.forEach((i) => (own[i] = value))
      put(slots.orderNumber, Tokens.orderNumber())
      put(slots.phone, phone_number)
      put(slots.national, Phone.nationalDigits(phone_number))
      put(slots.createdAt, new Date().toISOString())
      for (const places of slots.events) put(places, Tokens.eventId())
      pool.query({ name, text, values: own }).then(
        ({ rows: [row] }) => {
          const body = JSON.stringify({
            success: true,
            message: "Order placed successfully",
            order: {
              order_number: row.order_number,
              bundle: row.bundle_label,
              phone_number: row.phone_number,
              amount_paid: cedis(row.amount),
              status: row.status,
              reference: row.reference,
              created_at: row.created_at.toISOString()
            },
            wallet_balance: cedis(row.balance_after)
          })
          response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
          response.end(body)
        },
        (error) => {
          response.writeHead(500, { "content-type": "application/json" })
          response.end(JSON.stringify({ success: false, message: String(error) }))
        }
      )
    })
  })
  server.listen(port, opts.host, () => announce(server.address()))
  const stop = () => server.close(() => pool.end().then(() => process.exit(0)))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
} else {
  const Api = HttpApi.make("floor").add(
    HttpApiGroup.make("orders").add(
      HttpApiEndpoint.post("place", "/orders").setPayload(Order.PlaceOrderPayload).addSuccess(
        ResellerApi.PlaceOrderResponse
      )
    )
  ).prefix("/api/v1")
  const OrdersLive = HttpApiBuilder.group(Api, "orders", (handlers) =>
    Effect.gen(function*() {
      const { accountId, bundleId } = yield* seed
      const orders = yield* Orders.Orders
      return handlers.handle("place", ({ payload }) =>
        orders.place(accountId, { ...payload, bundle_id: bundleId }).pipe(
          Effect.map((placement) => ({
            success: true,
            message: "Order placed successfully",
            order: placement.order,
            wallet_balance: placement.walletBalance
          })),
          Effect.orDie
        ))
    }))
  const ServerLive = Layer.mergeAll(
    // As our server without a trace exporter: no span per request.
    HttpApiBuilder.serve().pipe(HttpMiddleware.withTracerDisabledWhen(() => true)),
    Layer.effectDiscard(HttpServer.addressWith((address) => Effect.sync(() => announce(address))))
  ).pipe(
    Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(OrdersLive))),
    Layer.provide(NodeHttpServer.layer(http.createServer, { port, host: opts.host })),
    Layer.provide(Domain)
  )
  NodeRuntime.runMain(Layer.launch(ServerLive))
}
