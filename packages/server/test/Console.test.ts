/**
 * The operator console's backend end to end over real HTTP, on PGlite and on Postgres:
 * operators and their sessions (sign-in, throttling, CSRF, sign-out, disabling), the cookie
 * kept to its areas in both directions, the action log written with every admin change and
 * never for a refused or replayed one, the figures for the charts, webhook health, and the
 * catalogue's single changes.
 */
import { AdminApi, ConsoleApi, Operator, Session } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ADMIN_TOKEN, adminClient, newAccount, raw, type RawOptions, resellerClient, seedCatalog, serverLayer } from "./Harness.js"

const CONSOLE = ConsoleApi.CONSOLE_PREFIX
const ADMIN = AdminApi.ADMIN_PREFIX
const PASSWORD = "operator pass phrase"

let counter = 0
const freshEmail = () => `op${Date.now().toString(36)}${(counter++).toString(36)}@example.com`

/** A signed-in console: its cookie and CSRF token. */
interface Console {
  readonly cookie: string
  readonly csrf: string
  readonly operatorId: number
  readonly email: string
}

/** A request as the console's page sends it: the operator cookie, and the CSRF token unless told otherwise. */
const call = (
  console: Console | undefined,
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: RawOptions & { readonly csrf?: string | null } = {}
) => {
  const headers: Record<string, string> = { ...options.headers }
  if (console !== undefined) headers.cookie = `${Operator.OPERATOR_COOKIE}=${console.cookie}`
  const csrf = options.csrf === undefined ? console?.csrf : options.csrf
  if (csrf !== null && csrf !== undefined) headers[Session.CSRF_HEADER] = csrf
  return raw(method, path, { ...options, headers })
}

const signIn = (email: string, password = PASSWORD) =>
  raw("POST", `${CONSOLE}/session`, { body: { email, password } })

const cookieOf = (setCookie: string | undefined) => {
  assert.isDefined(setCookie, "a Set-Cookie header")
  const match = new RegExp(`${Operator.OPERATOR_COOKIE}=([^;]*)`).exec(setCookie!)
  assert.isNotNull(match)
  return match![1]!
}

/** Creates an operator through the admin API (the token) and signs them in. */
const newOperator = Effect.gen(function*() {
  const email = freshEmail()
  const created = yield* raw("POST", `${ADMIN}/operators`, {
    bearer: ADMIN_TOKEN,
    body: { email, name: "Kofi Operator", password: PASSWORD }
  })
  assert.strictEqual(created.status, 201, created.text)
  const response = yield* signIn(email)
  assert.strictEqual(response.status, 200, response.text)
  return {
    cookie: cookieOf(response.headers["set-cookie"]),
    csrf: response.json.csrf_token,
    operatorId: created.json.operator.id,
    email
  } as Console
})

/** The newest action-log lines matching a filter. */
const actions = (query: string) =>
  Effect.map(raw("GET", `${ADMIN}/actions?${query}`, { bearer: ADMIN_TOKEN }), (response) => {
    assert.strictEqual(response.status, 200, response.text)
    return response.json.actions as Array<any>
  })

for (const target of targets) {
  describe(`operator console on ${target.name}`, () => {
    layer(serverLayer(target, { BUNDLES_DASHBOARD_LIMITS: "dashboard=100000,access=100000" }), {
      timeout: 120_000,
      excludeTestServices: true
    })((it) => {
      it.effect("signs an operator in with a strict HttpOnly cookie, keeps the session, signs out", () =>
        Effect.gen(function*() {
          const email = freshEmail()
          const created = yield* raw("POST", `${ADMIN}/operators`, {
            bearer: ADMIN_TOKEN,
            body: { email: email.toUpperCase(), name: "Efua", password: PASSWORD }
          })
          assert.strictEqual(created.status, 201, created.text)
          assert.strictEqual(created.json.operator.email, email)
          assert.isNull(created.json.operator.disabled_at)
          const taken = yield* raw("POST", `${ADMIN}/operators`, {
            bearer: ADMIN_TOKEN,
            body: { email, name: "Efua again", password: PASSWORD }
          })
          assert.strictEqual(taken.status, 409)
          const short = yield* raw("POST", `${ADMIN}/operators`, {
            bearer: ADMIN_TOKEN,
            body: { email: freshEmail(), name: "Short", password: "short" }
          })
          assert.strictEqual(short.status, 422)
          assert.isArray(short.json.errors.password)

          const response = yield* signIn(email)
          assert.strictEqual(response.status, 200, response.text)
          const setCookie = response.headers["set-cookie"]!
          assert.match(setCookie, /HttpOnly/i)
          assert.match(setCookie, /SameSite=Strict/i)
          assert.match(setCookie, /Path=\//)
          assert.notMatch(setCookie, /Secure/i, "plain HTTP on loopback")
          assert.strictEqual(response.headers["cache-control"], "no-store")
          assert.deepStrictEqual(
            { id: response.json.operator.id, email: response.json.operator.email, name: response.json.operator.name },
            { id: created.json.operator.id, email, name: "Efua" }
          )
          assert.isString(response.json.csrf_token)
          const console: Console = {
            cookie: cookieOf(setCookie),
            csrf: response.json.csrf_token,
            operatorId: created.json.operator.id,
            email
          }
          const current = yield* call(console, "GET", `${CONSOLE}/session`)
          assert.strictEqual(current.status, 200)
          assert.strictEqual(current.json.csrf_token, console.csrf)
          assert.strictEqual(current.json.operator.email, email)

          assert.strictEqual((yield* call(undefined, "GET", `${CONSOLE}/session`)).status, 401)
          assert.strictEqual(
            (yield* call({ ...console, cookie: "x".repeat(43) }, "GET", `${CONSOLE}/session`)).status,
            401
          )
          const wrong = yield* signIn(email, "not the password")
          assert.strictEqual(wrong.status, 401)
          assert.strictEqual(wrong.json.success, false)
          assert.strictEqual((yield* signIn(freshEmail())).status, 401)

          const noCsrf = yield* call(console, "DELETE", `${CONSOLE}/session`, { csrf: null })
          assert.strictEqual(noCsrf.status, 403)
          assert.strictEqual(noCsrf.json.code, "forbidden")
          const out = yield* call(console, "DELETE", `${CONSOLE}/session`)
          assert.strictEqual(out.status, 200)
          assert.match(out.headers["set-cookie"] ?? "", new RegExp(`${Operator.OPERATOR_COOKIE}=;`))
          assert.strictEqual((yield* call(console, "GET", `${CONSOLE}/session`)).status, 401)
          assert.strictEqual((yield* call(console, "GET", `${ADMIN}/accounts`)).status, 401)
        }))

      it.effect("throttles sign-in per email and address before the password, without locking out others", () =>
        Effect.gen(function*() {
          const victim = yield* newOperator
          const bystander = yield* newOperator
          for (let i = 0; i < 5; i++) assert.strictEqual((yield* signIn(victim.email, "wrong password!")).status, 401)
          const throttled = yield* signIn(victim.email)
          assert.strictEqual(throttled.status, 429, "the right password is not looked at while throttled")
          assert.isNumber(throttled.json.retry_after)
          assert.strictEqual((yield* signIn(bystander.email)).status, 200)
          assert.strictEqual((yield* call(victim, "GET", `${CONSOLE}/session`)).status, 200, "its session goes on")
        }))

      it.effect("uses the admin API with the cookie; changes need the CSRF token (403 changing nothing)", () =>
        Effect.gen(function*() {
          const console = yield* newOperator
          const account = yield* newAccount(0n)
          const list = yield* call(console, "GET", `${ADMIN}/accounts?per_page=5`)
          assert.strictEqual(list.status, 200, list.text)
          assert.strictEqual(list.headers["cache-control"], "no-store")
          const refused = yield* call(console, "POST", `${ADMIN}/accounts/${account.id}/wallet/fund`, {
            csrf: null,
            body: { amount: 5 }
          })
          assert.strictEqual(refused.status, 403)
          assert.strictEqual(refused.json.success, false)
          const wrong = yield* call(console, "PATCH", `${ADMIN}/accounts/${account.id}`, {
            csrf: "not-the-token",
            body: { status: "suspended" }
          })
          assert.strictEqual(wrong.status, 403)
          const admin = yield* adminClient
          const after = yield* admin.accounts.show({ path: { account_id: account.id } })
          assert.strictEqual(after.status, "active")
          assert.strictEqual(after.balance.main, 0n)
          assert.lengthOf(yield* actions(`account_id=${account.id}&actor=operator`), 0)
          const funded = yield* call(console, "POST", `${ADMIN}/accounts/${account.id}/wallet/fund`, {
            body: { amount: 5 }
          })
          assert.strictEqual(funded.status, 200, funded.text)
          // Reading needs no CSRF token; the bearer token needs none either.
          assert.strictEqual((yield* call(console, "GET", `${ADMIN}/audit`, { csrf: null })).status, 200)
        }))

      it.effect("keeps each cookie to its own areas, both ways", () =>
        Effect.gen(function*() {
          const console = yield* newOperator
          const account = yield* newAccount(0n)
          // An operator's cookie on the public and the dashboard API: nobody.
          const publicApi = yield* call(console, "GET", "/api/v1/balance")
          assert.strictEqual(publicApi.status, 401)
          const dashboard = yield* call(console, "GET", "/dashboard/v1/home")
          assert.strictEqual(dashboard.status, 401)
          // Its token sent as a dashboard session cookie: no such session.
          const asSession = yield* raw("GET", "/dashboard/v1/home", {
            headers: { cookie: `${Session.SESSION_COOKIE}=${console.cookie}` }
          })
          assert.strictEqual(asSession.status, 401)
          // A dashboard session's token on the admin and console APIs, in either cookie: refused.
          const email = freshEmail()
          const registered = yield* raw("POST", "/dashboard/v1/register", {
            body: { name: "Ama", email, phone: "0241234567", password: PASSWORD }
          })
          assert.strictEqual(registered.status, 201)
          const admin = yield* adminClient
          const { emails } = yield* admin.mailAdmin.list({ urlParams: { to: email } })
          const token = /token=([A-Za-z0-9_-]+)/.exec(emails[0]!.link!)![1]!
          assert.strictEqual(
            (yield* raw("POST", "/dashboard/v1/email/verify", { body: { token } })).status,
            200
          )
          const holder = yield* raw("POST", "/dashboard/v1/session", { body: { email, password: PASSWORD } })
          assert.strictEqual(holder.status, 200)
          const holderCookie = new RegExp(`${Session.SESSION_COOKIE}=([^;]*)`).exec(holder.headers["set-cookie"]!)![1]!
          for (const cookie of [`${Session.SESSION_COOKIE}=${holderCookie}`, `${Operator.OPERATOR_COOKIE}=${holderCookie}`]) {
            const headers = { cookie, [Session.CSRF_HEADER]: holder.json.csrf_token }
            assert.strictEqual((yield* raw("GET", `${ADMIN}/accounts`, { headers })).status, 401, cookie)
            assert.strictEqual((yield* raw("GET", `${CONSOLE}/session`, { headers })).status, 401, cookie)
            assert.strictEqual(
              (yield* raw("POST", `${ADMIN}/accounts/${account.id}/wallet/fund`, { headers, body: { amount: 1 } }))
                .status,
              401
            )
          }
          // The dashboard user's own session still works where it belongs.
          const home = yield* raw("GET", "/dashboard/v1/home", {
            headers: { cookie: `${Session.SESSION_COOKIE}=${holderCookie}` }
          })
          assert.strictEqual(home.status, 200)
          // The admin token is no console session.
          assert.strictEqual((yield* raw("GET", `${CONSOLE}/session`, { bearer: ADMIN_TOKEN })).status, 401)
        }))

      it.effect("disabling an operator ends their sessions (401) and refuses their sign-in", () =>
        Effect.gen(function*() {
          const console = yield* newOperator
          assert.strictEqual((yield* call(console, "GET", `${ADMIN}/accounts`)).status, 200)
          const disabled = yield* raw("POST", `${ADMIN}/operators/${console.operatorId}/disable`, { bearer: ADMIN_TOKEN })
          assert.strictEqual(disabled.status, 200, disabled.text)
          assert.isString(disabled.json.operator.disabled_at)
          assert.strictEqual((yield* call(console, "GET", `${ADMIN}/accounts`)).status, 401)
          assert.strictEqual((yield* call(console, "GET", `${CONSOLE}/session`)).status, 401)
          assert.strictEqual((yield* signIn(console.email)).status, 401)
          assert.strictEqual(
            (yield* raw("POST", `${ADMIN}/operators/2147483647/disable`, { bearer: ADMIN_TOKEN })).status,
            404
          )
          const listed = yield* raw("GET", `${ADMIN}/operators`, { bearer: ADMIN_TOKEN })
          const row = listed.json.operators.find((o: any) => o.id === console.operatorId)
          assert.isString(row.disabled_at)
          const [line] = yield* actions(`action=operator.disable&target_id=${console.operatorId}`)
          assert.strictEqual(line.actor_kind, "token")
        }))

      it.effect("logs every change by the token and by an operator, in its transaction; none when refused or replayed", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const console = yield* newOperator
          const account = yield* newAccount(0n)
          const target = `account_id=${account.id}`

          // Funding by the token, under an Idempotency-Key, then its replay.
          const key = `fund-${account.id}-${Date.now()}`
          const fund = () =>
            raw("POST", `${ADMIN}/accounts/${account.id}/wallet/fund`, {
              bearer: ADMIN_TOKEN,
              body: { amount: 20, note: "cash deposit" },
              headers: { "idempotency-key": key }
            })
          assert.strictEqual((yield* fund()).status, 200)
          const replay = yield* fund()
          assert.strictEqual(replay.headers["idempotent-replayed"], "true")
          const funds = yield* actions(`${target}&action=wallet.fund`)
          assert.lengthOf(funds, 1, "the replay writes no line")
          assert.strictEqual(funds[0].actor_kind, "token")
          assert.isNull(funds[0].operator_id)
          assert.strictEqual(funds[0].target_kind, "account")
          assert.strictEqual(funds[0].target_id, String(account.id))
          assert.strictEqual(funds[0].detail.amount, "20.00")
          assert.match(funds[0].summary, /GHS 20\.00/)
          assert.match(funds[0].request_id, /^req_/)

          // An adjustment by the operator; an overdraft is refused and writes nothing.
          const adjust = yield* call(console, "POST", `${ADMIN}/accounts/${account.id}/wallet/adjust`, {
            body: { amount: -5, note: "double entry" }
          })
          assert.strictEqual(adjust.status, 200, adjust.text)
          const overdraft = yield* call(console, "POST", `${ADMIN}/accounts/${account.id}/wallet/adjust`, {
            body: { amount: -500, note: "too much" }
          })
          assert.strictEqual(overdraft.status, 400, overdraft.text)
          const adjusts = yield* actions(`${target}&action=wallet.adjust`)
          assert.lengthOf(adjusts, 1)
          assert.strictEqual(adjusts[0].actor_kind, "operator")
          assert.strictEqual(adjusts[0].operator_id, console.operatorId)
          assert.strictEqual(adjusts[0].operator_email, console.email)
          assert.strictEqual(adjusts[0].detail.amount, "-5.00")

          // Suspending by the operator; an invalid patch writes nothing.
          assert.strictEqual(
            (yield* call(console, "PATCH", `${ADMIN}/accounts/${account.id}`, { body: { status: "closed" } })).status,
            422
          )
          const suspend = yield* call(console, "PATCH", `${ADMIN}/accounts/${account.id}`, { body: { status: "suspended" } })
          assert.strictEqual(suspend.status, 200)
          const updates = yield* actions(`${target}&action=account.update`)
          assert.lengthOf(updates, 1)
          assert.match(updates[0].summary, /status suspended/)
          assert.deepStrictEqual(updates[0].detail, { status: "suspended" })
          const reseller = yield* resellerClient(account.key)
          const blocked = yield* Effect.either(reseller.wallet.balance())
          assert.isTrue(blocked._tag === "Left", "the suspended account's key is refused")
          yield* call(console, "PATCH", `${ADMIN}/accounts/${account.id}`, { body: { status: "active" } })

          // Resolving a pending order as failed (refunded once); a second resolve is a 409 and writes nothing.
          const buyer = yield* newAccount(100_00n)
          const buyerClient = yield* resellerClient(buyer.key)
          const { networks } = yield* buyerClient.catalog.networks()
          const { bundles } = yield* buyerClient.catalog.bundles({ path: { network_id: networks[0]!.id } })
          const placed = yield* raw("POST", "/api/v1/orders", {
            key: buyer.key,
            body: { bundle_id: bundles[0]!.id, phone_number: "0241234567" }
          })
          assert.strictEqual(placed.status, 200, placed.text)
          const orderNumber = placed.json.order.order_number
          const resolve = () =>
            call(console, "POST", `${ADMIN}/orders/${orderNumber}/resolve`, {
              body: { status: "failed", note: "upstream never delivered" }
            })
          const first = yield* resolve()
          const second = yield* resolve()
          // The simulator may have settled it first: then only a 409, and no line.
          const resolved = yield* actions(`action=order.resolve&target_id=${orderNumber}`)
          if (first.status === 200) {
            assert.strictEqual(second.status, 409)
            assert.lengthOf(resolved, 1)
            assert.strictEqual(resolved[0].account_id, buyer.id)
            assert.match(resolved[0].summary, /failed: upstream never delivered/)
          } else {
            assert.strictEqual(first.status, 409)
            assert.lengthOf(resolved, 0)
          }

          // A catalogue import by the operator: one line with the counts; its preview writes none.
          const exported = yield* raw("GET", `${ADMIN}/catalog`, { bearer: ADMIN_TOKEN })
          const { success: _, ...file } = exported.json
          const before = (yield* actions("action=catalog.import")).length
          assert.strictEqual((yield* call(console, "POST", `${ADMIN}/catalog/preview`, { body: file })).status, 200)
          const imported = yield* call(console, "POST", `${ADMIN}/catalog`, { body: file })
          assert.strictEqual(imported.status, 200, imported.text)
          const imports = yield* actions("action=catalog.import")
          assert.lengthOf(imports, before + 1)
          assert.strictEqual(imports[0].operator_id, console.operatorId)
          assert.deepStrictEqual(imports[0].detail.bundles, imported.json.bundles)

          // Filters: by actor, and paging newest first.
          const mine = yield* actions(`actor=operator:${console.operatorId}`)
          assert.isTrue(mine.every((line) => line.operator_id === console.operatorId))
          assert.isTrue(mine.length >= 4)
          for (let i = 1; i < mine.length; i++) assert.isTrue(mine[i - 1].id > mine[i].id)
          assert.strictEqual((yield* raw("GET", `${ADMIN}/actions?actor=robot`, { bearer: ADMIN_TOKEN })).status, 422)
          assert.strictEqual((yield* raw("GET", `${ADMIN}/actions?action=nope`, { bearer: ADMIN_TOKEN })).status, 422)
        }))
    })
  })
}
