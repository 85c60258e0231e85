/**
 * A fake of Reloadly's top-up API over real HTTP, built from its public reference: the OAuth
 * token endpoint (client credentials, tokens that expire), Ghana's operators with fixed-amount
 * data bundles, top-ups with a `customIdentifier`, a transaction's status, the transactions
 * report filtered by `customIdentifier`, and the account balance. It does not refuse a second
 * top-up under one `customIdentifier`, so a test sees any double purchase as two transactions.
 * Numbers ending 9999 stay PENDING for a second, then succeed; numbers ending 0000 stay PENDING,
 * then are REFUNDED. `faults` queues what the next top-ups get.
 */
import { Effect } from "effect"
import * as http from "node:http"

export const CLIENT_ID = "reloadly-client-id"
export const CLIENT_SECRET = "reloadly-client-secret-never-logged"
export const AUDIENCE = "https://topups-sandbox.reloadly.com"

/** What a queued top-up gets: a 429, a 500 before anything is made, a 500 after the top-up is made, a refusal. */
export type Fault = "429" | "500-before" | "500-after" | "refuse"

export interface FakeTransaction {
  readonly transactionId: number
  readonly operatorId: number
  readonly amount: number
  readonly useLocalAmount: boolean
  readonly customIdentifier: string
  readonly recipient: string
  readonly createdAt: number
  status: string
}

const operators = [
  {
    operatorId: 643,
    name: "MTN Ghana Data",
    bundle: false,
    data: true,
    denominationType: "FIXED",
    destinationCurrencyCode: "GHS",
    senderCurrencyCode: "GHS",
    localFixedAmounts: [5, 10, 20],
    localFixedAmountsDescriptions: { "5.00": "1GB, 30 days", "10.00": "2GB, 30 days", "20.00": "5 GB, 30 days" },
    fixedAmounts: [5, 10, 20],
    fixedAmountsDescriptions: {}
  },
  {
    operatorId: 645,
    name: "AirtelTigo Ghana Data",
    bundle: true,
    data: true,
    denominationType: "FIXED",
    destinationCurrencyCode: "GHS",
    senderCurrencyCode: "GHS",
    localFixedAmounts: [4.5],
    localFixedAmountsDescriptions: { "4.50": "1GB" },
    fixedAmounts: [4.5],
    fixedAmountsDescriptions: {}
  },
  {
    // Airtime in any amount: not a data bundle, not synced.
    operatorId: 150,
    name: "MTN Ghana",
    bundle: false,
    data: false,
    denominationType: "RANGE",
    destinationCurrencyCode: "GHS",
    senderCurrencyCode: "GHS",
    localFixedAmounts: [],
    localFixedAmountsDescriptions: {}
  }
]

/** Starts the fake on a free loopback port; stopped with the scope. */
export const start = (
  options: {
    readonly tokenSeconds: number
    readonly balance?: number
    /** The share of calls (besides the token's) that fail at random: 429, 5xx, or a top-up made whose answer is lost. */
    readonly chaos?: number
  }
) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transactions: Array<FakeTransaction> = []
      const faults: Array<Fault> = []
      const tokens = new Map<string, number>()
      const calls: Array<string> = []
      let issued = 0
      let balance = options.balance ?? 1000
      let ids = 5000
      // A fixed sequence, so a failing run can be repeated.
      let seed = 20_26
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
        return seed / 2_147_483_648
      }
      let chaotic = 0
      const server = http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => {
          const reply = (status: number, value: unknown, headers: Record<string, string> = {}) =>
            response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value))
          const error = (status: number, errorCode: string | null, message: string) =>
            reply(status, { timeStamp: new Date().toISOString(), message, path: request.url, errorCode, details: [] })
          const url = new URL(request.url ?? "/", "http://fake")
          calls.push(`${request.method} ${url.pathname}`)
          if (request.method === "POST" && url.pathname === "/oauth/token") {
            const json = JSON.parse(body || "{}")
            if (
              json.client_id !== CLIENT_ID || json.client_secret !== CLIENT_SECRET ||
              json.grant_type !== "client_credentials" || json.audience !== AUDIENCE
            ) {
              return error(401, "INVALID_CREDENTIALS", "Access Denied")
            }
            const token = `token-${++issued}`
            tokens.set(token, Date.now() + options.tokenSeconds * 1000)
            return reply(200, {
              access_token: token,
              scope: "send-topups read-operators",
              expires_in: options.tokenSeconds,
              token_type: "Bearer"
            })
          }
          const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
          const until = bearer === undefined ? undefined : tokens.get(bearer)
          if (until === undefined || until < Date.now()) {
            return error(401, "TOKEN_EXPIRED", "Full authentication is required to access this resource")
          }
          if (request.headers.accept !== "application/com.reloadly.topups-v1+json") {
            return error(406, null, "Not acceptable")
          }
          if (options.chaos !== undefined && random() < options.chaos) {
            chaotic++
            const roll = random()
            if (roll < 0.3) return error(429, null, "Too many requests")
            if (roll < 0.6 || request.method !== "POST" || url.pathname !== "/topups") {
              return error(503, null, "Service unavailable")
            }
            faults.unshift("500-after")
          }
          const settle = (t: FakeTransaction) => {
            if (t.status === "PENDING" && Date.now() - t.createdAt > 1000) {
              t.status = t.recipient.endsWith("0000") ? "REFUNDED" : "SUCCESSFUL"
              if (t.status === "REFUNDED") balance += t.amount
            }
            return t
          }
          const view = (t: FakeTransaction) => ({
            transactionId: t.transactionId,
            status: settle(t).status,
            operatorTransactionId: null,
            customIdentifier: t.customIdentifier,
            recipientPhone: t.recipient,
            countryCode: "GH",
            operatorId: t.operatorId,
            requestedAmount: t.amount,
            requestedAmountCurrencyCode: "GHS",
            deliveredAmount: t.amount,
            deliveredAmountCurrencyCode: "GHS",
            transactionDate: new Date(t.createdAt).toISOString()
          })
          if (request.method === "GET" && url.pathname === "/operators/countries/GH") return reply(200, operators)
          const operator = /^\/operators\/(\d+)$/.exec(url.pathname)
          if (request.method === "GET" && operator) {
            const found = operators.find((o) => o.operatorId === Number(operator[1]))
            return found === undefined ? error(404, "OPERATOR_NOT_FOUND", "Operator not found") : reply(200, found)
          }
          if (request.method === "GET" && url.pathname === "/accounts/balance") {
            return reply(200, { balance, currencyCode: "GHS", currencyName: "Ghanaian Cedi", updatedAt: "now" })
          }
          if (request.method === "GET" && url.pathname === "/topups/reports/transactions") {
            const wanted = url.searchParams.get("customIdentifier")
            const content = transactions.filter((t) => wanted === null || t.customIdentifier === wanted).map(view)
            return reply(200, { content, totalElements: content.length })
          }
          const status = /^\/topups\/(\d+)\/status$/.exec(url.pathname)
          if (request.method === "GET" && status) {
            const t = transactions.find((t) => t.transactionId === Number(status[1]))
            return t === undefined
              ? error(404, null, "Airtime transaction not found")
              : reply(200, { code: null, message: null, status: settle(t).status, transaction: view(t) })
          }
          if (request.method === "POST" && url.pathname === "/topups") {
            const json = JSON.parse(body || "{}")
            const fault = faults.shift()
            if (fault === "429") return error(429, null, "Too many requests")
            if (fault === "500-before") return error(500, null, "Internal error")
            if (fault === "refuse") return error(400, "INSUFFICIENT_BALANCE", "Insufficient balance")
            const found = operators.find((o) => o.operatorId === json.operatorId)
            if (found === undefined || !(found.localFixedAmounts as Array<number>).includes(json.amount)) {
              return error(400, "INVALID_AMOUNT_FOR_OPERATOR", "The amount is not one of the operator's")
            }
            if (!/^233\d{9}$/.test(json.recipientPhone?.number ?? "") || json.recipientPhone?.countryCode !== "GH") {
              return error(400, "INVALID_RECIPIENT_PHONE", "Invalid recipient phone")
            }
            if (balance < json.amount) return error(400, "INSUFFICIENT_BALANCE", "Insufficient balance")
            balance -= json.amount
            const recipient: string = json.recipientPhone.number
            const t: FakeTransaction = {
              transactionId: ++ids,
              operatorId: json.operatorId,
              amount: json.amount,
              useLocalAmount: json.useLocalAmount === true,
              customIdentifier: json.customIdentifier,
              recipient,
              createdAt: Date.now(),
              status: recipient.endsWith("9999") || recipient.endsWith("0000") ? "PENDING" : "SUCCESSFUL"
            }
            transactions.push(t)
            // The top-up is made; its answer is lost.
            if (fault === "500-after") return error(502, null, "Bad gateway")
            return reply(200, view(t))
          }
          return error(404, null, "No route")
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
      return {
        url,
        server,
        transactions,
        faults,
        calls,
        tokensIssued: () => issued,
        /** How many calls the chaos failed. */
        chaotic: () => chaotic,
        /** Every token stops working now, before the client expects it to. */
        expireTokens: () => tokens.forEach((_, key) => tokens.set(key, 0)),
        balance: () => balance
      }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )
