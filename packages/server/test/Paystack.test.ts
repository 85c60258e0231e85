/**
 * Funding through Paystack's mobile money charge API, against a fake of that API started
 * here (real HTTP), on PGlite and on Postgres: the charge Paystack receives, its signed
 * callback (`POST /callbacks/paystack`), a wrong signature (401, nothing changes), the same
 * callback many times at once racing the status poll (credited once, the ledger naming the
 * payment), a declined charge, and the callback route off (404) with the simulator.
 */
import { DashboardApi, Session } from "@databundle/contract"
import { type Target, targets } from "@databundle/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createHmac } from "node:crypto"
import * as http from "node:http"
import { adminClient, mailed, raw, type RawOptions, serverLayer } from "./Harness.js"

const SECRET = "sk_test_0123456789abcdef"
const PREFIX = DashboardApi.DASHBOARD_PREFIX
const PASSWORD = "correct horse battery"

interface Tx {
  id: number
  reference: string
  amount: number
  currency: string
  status: string
  gateway_response: string
  display_text?: string
}

/** The code the fake's wallets that ask for one (payer numbers ending 1234) expect. */
const FAKE_CODE = "246810"
const CODE_PROMPT = "Please enter the one-time password sent to your phone"

/** Paystack's API as far as the adapter uses it: charges and verification, bearer-authenticated. */
const fakePaystack = Effect.acquireRelease(
  Effect.promise(async () => {
    const transactions = new Map<string, Tx>()
    const charges: Array<Record<string, any>> = []
    const codes: Array<Record<string, any>> = []
    let ids = 1000
    const server = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        const reply = (status: number, value: unknown) =>
          response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value))
        if (request.headers.authorization !== `Bearer ${SECRET}`) {
          return reply(401, { status: false, message: "Invalid key" })
        }
        const verify = /^\/transaction\/verify\/([^/]+)$/.exec(request.url ?? "")
        if (request.method === "GET" && verify) {
          const tx = transactions.get(decodeURIComponent(verify[1]!))
          return tx === undefined
            ? reply(400, { status: false, message: "Transaction reference not found" })
            : reply(200, {
              status: true,
              message: "Verification successful",
              // (Verification carries no display_text: the charge's is kept.)
              data: { ...tx, display_text: undefined }
            })
        }
        if (request.method === "POST" && request.url === "/charge") {
          const charge = JSON.parse(body)
          charges.push(charge)
          if (transactions.has(charge.reference)) {
            return reply(400, { status: false, message: "Duplicate Transaction Reference" })
          }
          const declined = String(charge.mobile_money?.phone).endsWith("0000")
          const otp = String(charge.mobile_money?.phone).endsWith("1234")
          const tx: Tx = {
            id: ++ids,
            reference: charge.reference,
            amount: Number(charge.amount),
            currency: charge.currency,
            status: declined ? "failed" : otp ? "send_otp" : "pay_offline",
            gateway_response: declined ? "Insufficient funds in the wallet" : "Awaiting the payer",
            ...(otp ? { display_text: CODE_PROMPT } : {})
          }
          transactions.set(tx.reference, tx)
          return reply(200, { status: true, message: "Charge attempted", data: { display_text: "Approve", ...tx } })
        }
        if (request.method === "POST" && request.url === "/charge/submit_otp") {
          const submitted = JSON.parse(body)
          codes.push(submitted)
          const tx = transactions.get(submitted.reference)
          if (tx === undefined) return reply(400, { status: false, message: "Transaction reference not found" })
          if (tx.status !== "send_otp") return reply(400, { status: false, message: "Transaction has been processed" })
          if (submitted.otp !== FAKE_CODE) return reply(400, { status: false, message: "Invalid OTP provided" })
          tx.status = "success"
          tx.gateway_response = "Approved"
          return reply(200, { status: true, message: "Charge attempted", data: tx })
        }
        reply(404, { status: false, message: "Not found" })
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as { port: number }
    return { url: `http://127.0.0.1:${port}`, transactions, charges, codes, server }
  }),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

let counter = 0
const freshEmail = () => `payer${Date.now().toString(36)}${(counter++).toString(36)}@example.com`

interface Browser {
  readonly cookie: string
  readonly csrf: string
}

const call = (browser: Browser, method: "GET" | "POST", path: string, options: RawOptions = {}) =>
  raw(method, `${PREFIX}${path}`, {
    ...options,
    headers: {
      cookie: `${Session.SESSION_COOKIE}=${browser.cookie}`,
      [Session.CSRF_HEADER]: browser.csrf,
      ...options.headers
    }
  })

/** A registered, verified, signed-in user. */
const newUser = Effect.gen(function*() {
  const email = freshEmail()
  const registered = yield* raw("POST", `${PREFIX}/register`, {
    body: { name: "Efua Owusu", email, phone: "0241234567", password: PASSWORD }
  })
  assert.strictEqual(registered.status, 201, registered.text)
  const token = /[?&]token=([A-Za-z0-9_-]+)/.exec((yield* mailed(email)).link!)![1]!
  assert.strictEqual((yield* raw("POST", `${PREFIX}/email/verify`, { body: { token } })).status, 200)
  const signedIn = yield* raw("POST", `${PREFIX}/session`, { body: { email, password: PASSWORD } })
  assert.strictEqual(signedIn.status, 200, signedIn.text)
  const cookie = new RegExp(`${Session.SESSION_COOKIE}=([^;]*)`).exec(signedIn.headers["set-cookie"]!)![1]!
  return { cookie, csrf: signedIn.json.csrf_token as string, email }
}).pipe(Effect.orDie)

const sign = (body: string, secret = SECRET) => createHmac("sha512", secret).update(body).digest("hex")

const callback = (body: string, signature: string | undefined) =>
  raw("POST", "/callbacks/paystack", {
    body,
    headers: signature === undefined ? {} : { "x-paystack-signature": signature }
  })

const chargeSuccess = (tx: Tx) =>
  JSON.stringify({ event: "charge.success", data: { ...tx, status: "success", channel: "mobile_money" } })

/** The fake Paystack, and the server on `target` collecting through it (`extra` settings besides). */
const paystackServer = (target: Target, extra: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const paystack = yield* fakePaystack
    const server = yield* Layer.build(serverLayer(target, {
      BUNDLES_PAYMENTS_PROVIDER: "paystack",
      BUNDLES_PAYSTACK_SECRET_KEY: SECRET,
      BUNDLES_PAYSTACK_BASE_URL: paystack.url,
      BUNDLES_DASHBOARD_LIMITS: "dashboard=100000,access=100000",
      ...extra
    }))
    return { paystack, server }
  })

for (const target of targets) {
  describe(`Paystack mobile money on ${target.name}`, () => {
    it.scopedLive(
      "charges the wallet; a signed callback credits once, a bad signature changes nothing",
      () =>
        Effect.gen(function*() {
          const { paystack, server } = yield* paystackServer(target)
          yield* Effect.gen(function*() {
            const user = yield* newUser
            const created = yield* call(user, "POST", "/payments", {
              body: { method: "telecel_cash", amount: 25.5, payer_number: "0201234567" },
              headers: { "idempotency-key": "psk-1" }
            })
            assert.strictEqual(created.status, 201, created.text)
            assert.strictEqual(created.json.payment.status, "pending")
            const number: string = created.json.payment.payment_number

            // What Paystack was asked: the payment number as the reference, pesewas, the wallet's provider.
            assert.strictEqual(paystack.charges.length, 1)
            assert.deepStrictEqual(paystack.charges[0], {
              email: user.email,
              amount: "2550",
              currency: "GHS",
              reference: number,
              mobile_money: { phone: "0201234567", provider: "vod" }
            })
            const tx = paystack.transactions.get(number)!

            // The payer approves; a callback with a wrong or missing signature is refused and changes nothing.
            tx.status = "success"
            for (const signature of [undefined, sign(chargeSuccess(tx), "sk_test_wrong"), "abc", sign("{}")]) {
              const refused = yield* callback(chargeSuccess(tx), signature)
              assert.strictEqual(refused.status, 401, refused.text)
              assert.strictEqual(refused.json.success, false)
            }
            assert.strictEqual((yield* call(user, "GET", `/payments/${number}`)).json.payment.status, "pending")
            assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 0)

            // The same signed callback many times at once (and the status poll): credited once.
            const body = chargeSuccess(tx)
            const answers = yield* Effect.all(Array.from({ length: 6 }, () => callback(body, sign(body))), {
              concurrency: "unbounded"
            })
            for (const answer of answers) assert.strictEqual(answer.status, 200, answer.text)
            const again = yield* callback(body, sign(body))
            assert.strictEqual(again.status, 200)
            const payment = (yield* call(user, "GET", `/payments/${number}`)).json.payment
            assert.strictEqual(payment.status, "successful")
            const ledger = (yield* call(user, "GET", "/ledger")).json
            assert.strictEqual(ledger.balance.main, 25.5)
            const credits = ledger.entries.filter((e: any) => e.payment_number === number)
            assert.strictEqual(credits.length, 1)
            assert.include(credits[0].note, number)
            assert.strictEqual(credits[0].amount, 25.5)

            // A callback about a payment that is not ours is acknowledged and changes nothing.
            const stranger = JSON.stringify({ event: "charge.success", data: { reference: "PAY-NOTOURS00000" } })
            assert.strictEqual((yield* callback(stranger, sign(stranger))).status, 200)
            assert.strictEqual(paystack.charges.length, 1, "never charged twice")
          }).pipe(Effect.provide(server))
        }),
      { timeout: 90_000 }
    )

    it.scopedLive(
      "a callback racing the status poll credits once; a declined charge fails with Paystack's reason",
      () =>
        Effect.gen(function*() {
          const { paystack, server } = yield* paystackServer(target, { BUNDLES_POLL_SECONDS: "0.05" })
          yield* Effect.gen(function*() {
            const user = yield* newUser
            const declined = yield* call(user, "POST", "/payments", {
              body: { method: "mtn_momo", amount: 10, payer_number: "0241230000" },
              headers: { "idempotency-key": "psk-decline" }
            })
            assert.strictEqual(declined.json.payment.status, "failed")
            assert.strictEqual(declined.json.payment.failure_reason, "Insufficient funds in the wallet")

            const created = yield* call(user, "POST", "/payments", {
              body: { method: "airteltigo_money", amount: 40, payer_number: "0271234567" },
              headers: { "idempotency-key": "psk-race" }
            })
            const number: string = created.json.payment.payment_number
            assert.strictEqual(paystack.charges.at(-1)!.mobile_money.provider, "atl")
            const tx = paystack.transactions.get(number)!
            // The poll is due 10 s after the charge: approve just before, and call back as it runs.
            yield* Effect.sleep("9800 millis")
            tx.status = "success"
            const body = chargeSuccess(tx)
            for (let i = 0; i < 8; i++) {
              yield* Effect.all([callback(body, sign(body)), callback(body, sign(body))], { concurrency: 2 })
              yield* Effect.sleep("50 millis")
            }
            const ledger = (yield* call(user, "GET", "/ledger")).json
            assert.strictEqual(ledger.balance.main, 40)
            assert.strictEqual(ledger.entries.filter((e: any) => e.payment_number === number).length, 1)
            assert.strictEqual((yield* call(user, "GET", `/payments/${number}`)).json.payment.status, "successful")
          }).pipe(Effect.provide(server))
        }),
      { timeout: 90_000 }
    )

    it.scopedLive(
      "a charge that asks for a one-time code: the code is sent, a wrong one is refused, credited once",
      () =>
        Effect.gen(function*() {
          const { paystack, server } = yield* paystackServer(target)
          yield* Effect.gen(function*() {
            const user = yield* newUser
            const created = yield* call(user, "POST", "/payments", {
              body: { method: "telecel_cash", amount: 12, payer_number: "0201231234" },
              headers: { "idempotency-key": "psk-otp" }
            })
            assert.strictEqual(created.status, 201, created.text)
            const number: string = created.json.payment.payment_number
            assert.strictEqual(created.json.payment.status, "pending")
            assert.strictEqual(created.json.payment.awaiting_code, true)
            assert.strictEqual(created.json.payment.code_prompt, CODE_PROMPT)
            assert.include(created.json.payment.instructions, "one-time code")
            const otp = (code: unknown, who: Browser = user, headers: Record<string, string> = {}) =>
              call(who, "POST", `/payments/${number}/otp`, { body: { otp: code }, headers })
            const unchanged = Effect.gen(function*() {
              const payment = (yield* call(user, "GET", `/payments/${number}`)).json.payment
              assert.strictEqual(payment.status, "pending")
              assert.strictEqual(payment.awaiting_code, true)
              assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 0)
            })

            // Malformed codes never reach Paystack.
            for (const bad of ["12ab", "", "123", "123456789", 123456, null]) {
              const refused = yield* otp(bad)
              assert.strictEqual(refused.status, 422, refused.text)
              assert.strictEqual(refused.json.success, false)
              assert.property(refused.json.errors, "otp")
            }
            assert.strictEqual(paystack.codes.length, 0)

            // Without the CSRF token, or from another account: refused, nothing sent.
            const noCsrf = yield* otp(FAKE_CODE, user, { [Session.CSRF_HEADER]: "" })
            assert.strictEqual(noCsrf.status, 403, noCsrf.text)
            const stranger = yield* newUser
            const foreign = yield* otp(FAKE_CODE, stranger)
            assert.strictEqual(foreign.status, 404, foreign.text)
            assert.strictEqual(foreign.json.success, false)
            assert.strictEqual(
              (yield* call(user, "POST", "/payments/PAY-000000000000/otp", {
                body: { otp: FAKE_CODE }
              })).status,
              404
            )
            assert.strictEqual(paystack.codes.length, 0)
            yield* unchanged

            // A callback while it waits makes the server verify: still awaiting, the charge's prompt kept.
            const waiting = JSON.stringify({ event: "charge.pending", data: { reference: number } })
            assert.strictEqual((yield* callback(waiting, sign(waiting))).status, 200)
            assert.strictEqual((yield* call(user, "GET", `/payments/${number}`)).json.payment.code_prompt, CODE_PROMPT)

            // A wrong code: Paystack's message on the field; the payment still awaits a code.
            const wrong = yield* otp("111111")
            assert.strictEqual(wrong.status, 422, wrong.text)
            assert.strictEqual(wrong.json.success, false)
            assert.include(wrong.json.errors.otp[0], "Invalid OTP provided")
            assert.deepStrictEqual(paystack.codes.at(-1), { otp: "111111", reference: number })
            yield* unchanged

            // The right code several times at once, racing Paystack's signed callback: credited once.
            const tx = paystack.transactions.get(number)!
            const answers = yield* Effect.all(
              [
                ...Array.from({ length: 4 }, () => otp(FAKE_CODE)),
                Effect.delay(callback(chargeSuccess(tx), sign(chargeSuccess(tx))), "5 millis")
              ],
              { concurrency: "unbounded" }
            )
            const statuses = answers.slice(0, 4).map((answer) => answer.status)
            assert.isTrue(statuses.includes(200), statuses.join())
            for (const answer of answers.slice(0, 4)) {
              assert.include([200, 409], answer.status, answer.text)
              if (answer.status === 200) assert.strictEqual(answer.json.payment.status, "successful")
            }
            const payment = (yield* call(user, "GET", `/payments/${number}`)).json.payment
            assert.strictEqual(payment.status, "successful")
            assert.strictEqual(payment.awaiting_code, false)
            assert.strictEqual(payment.code_prompt, null)
            const ledger = (yield* call(user, "GET", "/ledger")).json
            assert.strictEqual(ledger.balance.main, 12)
            assert.strictEqual(ledger.entries.filter((e: any) => e.payment_number === number).length, 1)

            // Once settled, another code is a conflict; so is a code for a payment that never asked.
            const late = yield* otp(FAKE_CODE)
            assert.strictEqual(late.status, 409, late.text)
            assert.include(late.json.message, "already successful")
            const plain = yield* call(user, "POST", "/payments", {
              body: { method: "mtn_momo", amount: 5, payer_number: "0241234567" },
              headers: { "idempotency-key": "psk-plain" }
            })
            assert.strictEqual(plain.json.payment.awaiting_code, false)
            const never = yield* call(user, "POST", `/payments/${plain.json.payment.payment_number}/otp`, {
              body: { otp: FAKE_CODE }
            })
            assert.strictEqual(never.status, 409, never.text)
            assert.include(never.json.message, "not waiting for a code")
            assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 12)
          }).pipe(Effect.provide(server))
        }),
      { timeout: 90_000 }
    )

    it.scopedLive("the simulator asks numbers ending 1234 for the code 123456", () =>
      Effect.gen(function*() {
        const server = yield* Layer.build(serverLayer(target, {
          BUNDLES_DASHBOARD_LIMITS: "dashboard=100000,access=100000"
        }))
        yield* Effect.gen(function*() {
          const user = yield* newUser
          const created = yield* call(user, "POST", "/payments", {
            body: { method: "telecel_cash", amount: 7, payer_number: "0201231234" },
            headers: { "idempotency-key": "sim-otp" }
          })
          assert.strictEqual(created.status, 201, created.text)
          assert.strictEqual(created.json.payment.awaiting_code, true)
          assert.include(created.json.payment.code_prompt, "123456")
          const number: string = created.json.payment.payment_number
          const wrong = yield* call(user, "POST", `/payments/${number}/otp`, { body: { otp: "654321" } })
          assert.strictEqual(wrong.status, 422, wrong.text)
          assert.include(wrong.json.errors.otp[0], "not correct")
          assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 0)
          const right = yield* call(user, "POST", `/payments/${number}/otp`, { body: { otp: "123456" } })
          assert.strictEqual(right.status, 200, right.text)
          assert.strictEqual(right.json.payment.status, "successful")
          assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 7)
          const again = yield* call(user, "POST", `/payments/${number}/otp`, { body: { otp: "123456" } })
          assert.strictEqual(again.status, 409, again.text)
          assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 7)
        }).pipe(Effect.provide(server))
      }), { timeout: 60_000 })

    it.scopedLive(
      "a success without a currency is refused; a reversal after the credit is shown and alerts the operator, once",
      () =>
        Effect.gen(function*() {
          const alerts: Array<{ type: string; data: any }> = []
          const receiver = yield* Effect.acquireRelease(
            Effect.promise(async () => {
              const server = http.createServer((request, response) => {
                let body = ""
                request.on("data", (chunk) => (body += chunk))
                request.on("end", () => {
                  alerts.push(JSON.parse(body))
                  response.writeHead(204).end()
                })
              })
              await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
              return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/alerts` }
            }),
            ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
          )
          const { paystack, server } = yield* paystackServer(target, {
            BUNDLES_OPERATOR_WEBHOOK_URL: receiver.url,
            BUNDLES_OPERATOR_WEBHOOK_SECRET: "whsec_b3BlcmF0b3Itc2VjcmV0LWZvci10ZXN0cy0xMjM0NQ=="
          })
          yield* Effect.gen(function*() {
            const user = yield* newUser
            const pay = (key: string, amount: number) =>
              Effect.map(
                call(user, "POST", "/payments", {
                  body: { method: "mtn_momo", amount, payer_number: "0241234567" },
                  headers: { "idempotency-key": key }
                }),
                (created) => created.json.payment.payment_number as string
              )
            const notify = (tx: Tx, event: string) =>
              Effect.gen(function*() {
                const body = JSON.stringify({ event, data: tx })
                assert.strictEqual((yield* callback(body, sign(body))).status, 200)
              })

            // "success" that names no currency is not a success in cedis: refused, nothing credited.
            const bare = yield* pay("psk-bare", 20)
            const bareTx = paystack.transactions.get(bare)!
            bareTx.status = "success"
            delete (bareTx as Partial<Tx>).currency
            yield* notify(bareTx, "charge.success")
            const refused = (yield* call(user, "GET", `/payments/${bare}`)).json.payment
            assert.strictEqual(refused.status, "failed")
            assert.include(refused.failure_reason, "no currency")
            assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 0)

            // Credited, then reversed: shown to the operator, alerted once, the wallet left as it is.
            const number = yield* pay("psk-reversed", 30)
            const tx = paystack.transactions.get(number)!
            tx.status = "success"
            yield* notify(tx, "charge.success")
            assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 30)
            tx.status = "reversed"
            tx.gateway_response = "Reversed: the payer disputed the charge"
            yield* notify(tx, "refund.processed")
            yield* notify(tx, "refund.processed")
            const admin = yield* adminClient
            const { payment } = yield* admin.paymentsAdmin.get({ path: { payment_number: number } })
            assert.strictEqual(payment.status, "successful")
            assert.isNotNull(payment.reversed_at)
            assert.strictEqual(payment.reversal_reason, "Reversed: the payer disputed the charge")
            const listed = yield* admin.paymentsAdmin.list({ urlParams: { reversed: "true" } })
            assert.deepStrictEqual(listed.payments.map((p) => p.payment_number), [number])
            assert.strictEqual((yield* call(user, "GET", "/ledger")).json.balance.main, 30)
            for (let i = 0; i < 50 && alerts.length === 0; i++) yield* Effect.sleep("100 millis")
            yield* Effect.sleep("500 millis")
            assert.strictEqual(alerts.length, 1, JSON.stringify(alerts))
            assert.strictEqual(alerts[0]!.type, "payment.reversed")
            assert.deepStrictEqual(alerts[0]!.data, {
              payment_number: number,
              account_id: payment.account_id,
              amount: 30,
              reason: "Reversed: the payer disputed the charge"
            })
          }).pipe(Effect.provide(server))
        }),
      { timeout: 90_000 }
    )

    it.scopedLive("the callback route is a 404 with the simulator", () =>
      Effect.gen(function*() {
        const server = yield* Layer.build(serverLayer(target))
        yield* Effect.gen(function*() {
          const body = JSON.stringify({ event: "charge.success", data: { reference: "PAY-000000000000" } })
          const response = yield* callback(body, sign(body))
          assert.strictEqual(response.status, 404, response.text)
          assert.strictEqual(response.json.success, false)
        }).pipe(Effect.provide(server))
      }), { timeout: 60_000 })
  })
}
