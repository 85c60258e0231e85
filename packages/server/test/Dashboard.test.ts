/**
 * The dashboard API end to end over real HTTP, on PGlite and on Postgres: registration,
 * verification, sign-in and its throttling, sessions and CSRF, payments (simulator and manual
 * transfers, credited once under concurrency), keys, buying, the ledger, sign-out and reset.
 */
import { DashboardApi, Session, User } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as http from "node:http"
import {
  adminClient,
  mailed,
  raw,
  type RawOptions,
  type RawResponse,
  resellerClient,
  seedCatalog,
  serverLayer
} from "./Harness.js"

const PREFIX = DashboardApi.DASHBOARD_PREFIX
const PASSWORD = "correct horse battery"

let counter = 0
/** A fresh address per user, so suites on one database never collide. */
const freshEmail = () => `user${Date.now().toString(36)}${(counter++).toString(36)}@example.com`

/** The latest email to an address, as its holder receives it. */
const latestMail = mailed

/** The token in a link's fragment (`#/verify-email?token=...`). */
const tokenOf = (link: string | null) => {
  assert.isNotNull(link)
  const url = new URL(link!)
  assert.strictEqual(url.search, "", "no secret in the query string")
  const match = /[?&]token=([A-Za-z0-9_-]+)/.exec(url.hash)
  assert.isNotNull(match, `a token in the fragment of ${link}`)
  return match![1]!
}

/** A signed-in browser: its cookie and CSRF token. */
interface Browser {
  readonly cookie: string
  readonly csrf: string
  readonly email: string
}

/** A request as the dashboard's page sends it: the cookie, and the CSRF token unless told otherwise. */
const call = (
  browser: Browser | undefined,
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: RawOptions & { readonly csrf?: string | null } = {}
) => {
  const headers: Record<string, string> = { ...options.headers }
  if (browser !== undefined) headers.cookie = `${Session.SESSION_COOKIE}=${browser.cookie}`
  const csrf = options.csrf === undefined ? browser?.csrf : options.csrf
  if (csrf !== null && csrf !== undefined) headers[Session.CSRF_HEADER] = csrf
  return raw(method, `${PREFIX}${path}`, { ...options, headers })
}

/** The typed client derived from the contract, acting as a browser. */
const typedClient = (browser: Browser) =>
  HttpApiClient.make(DashboardApi.DashboardApi, {
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeaders({
      cookie: `${Session.SESSION_COOKIE}=${browser.cookie}`,
      [Session.CSRF_HEADER]: browser.csrf
    }))
  })

const sessionCookie = (setCookie: string | undefined) => {
  assert.isDefined(setCookie, "a Set-Cookie header")
  const match = new RegExp(`${Session.SESSION_COOKIE}=([^;]*)`).exec(setCookie!)
  assert.isNotNull(match)
  return match![1]!
}

const register = (email: string, extra: Record<string, unknown> = {}) =>
  call(undefined, "POST", "/register", {
    body: { name: "Ama Mensah", email, phone: "0241234567", password: PASSWORD, ...extra }
  })

const signIn = (email: string, password = PASSWORD, headers: Record<string, string> = {}) =>
  call(undefined, "POST", "/session", { body: { email, password }, headers })

/** Registers, verifies and signs in a new user. */
const newUser = Effect.gen(function*() {
  const email = freshEmail()
  assert.strictEqual((yield* register(email)).status, 201)
  const token = tokenOf((yield* latestMail(email, "verify_email")).link)
  assert.strictEqual((yield* call(undefined, "POST", "/email/verify", { body: { token } })).status, 200)
  const response = yield* signIn(email)
  assert.strictEqual(response.status, 200, response.text)
  return { cookie: sessionCookie(response.headers["set-cookie"]), csrf: response.json.csrf_token, email } as Browser
})

/** A webhook receiver on 127.0.0.1 answering every request with `status`; it records what it got. */
const receiver = (status: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const hits: Array<{ headers: http.IncomingHttpHeaders; body: string }> = []
      const server = http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => {
          hits.push({ headers: request.headers, body })
          response.writeHead(status).end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const port = (server.address() as { port: number }).port
      return { url: `http://127.0.0.1:${port}/hooks`, hits, server }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

const waitFor = <A>(check: Effect.Effect<A | undefined, never, any>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const found = yield* check
      if (found !== undefined) return found
      yield* Effect.sleep("100 millis")
    }
    return assert.fail("waited 10 s in vain")
  })

const quiet = <A, E, R>(self: Layer.Layer<A, E, R>) =>
  self.pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))

for (const target of targets) {
  describe(`dashboard API on ${target.name}`, () => {
    layer(
      quiet(serverLayer(target, {
        BUNDLES_SIMULATOR_PENDING_SECONDS: "1",
        // Every test signs users up from one address; the access limit has its own test.
        BUNDLES_DASHBOARD_LIMITS: "dashboard=100000,access=100000",
        // Sign-ins "from elsewhere" name their address in X-Forwarded-For.
        BUNDLES_TRUSTED_PROXIES: "127.0.0.1,::1"
      })),
      {
        timeout: 120_000,
        excludeTestServices: true
      }
    )((it) => {
      it.effect("registers, verifies by the emailed link, signs in with a strict HttpOnly cookie", () =>
        Effect.gen(function*() {
          const email = freshEmail()
          const registered = yield* register(email.toUpperCase())
          assert.strictEqual(registered.status, 201, registered.text)
          assert.isTrue(registered.json.success)
          const mail = yield* latestMail(email, "verify_email")
          const token = tokenOf(mail.link)
          assert.include(mail.body, mail.link!)
          // The operator reads the email, never its live link: the token is hidden in both places.
          const { emails } = yield* (yield* adminClient).mailAdmin.list({ urlParams: { to: email } })
          const listed = emails.find((m) => m.kind === "verify_email")!
          assert.strictEqual(listed.link, mail.link!.replace(token, "[hidden]"))
          assert.strictEqual(listed.body, mail.body.replace(token, "[hidden]"))
          assert.notInclude(JSON.stringify(emails), token)

          const early = yield* signIn(email)
          assert.strictEqual(early.status, 403)
          assert.strictEqual(early.json._tag, "EmailNotVerified")

          assert.strictEqual((yield* call(undefined, "POST", "/email/verify", { body: { token } })).status, 200)
          const again = yield* call(undefined, "POST", "/email/verify", { body: { token } })
          assert.strictEqual(again.status, 422)
          assert.isArray(again.json.errors.token)

          const response = yield* signIn(email)
          assert.strictEqual(response.status, 200, response.text)
          const setCookie = response.headers["set-cookie"]!
          assert.match(setCookie, /HttpOnly/i)
          assert.match(setCookie, /SameSite=Strict/i)
          assert.match(setCookie, /Path=\/dashboard\/v1/)
          assert.notMatch(setCookie, /Secure/i, "plain HTTP on loopback: no Secure flag")
          assert.strictEqual(response.headers["cache-control"], "no-store")
          assert.match(response.headers["content-security-policy"]!, /frame-ancestors 'none'/)
          assert.strictEqual(response.json.user.email, email)
          assert.deepStrictEqual(response.json.account.balance, { main: 0, referral: 0, agent: 0 })
          assert.isNull(response.json.account.price_group)
          assert.isString(response.json.csrf_token)

          const browser: Browser = { cookie: sessionCookie(setCookie), csrf: response.json.csrf_token, email }
          const client = yield* typedClient(browser)
          const current = yield* client.dashboardSession.current()
          assert.strictEqual(current.csrf_token, browser.csrf)
          const home = yield* client.dashboardHome.home({ urlParams: {} })
          assert.deepStrictEqual(home.recent_orders, [])
          assert.deepStrictEqual(home.attention.map((a) => a.kind), ["low_balance"])
        }))

      it.effect("answers a known address as a new one and emails it instead; refuses bad fields with 422", () =>
        Effect.gen(function*() {
          const email = freshEmail()
          assert.strictEqual((yield* register(email)).status, 201)
          const second = yield* register(email, { name: "Someone Else" })
          assert.strictEqual(second.status, 201)
          assert.strictEqual((yield* latestMail(email)).kind, "already_registered")

          const bad = yield* call(undefined, "POST", "/register", {
            body: { name: "", email: "not-an-email", phone: "12345", password: "short" }
          })
          assert.strictEqual(bad.status, 422)
          assert.sameMembers(Object.keys(bad.json.errors), ["name", "email", "phone", "password"])
        }))

      it.effect("refuses without a session (401), without or with a wrong CSRF token (403), and API keys", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          assert.strictEqual((yield* call(undefined, "GET", "/home")).status, 401)
          const ended = yield* call({ ...browser, cookie: "x".repeat(43) }, "GET", "/home")
          assert.strictEqual(ended.status, 401)

          const noToken = yield* call(browser, "POST", "/keys", { body: { name: "ci" }, csrf: null })
          assert.strictEqual(noToken.status, 403)
          assert.strictEqual(noToken.json._tag, "Forbidden")
          const other = yield* newUser
          const wrong = yield* call(browser, "POST", "/keys", { body: { name: "ci" }, csrf: other.csrf })
          assert.strictEqual(wrong.status, 403)
          const { keys } = (yield* call(browser, "GET", "/keys")).json
          assert.deepStrictEqual(keys, [], "a refused request created nothing")

          // A key never works on the dashboard, and a session cookie never on the public API.
          const created = (yield* call(browser, "POST", "/keys", { body: { name: "ci" } })).json
          assert.strictEqual((yield* call(undefined, "GET", "/home", { key: created.api_key })).status, 401)
          const viaCookie = yield* raw("GET", "/api/v1/balance", {
            headers: { cookie: `${Session.SESSION_COOKIE}=${browser.cookie}` }
          })
          assert.strictEqual(viaCookie.status, 401)
          const viaCookieAdmin = yield* raw("GET", "/admin/v1/accounts", {
            headers: { cookie: `${Session.SESSION_COOKIE}=${browser.cookie}` }
          })
          assert.strictEqual(viaCookieAdmin.status, 401)
        }))

      it.effect("creates a named key shown once, lists its prefix and last use, revokes it", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const created = yield* call(browser, "POST", "/keys", { body: { name: "Shop website" } })
          assert.strictEqual(created.status, 201)
          assert.strictEqual(created.headers["cache-control"], "no-store")
          const key: string = created.json.api_key
          assert.isTrue(key.startsWith(created.json.key.prefix))
          const listed = (yield* call(browser, "GET", "/keys")).json.keys
          assert.strictEqual(listed.length, 1)
          assert.strictEqual(listed[0].name, "Shop website")
          assert.notInclude(JSON.stringify(listed), key)
          assert.isNull(listed[0].last_used_at)

          const reseller = yield* resellerClient(key)
          yield* reseller.wallet.balance()
          assert.isNotNull((yield* call(browser, "GET", "/keys")).json.keys[0].last_used_at)

          const revoked = yield* call(browser, "DELETE", `/keys/${created.json.key.id}`)
          assert.strictEqual(revoked.status, 200)
          assert.isNotNull(revoked.json.key.revoked_at)
          assert.strictEqual((yield* raw("GET", "/api/v1/balance", { key })).status, 401)
          assert.strictEqual((yield* call(browser, "DELETE", "/keys/999999")).status, 404)
        }))

      it.effect("funds by mobile money: approved, declined (0000), pending (9999); the ledger names the payment", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const pay = (key: string, body: Record<string, unknown>) =>
            call(browser, "POST", "/payments", { body, headers: { "idempotency-key": key } })

          const approved = yield* pay("k-approve", { method: "mtn_momo", amount: 50, payer_number: "0241234567" })
          assert.strictEqual(approved.status, 201, approved.text)
          assert.strictEqual(approved.json.payment.status, "successful")
          const number: string = approved.json.payment.payment_number

          const declined = yield* pay("k-decline", { method: "telecel_cash", amount: 20, payer_number: "0201230000" })
          assert.strictEqual(declined.json.payment.status, "failed")
          assert.isString(declined.json.payment.failure_reason)

          const pending = yield* pay("k-pending", {
            method: "airteltigo_money",
            amount: 30,
            payer_number: "0271239999"
          })
          assert.strictEqual(pending.json.payment.status, "pending")
          const pendingNumber: string = pending.json.payment.payment_number
          const home = (yield* call(browser, "GET", "/home")).json
          assert.deepInclude(home.attention, { kind: "pending_payments", count: 1 })

          // The worker settles it once the simulator stops holding it.
          let settled = pending.json.payment
          for (let i = 0; i < 60 && settled.status === "pending"; i++) {
            yield* Effect.sleep("200 millis")
            settled = (yield* call(browser, "GET", `/payments/${pendingNumber}`)).json.payment
          }
          assert.strictEqual(settled.status, "successful")

          const ledger = (yield* call(browser, "GET", "/ledger")).json
          assert.deepStrictEqual(ledger.balance, { main: 80, referral: 0, agent: 0 })
          assert.sameMembers(ledger.entries.map((e: any) => e.payment_number), [number, pendingNumber])
          const entry = ledger.entries.find((e: any) => e.payment_number === number)
          assert.strictEqual(entry.reason, "funding")
          assert.strictEqual(entry.amount, 50)
          assert.include(entry.note, number)

          const list = (yield* call(browser, "GET", "/payments?status=failed")).json
          assert.deepStrictEqual(list.payments.map((p: any) => p.payment_number), [
            declined.json.payment.payment_number
          ])

          // Another account never sees it.
          const other = yield* newUser
          assert.strictEqual((yield* call(other, "GET", `/payments/${number}`)).status, 404)
        }))

      it.effect("replays a repeated Idempotency-Key, refuses it with another body, credits once under concurrency", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const body = { method: "mtn_momo", amount: 25, payer_number: "0241234567" }
          const results = yield* Effect.all(
            Array.from(
              { length: 8 },
              () => call(browser, "POST", "/payments", { body, headers: { "idempotency-key": "double-click" } })
            ),
            { concurrency: "unbounded" }
          )
          assert.sameMembers([...new Set(results.map((r) => r.status))].sort(), [200, 201])
          assert.strictEqual(results.filter((r) => r.status === 201).length, 1)
          assert.strictEqual(new Set(results.map((r) => r.json.payment.payment_number)).size, 1)
          assert.isTrue(
            results.filter((r) => r.status === 200).every((r) => r.headers["idempotent-replayed"] === "true")
          )
          const balance = (yield* call(browser, "GET", "/ledger")).json.balance
          assert.strictEqual(balance.main, 25)

          const other = yield* call(browser, "POST", "/payments", {
            body: { ...body, amount: 26 },
            headers: { "idempotency-key": "double-click" }
          })
          assert.strictEqual(other.status, 422)
          assert.isArray(other.json.errors["idempotency-key"])

          const missing = yield* call(browser, "POST", "/payments", { body })
          assert.strictEqual(missing.status, 422)
          const noPayer = yield* call(browser, "POST", "/payments", {
            body: { method: "mtn_momo", amount: 5 },
            headers: { "idempotency-key": "no-payer" }
          })
          assert.strictEqual(noPayer.status, 422)
          assert.isArray(noPayer.json.errors.payer_number)
          const tooMuch = yield* call(browser, "POST", "/payments", {
            body: { method: "mtn_momo", amount: 10_000.01, payer_number: "0241234567" },
            headers: { "idempotency-key": "too-much" }
          })
          assert.strictEqual(tooMuch.status, 422)
          assert.isArray(tooMuch.json.errors.amount)
        }))

      it.effect("a manual transfer waits for the operator; concurrent approvals credit it once", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const created = yield* call(browser, "POST", "/payments", {
            body: { method: "manual_transfer", amount: 100, note: "Bank ref 12345" },
            headers: { "idempotency-key": "manual-1" }
          })
          assert.strictEqual(created.status, 201)
          assert.strictEqual(created.json.payment.status, "pending")
          assert.isString(created.json.payment.instructions)
          const number: string = created.json.payment.payment_number

          const approvals = yield* Effect.all(
            Array.from({ length: 6 }, () =>
              raw("POST", `/admin/v1/payments/${number}/approve`, {
                bearer: "adm_test_token_for_the_end_to_end_suite"
              })),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(approvals.filter((r) => r.status === 200).length, 1)
          assert.isTrue(approvals.filter((r) => r.status !== 200).every((r) => r.status === 409))
          const ledger = (yield* call(browser, "GET", "/ledger")).json
          assert.strictEqual(ledger.balance.main, 100)
          assert.strictEqual(ledger.entries.length, 1)

          const declineLater = yield* raw("POST", `/admin/v1/payments/${number}/decline`, {
            bearer: "adm_test_token_for_the_end_to_end_suite",
            body: { reason: "no money arrived" }
          })
          assert.strictEqual(declineLater.status, 409)

          const second = yield* call(browser, "POST", "/payments", {
            body: { method: "manual_transfer", amount: 40 },
            headers: { "idempotency-key": "manual-2" }
          })
          const admin = yield* adminClient
          const declined = yield* admin.paymentsAdmin.decline({
            path: { payment_number: second.json.payment.payment_number },
            payload: { reason: "No transfer arrived" }
          })
          assert.strictEqual(declined.payment.status, "failed")
          assert.strictEqual((yield* call(browser, "GET", "/ledger")).json.balance.main, 100)
          const audit = yield* admin.wallets.audit()
          assert.isTrue(audit.ok)
        }))

      it.effect("buys with a required reference: never twice, as the public API", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const browser = yield* newUser
          yield* call(browser, "POST", "/payments", {
            body: { method: "mtn_momo", amount: 100, payer_number: "0241234567" },
            headers: { "idempotency-key": "fund" }
          })
          const { networks } = (yield* call(browser, "GET", "/networks")).json
          const { bundles } = (yield* call(browser, "GET", `/networks/${networks[0].id}/bundles`)).json
          const bundle = bundles.find((b: any) => b.is_active)
          const body = { bundle_id: bundle.id, phone_number: "0241112222", reference: "buy-1" }
          const results = yield* Effect.all(
            Array.from({ length: 4 }, () => call(browser, "POST", "/orders", { body })),
            { concurrency: "unbounded" }
          )
          assert.isTrue(results.every((r) => r.status === 200), results.map((r) => r.text).join("\n"))
          assert.strictEqual(new Set(results.map((r) => r.json.order.order_number)).size, 1)
          assert.strictEqual(results.filter((r) => r.json.replayed === false).length, 1)
          const orders = (yield* call(browser, "GET", "/orders")).json.orders
          assert.strictEqual(orders.length, 1)
          const detail = yield* call(browser, "GET", `/orders/${orders[0].order_number}`)
          assert.strictEqual(detail.json.order.reference, "buy-1")
          const ledger = (yield* call(browser, "GET", "/ledger?reason=order")).json
          assert.strictEqual(ledger.entries.length, 1)
          assert.strictEqual(ledger.balance.main, 100 - bundle.price)

          const noReference = yield* call(browser, "POST", "/orders", {
            body: { bundle_id: bundle.id, phone_number: "0241112222" }
          })
          assert.strictEqual(noReference.status, 422)
          assert.isArray(noReference.json.errors.reference)
        }))

      it.effect("buys, lists and reads on the test side with mode=test, never touching the live wallet", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const browser = yield* newUser
          const live = (yield* call(browser, "GET", "/home")).json
          assert.deepStrictEqual(live.balance, { main: 0, referral: 0, agent: 0 })
          // The test side opens with its play money on first use.
          const test = (yield* call(browser, "GET", "/home?mode=test")).json
          assert.strictEqual(test.balance.main, 1000)
          const { networks } = (yield* call(browser, "GET", "/networks")).json
          const { bundles } = (yield* call(browser, "GET", `/networks/${networks[0].id}/bundles`)).json
          const bundle = bundles.find((b: any) => b.is_active)
          const body = { bundle_id: bundle.id, phone_number: "0241112222", reference: "test-1", mode: "test" }
          const placed = yield* call(browser, "POST", "/orders", { body })
          assert.strictEqual(placed.status, 200, placed.text)
          assert.strictEqual(placed.json.wallet_balance, 1000 - bundle.price)
          const number = placed.json.order.order_number
          // Only the test side has it; the live wallet is untouched and the live side cannot read it.
          assert.deepStrictEqual(
            (yield* call(browser, "GET", "/orders?mode=test")).json.orders.map((o: any) => o.order_number),
            [number]
          )
          assert.deepStrictEqual((yield* call(browser, "GET", "/orders")).json.orders, [])
          assert.strictEqual((yield* call(browser, "GET", `/orders/${number}`)).status, 404)
          assert.strictEqual((yield* call(browser, "GET", `/orders/${number}?mode=test`)).status, 200)
          const testLedger = (yield* call(browser, "GET", "/ledger?mode=test&reason=order")).json
          assert.strictEqual(testLedger.entries.length, 1)
          assert.strictEqual((yield* call(browser, "GET", "/ledger")).json.balance.main, 0)
          // Without money on the live side, the same purchase there is refused with the amounts.
          const refused = yield* call(browser, "POST", "/orders", { body: { ...body, mode: "live" } })
          assert.strictEqual(refused.status, 400)
          assert.strictEqual(refused.json._tag, "InsufficientBalance")
          assert.strictEqual(refused.json.balance, 0)
          assert.strictEqual(refused.json.required, bundle.price)
          assert.strictEqual((yield* call(browser, "GET", "/home?mode=demo")).status, 422)
        }))

      it.effect("reads numbers as the client does: a fixed line or a bad number refused on its field, once", () =>
        Effect.gen(function*() {
          const fixed = yield* register(freshEmail(), { phone: "0301234567" })
          assert.strictEqual(fixed.status, 422)
          assert.deepStrictEqual(fixed.json.errors, {
            phone: ["phone must be a Ghana mobile number, such as 024 123 4567"]
          })
          const browser = yield* newUser
          const payment = yield* call(browser, "POST", "/payments", {
            body: { method: "mtn_momo", amount: 5, payer_number: "0302345678" },
            headers: { "idempotency-key": "fixed-line" }
          })
          assert.strictEqual(payment.status, 422)
          assert.deepStrictEqual(Object.keys(payment.json.errors), ["payer_number"])
          const order = yield* call(browser, "POST", "/orders", {
            body: { bundle_id: 1, phone_number: "0301234567", reference: "fixed-line" }
          })
          assert.strictEqual(order.status, 422)
          assert.deepStrictEqual(Object.keys(order.json.errors), ["phone_number"])
          // A nullable URL is told its one rule, not that it "must be null" too.
          const url = yield* call(browser, "PUT", "/webhook", { body: { url: "not a url" } })
          assert.strictEqual(url.status, 422)
          assert.deepStrictEqual(url.json.errors, { url: ["url must be an http or https URL"] })
          assert.strictEqual(url.json.message, "url must be an http or https URL")
        }))

      it.effect("tells a suspended holder so: at sign-in (after the password), on an open session, on an API key", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const key = (yield* call(browser, "POST", "/keys", { body: { name: "shop" } })).json.api_key
          const account = (yield* call(browser, "GET", "/session")).json.account.id
          const admin = yield* adminClient
          yield* admin.accounts.update({ path: { account_id: account }, payload: { status: "suspended" } })

          const open = yield* call(browser, "GET", "/home")
          assert.strictEqual(open.status, 401)
          assert.strictEqual(open.json.message, User.SUSPENDED_MESSAGE)
          assert.strictEqual(open.json.reason, "account_suspended")
          const signedIn = yield* signIn(browser.email)
          assert.strictEqual(signedIn.status, 403)
          assert.strictEqual(signedIn.json._tag, "AccountSuspended")
          assert.strictEqual(signedIn.json.message, User.SUSPENDED_MESSAGE)
          assert.isUndefined(signedIn.headers["set-cookie"], "no session for a suspended account")
          // A wrong password learns nothing about the account.
          assert.strictEqual((yield* signIn(browser.email, "not the password")).json._tag, "Unauthorized")
          yield* Effect.sleep("2100 millis") // The key's cached authentication lives 2 s.
          const viaKey = yield* raw("GET", "/api/v1/balance", { key })
          assert.strictEqual(viaKey.status, 401)
          assert.strictEqual(viaKey.json.message, User.SUSPENDED_MESSAGE)
          assert.strictEqual(viaKey.json.reason, "account_suspended")
          assert.strictEqual(
            (yield* raw("GET", "/api/v1/balance", { key: `${key.slice(0, -1)}x` })).json.message,
            "Invalid API key"
          )

          yield* admin.accounts.update({ path: { account_id: account }, payload: { status: "active" } })
          assert.strictEqual((yield* call(browser, "GET", "/home")).status, 200)
          assert.strictEqual((yield* raw("GET", "/api/v1/balance", { key })).status, 200)
        }))

      it.effect("says what truly happened to the email: no SMTP here, so no \"we sent\"", () =>
        Effect.gen(function*() {
          const registered = yield* register(freshEmail())
          assert.strictEqual(registered.status, 201)
          assert.notMatch(registered.json.message, /we sent|on its way/i)
          assert.match(registered.json.message, /sends no email/)
          const forgot = yield* call(undefined, "POST", "/password/forgot", { body: { email: freshEmail() } })
          assert.match(forgot.json.message, /sends no email/)
        }))

      it.effect("throttles sign-in per email and address before the password, without locking out others", () =>
        Effect.gen(function*() {
          const victim = yield* newUser
          const bystander = yield* newUser
          for (let i = 0; i < 5; i++) {
            assert.strictEqual((yield* signIn(victim.email, "wrong password!")).status, 401)
          }
          const throttled = yield* signIn(victim.email, PASSWORD)
          assert.strictEqual(throttled.status, 429, "the right password is not looked at while throttled")
          assert.isNumber(throttled.json.retry_after)
          assert.strictEqual((yield* signIn(bystander.email)).status, 200, "another account at the same address")
          const elsewhere = yield* signIn(victim.email, PASSWORD, {})
          assert.strictEqual(elsewhere.status, 429)
          // The existing session keeps working.
          assert.strictEqual((yield* call(victim, "GET", "/home")).status, 200)
          // An unknown address is answered as a wrong password.
          const unknown = yield* signIn(freshEmail(), PASSWORD)
          assert.strictEqual(unknown.status, 401)
        }))

      it.effect("a lockout of the email address spares the browsers that signed in before, and the one that resets", () =>
        Effect.gen(function*() {
          const victim = yield* newUser
          const bystander = yield* newUser
          const known = yield* signIn(victim.email)
          const browserCookie = (response: RawResponse) => {
            const line = [response.headers["set-cookie"] ?? ""].flat().join("\n")
            const match = new RegExp(`${Session.BROWSER_COOKIE}=([^;]*);([^\n]*)`).exec(line)
            assert.isNotNull(match, `a ${Session.BROWSER_COOKIE} cookie in ${line}`)
            return { value: match![1]!, attributes: match![2]! }
          }
          const remembered = browserCookie(known)
          assert.match(remembered.attributes, /Path=\/dashboard\/v1\/session/)
          assert.match(remembered.attributes, /HttpOnly/)
          assert.match(remembered.attributes, /SameSite=Strict/)
          const withBrowser = (value: string, address: string) => ({
            cookie: `${Session.BROWSER_COOKIE}=${value}`,
            "x-forwarded-for": address
          })
          // 20 guesses from 4 addresses lock the email address out everywhere else...
          for (const address of ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"]) {
            for (let i = 0; i < 5; i++) {
              const guess = yield* signIn(victim.email, "wrong password!", { "x-forwarded-for": address })
              assert.strictEqual(guess.status, 401)
            }
          }
          const locked = yield* signIn(victim.email, PASSWORD, { "x-forwarded-for": "198.51.100.5" })
          assert.strictEqual(locked.status, 429)
          assert.match(locked.json.message, /for this email address\. A browser you signed in with before still can/)
          // ...and to a browser known for another account.
          const other = browserCookie(yield* signIn(bystander.email)).value
          assert.strictEqual((yield* signIn(victim.email, PASSWORD, withBrowser(other, "198.51.100.5"))).status, 429)
          // The owner's browser signs in, and keeps its own limit.
          const owner = yield* signIn(victim.email, PASSWORD, withBrowser(remembered.value, "198.51.100.5"))
          assert.strictEqual(owner.status, 200, owner.text)
          // A browser that resets the password becomes known, and signs in too.
          assert.strictEqual(
            (yield* call(undefined, "POST", "/password/forgot", { body: { email: victim.email } })).status,
            200
          )
          const token = tokenOf((yield* latestMail(victim.email, "reset_password")).link)
          const reset = yield* call(undefined, "POST", "/password/reset", {
            body: { token, password: "a new long password" },
            headers: { "x-forwarded-for": "198.51.100.6" }
          })
          assert.strictEqual(reset.status, 200)
          const resetBrowser = browserCookie(reset).value
          const after = yield* signIn(victim.email, "a new long password", withBrowser(resetBrowser, "198.51.100.6"))
          assert.strictEqual(after.status, 200, after.text)
          assert.strictEqual(
            (yield* signIn(victim.email, "a new long password", { "x-forwarded-for": "198.51.100.6" })).status,
            429,
            "without the cookie the lockout holds"
          )
        }))

      it.scoped("sets a webhook URL, reveals and rotates its secret, sends a test event, logs and resends deliveries", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const failing = yield* receiver(503)
          const none = (yield* call(browser, "GET", "/webhook")).json
          // Every account has a signing secret, so a receiver can be set up before the URL is.
          assert.deepStrictEqual({ url: none.url, has_secret: none.has_secret }, { url: null, has_secret: true })
          assert.strictEqual(
            (yield* call(browser, "POST", "/webhook/test", { body: { type: "order.successful" } })).status,
            422
          )
          assert.match((yield* call(browser, "POST", "/webhook/secret")).json.secret, /^whsec_/)

          const set = yield* call(browser, "PUT", "/webhook", { body: { url: failing.url } })
          assert.strictEqual(set.status, 200)
          assert.isTrue(set.json.has_secret)
          const revealed = yield* call(browser, "POST", "/webhook/secret")
          assert.strictEqual(revealed.headers["cache-control"], "no-store")
          const secret: string = revealed.json.secret
          assert.match(secret, /^whsec_/)

          const test = yield* call(browser, "POST", "/webhook/test", { body: { type: "wallet.funded" } })
          assert.strictEqual(test.status, 202)
          const eventId: string = test.json.delivery.id
          const failed = yield* waitFor(Effect.map(
            call(browser, "GET", `/webhook/deliveries/${eventId}`),
            (r) => r.json.delivery.attempts > 0 && r.json.delivery.last_error !== null ? r.json.delivery : undefined
          ))
          assert.strictEqual(failed.state, "retrying")
          assert.isNotNull(failed.next_attempt_at)
          assert.strictEqual(failed.last_status, 503)
          assert.strictEqual(failing.hits[0]!.headers["x-webhook-event"], "wallet.funded")
          assert.isTrue(JSON.parse(failing.hits[0]!.body).test)
          const home = (yield* call(browser, "GET", "/home")).json
          assert.deepInclude(home.attention, { kind: "failed_webhook_deliveries", count: 1 })

          // Rotation: the old secret stops, a new one signs; resend delivers again at once.
          const rotated = (yield* call(browser, "POST", "/webhook/secret/rotate")).json.secret
          assert.notStrictEqual(rotated, secret)
          const working = yield* receiver(204)
          yield* call(browser, "PUT", "/webhook", { body: { url: working.url } })
          const resent = yield* call(browser, "POST", `/webhook/deliveries/${eventId}/resend`)
          assert.strictEqual(resent.status, 202)
          const delivered = yield* waitFor(Effect.map(
            call(browser, "GET", `/webhook/deliveries/${eventId}`),
            (r) => r.json.delivery.state === "delivered" ? r.json.delivery : undefined
          ))
          assert.isNull(delivered.next_attempt_at)
          assert.strictEqual(working.hits.length, 1)
          assert.strictEqual(working.hits[0]!.headers["x-webhook-id"], eventId)
          const list = (yield* call(browser, "GET", "/webhook/deliveries?state=delivered")).json
          assert.deepStrictEqual(list.deliveries.map((d: any) => d.id), [eventId])

          const other = yield* newUser
          assert.strictEqual((yield* call(other, "GET", `/webhook/deliveries/${eventId}`)).status, 404)
          assert.strictEqual((yield* call(other, "POST", `/webhook/deliveries/${eventId}/resend`)).status, 404)
          const off = yield* call(browser, "PUT", "/webhook", { body: { url: null } })
          assert.isNull(off.json.url)
          assert.strictEqual((yield* call(browser, "POST", `/webhook/deliveries/${eventId}/resend`)).status, 409)
        }))

      it.effect("changes the password with the current one, ending the other sessions", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const second = yield* signIn(browser.email)
          const other: Browser = {
            cookie: sessionCookie(second.headers["set-cookie"]),
            csrf: second.json.csrf_token,
            email: browser.email
          }
          const wrong = yield* call(browser, "POST", "/password", {
            body: { current_password: "not my password", new_password: "a brand new password" }
          })
          assert.strictEqual(wrong.status, 422)
          assert.isArray(wrong.json.errors.current_password)
          const changed = yield* call(browser, "POST", "/password", {
            body: { current_password: PASSWORD, new_password: "a brand new password" }
          })
          assert.strictEqual(changed.status, 200)
          assert.strictEqual((yield* call(browser, "GET", "/session")).status, 200)
          assert.strictEqual((yield* call(other, "GET", "/session")).status, 401)
          assert.strictEqual((yield* signIn(browser.email, "a brand new password")).status, 200)
        }))

      it.effect("signs out; resets a forgotten password by the emailed link, ending every session", () =>
        Effect.gen(function*() {
          const browser = yield* newUser
          const second = yield* signIn(browser.email)
          const other: Browser = {
            cookie: sessionCookie(second.headers["set-cookie"]),
            csrf: second.json.csrf_token,
            email: browser.email
          }
          const out = yield* call(other, "DELETE", "/session")
          assert.strictEqual(out.status, 200)
          assert.match(out.headers["set-cookie"]!, /Expires=Thu, 01 Jan 1970|Max-Age=0/i)
          assert.strictEqual((yield* call(other, "GET", "/session")).status, 401)
          assert.strictEqual((yield* call(browser, "GET", "/session")).status, 200)

          assert.strictEqual(
            (yield* call(undefined, "POST", "/password/forgot", { body: { email: browser.email } })).status,
            200
          )
          assert.strictEqual(
            (yield* call(undefined, "POST", "/password/forgot", { body: { email: freshEmail() } })).status,
            200
          )
          const older = tokenOf((yield* latestMail(browser.email, "reset_password")).link)
          assert.strictEqual(
            (yield* call(undefined, "POST", "/password/forgot", { body: { email: browser.email } })).status,
            200
          )
          const token = tokenOf((yield* latestMail(browser.email, "reset_password")).link)
          assert.notStrictEqual(token, older)
          const weak = yield* call(undefined, "POST", "/password/reset", { body: { token, password: "short" } })
          assert.strictEqual(weak.status, 422)
          const reset = yield* call(undefined, "POST", "/password/reset", {
            body: { token, password: "a new long password" }
          })
          assert.strictEqual(reset.status, 200)
          assert.strictEqual((yield* call(browser, "GET", "/session")).status, 401)
          assert.strictEqual((yield* signIn(browser.email)).status, 401)
          assert.strictEqual((yield* signIn(browser.email, "a new long password")).status, 200)
          const reused = yield* call(undefined, "POST", "/password/reset", {
            body: { token, password: "another long password" }
          })
          assert.strictEqual(reused.status, 422)
          // Using a link voids the others: the older link no longer resets the password.
          const stale = yield* call(undefined, "POST", "/password/reset", {
            body: { token: older, password: "an attacker's password" }
          })
          assert.strictEqual(stale.status, 422, stale.text)
          assert.strictEqual((yield* signIn(browser.email, "an attacker's password")).status, 401)
          // So does changing the password: a link asked for before no longer works after.
          const signedIn = yield* signIn(browser.email, "a new long password")
          const current: Browser = {
            cookie: sessionCookie(signedIn.headers["set-cookie"]),
            csrf: signedIn.json.csrf_token,
            email: browser.email
          }
          yield* call(undefined, "POST", "/password/forgot", { body: { email: browser.email } })
          const before = tokenOf((yield* latestMail(browser.email, "reset_password")).link)
          const changed = yield* call(current, "POST", "/password", {
            body: { current_password: "a new long password", new_password: "the third long password" }
          })
          assert.strictEqual(changed.status, 200, changed.text)
          const late = yield* call(undefined, "POST", "/password/reset", {
            body: { token: before, password: "an attacker's password" }
          })
          assert.strictEqual(late.status, 422, late.text)
          assert.strictEqual((yield* signIn(browser.email, "the third long password")).status, 200)
        }))
    })

    layer(quiet(serverLayer(target, { BUNDLES_DASHBOARD_LIMITS: "access=3" })), {
      timeout: 60_000,
      excludeTestServices: true
    })((it) => {
      it.effect("limits the anonymous forms per address; refused ones send nothing", () =>
        Effect.gen(function*() {
          const email = freshEmail()
          for (let i = 0; i < 3; i++) {
            assert.strictEqual((yield* call(undefined, "POST", "/email/resend", { body: { email } })).status, 200)
          }
          const refused = yield* register(email)
          assert.strictEqual(refused.status, 429)
          assert.isString(refused.headers["retry-after"])
          const admin = yield* adminClient
          const { emails } = yield* admin.mailAdmin.list({ urlParams: { to: email } })
          assert.deepStrictEqual(emails, [], "the refused registration emailed nobody")
        }))
    })
  })
}
