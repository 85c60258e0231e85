/**
 * A fake of DT One's DVS API over real HTTP, built from its public reference: HTTP Basic
 * credentials, Ghana's fixed-value products, transactions created and confirmed in one call
 * (`POST /async/transactions`, `auto_confirm`) under an `external_id`, transactions by id and by
 * `external_id`, and balances. Transactions start CONFIRMED and a second later become COMPLETED,
 * or DECLINED for numbers ending 0000. It accepts a second transaction under one `external_id`,
 * so a double purchase shows as two. `faults` queues what the next creations get.
 */
import { Effect } from "effect"
import * as http from "node:http"

export const API_KEY = "dtone-key"
export const API_SECRET = "dtone-secret-never-logged"

/** What a queued creation gets. */
export type Fault = "429" | "500-after" | "refuse"

export interface FakeTransaction {
  readonly id: number
  readonly external_id: string
  readonly product_id: number
  readonly mobile_number: string
  readonly createdAt: number
  status: string
}

const data = (mb: number) => [{ type: "DATA", unit: "MB", amount: { base: mb } }]

const products = [
  { id: 9001, name: "MTN Ghana 1GB", type: "FIXED_VALUE_RECHARGE", country: "GHA", mb: 1024, ghs: 5 },
  { id: 9002, name: "MTN Ghana 2GB", type: "FIXED_VALUE_RECHARGE", country: "GHA", mb: 2048, ghs: 10 },
  { id: 9010, name: "MTN Ghana Airtime 5", type: "FIXED_VALUE_RECHARGE", country: "GHA", mb: 0, ghs: 5 },
  { id: 9900, name: "MTN Nigeria 1GB", type: "FIXED_VALUE_RECHARGE", country: "NGA", mb: 1024, ghs: 0 }
].map((p) => ({
  id: p.id,
  name: p.name,
  description: p.mb > 0 ? `${p.mb} MB data, 30 days` : "Airtime",
  type: p.type,
  service: { id: 1, name: "Mobile" },
  operator: {
    id: p.country === "GHA" ? 2021 : 3000,
    name: p.country === "GHA" ? "MTN Ghana" : "MTN Nigeria",
    country: { iso_code: p.country }
  },
  destination: p.country === "GHA"
    ? { amount: p.ghs, unit: "GHS", unit_type: "CURRENCY" }
    : { amount: 300, unit: "NGN" },
  benefits: p.mb > 0 ? data(p.mb) : [{ type: "TALKTIME", unit: "GHS", amount: { base: p.ghs } }],
  country: p.country
}))

/** Starts the fake on a free loopback port; stopped with the scope. */
export const start = Effect.acquireRelease(
  Effect.promise(async () => {
    const transactions: Array<FakeTransaction> = []
    const faults: Array<Fault> = []
    let ids = 70_000
    const basic = `Basic ${Buffer.from(`${API_KEY}:${API_SECRET}`).toString("base64")}`
    const server = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        const reply = (status: number, value: unknown) =>
          response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
        const error = (status: number, code: number, message: string) => reply(status, { errors: [{ code, message }] })
        if (request.headers.authorization !== basic) return error(401, 1000401, "Unauthorized")
        const url = new URL(request.url ?? "/", "http://fake")
        const view = (t: FakeTransaction) => {
          if (t.status === "CONFIRMED" && Date.now() - t.createdAt > 1000) {
            t.status = t.mobile_number.endsWith("0000") ? "DECLINED" : "COMPLETED"
          }
          return {
            id: t.id,
            external_id: t.external_id,
            product: { id: t.product_id },
            credit_party_identifier: { mobile_number: t.mobile_number },
            status: {
              id: t.status === "COMPLETED" ? 70000 : 20000,
              message: t.status,
              class: { id: 0, message: t.status }
            }
          }
        }
        if (request.method === "GET" && url.pathname === "/v1/products") {
          const country = url.searchParams.get("country_iso_code")
          const page = Number(url.searchParams.get("page") ?? "1")
          const list = products.filter((p) => p.country === country && p.type === url.searchParams.get("type"))
          return reply(200, page === 1 ? list.map(({ country: _, ...p }) => p) : [])
        }
        if (request.method === "GET" && url.pathname === "/v1/balances") {
          return reply(200, [{ id: 1, available: 250.75, unit: "GHS", unit_type: "CURRENCY" }])
        }
        if (request.method === "GET" && url.pathname === "/v1/transactions") {
          const wanted = url.searchParams.get("external_id")
          return reply(200, transactions.filter((t) => t.external_id === wanted).map(view))
        }
        const one = /^\/v1\/transactions\/(\d+)$/.exec(url.pathname)
        if (request.method === "GET" && one) {
          const t = transactions.find((t) => t.id === Number(one[1]))
          return t === undefined ? error(404, 1003404, "Transaction not found") : reply(200, view(t))
        }
        if (request.method === "POST" && url.pathname === "/v1/async/transactions") {
          const json = JSON.parse(body || "{}")
          const fault = faults.shift()
          if (fault === "429") return error(429, 1000429, "Too many requests")
          if (fault === "refuse") return error(400, 1003002, "Insufficient balance")
          if (!products.some((p) => p.id === json.product_id) || json.auto_confirm !== true) {
            return error(400, 1003001, "Invalid product")
          }
          const t: FakeTransaction = {
            id: ++ids,
            external_id: json.external_id,
            product_id: json.product_id,
            mobile_number: json.credit_party_identifier?.mobile_number ?? "",
            createdAt: Date.now(),
            status: "CONFIRMED"
          }
          transactions.push(t)
          if (fault === "500-after") return error(503, 1000503, "Service unavailable")
          return reply(201, view(t))
        }
        return error(404, 1000404, "No route")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, server, transactions, faults }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)
