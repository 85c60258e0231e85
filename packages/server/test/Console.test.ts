/**
 * The operator console's backend end to end over real HTTP, on PGlite and on Postgres:
 * operators and their sessions (sign-in, throttling, CSRF, sign-out, disabling), the cookie
 * kept to its areas in both directions, the action log written with every admin change and
 * never for a refused or replayed one, the figures for the charts, webhook health, and the
 * catalogue's single changes.
 */
import { AdminApi, ConsoleApi, Operator, Session } from "@databundle/contract"
import { OperatorActions } from "@databundle/core"
import { targets } from "@databundle/core/testing"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as http from "node:http"
import * as ActionLog from "../src/ActionLog.js"
import {
  ADMIN_TOKEN,
  adminClient,
  mailed,
  newAccount,
  raw,
  type RawOptions,
  resellerClient,
  seedCatalog,
  serverLayer
} from "./Harness.js"

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

const signIn = (email: string, password = PASSWORD) => raw("POST", `${CONSOLE}/session`, { body: { email, password } })

const cookieOf = (setCookie: string | undefined) => {
  assert.isDefined(setCookie, "a Set-Cookie header")
  const match = new RegExp(`${Operator.OPERATOR_COOKIE}=([^;]*)`).exec(setCookie!)
  assert.isNotNull(match)
  return match![1]!
}

/** Creates an operator (of `role`, else the default) through the admin API (the token) and signs them in. */
const operatorOf = (role?: Operator.OperatorRole) =>
  Effect.gen(function*() {
    const email = freshEmail()
    const created = yield* raw("POST", `${ADMIN}/operators`, {
      bearer: ADMIN_TOKEN,
      body: { email, name: "Kofi Operator", password: PASSWORD, ...(role === undefined ? {} : { role }) }
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

/** A new operator with the default role, signed in. */
const newOperator = operatorOf()

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
          // A working day, not a month: an operator's session moves money.
          const lasts = new Date(response.json.expires_at).getTime() - Date.now()
          assert.isTrue(lasts > 11.9 * 3600_000 && lasts <= 12 * 3600_000, `expires in ${lasts} ms`)
          // Two hours unused end it.
          const sql = yield* SqlClient.SqlClient
          const idle = yield* signIn(email)
          const idleConsole = { ...console, cookie: cookieOf(idle.headers["set-cookie"]!), csrf: idle.json.csrf_token }
          yield* sql`UPDATE operator_sessions SET last_seen_at = now() - interval '2 hours 1 minute'
            WHERE id = (SELECT max(id) FROM operator_sessions)`
          assert.strictEqual((yield* call(idleConsole, "GET", `${CONSOLE}/session`)).status, 401)
          assert.strictEqual((yield* call(console, "GET", `${CONSOLE}/session`)).status, 200)

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
          const token = /token=([A-Za-z0-9_-]+)/.exec((yield* mailed(email)).link!)![1]!
          assert.strictEqual(
            (yield* raw("POST", "/dashboard/v1/email/verify", { body: { token } })).status,
            200
          )
          const holder = yield* raw("POST", "/dashboard/v1/session", { body: { email, password: PASSWORD } })
          assert.strictEqual(holder.status, 200)
          const holderCookie = new RegExp(`${Session.SESSION_COOKIE}=([^;]*)`).exec(holder.headers["set-cookie"]!)![1]!
          for (
            const cookie of [`${Session.SESSION_COOKIE}=${holderCookie}`, `${Operator.OPERATOR_COOKIE}=${holderCookie}`]
          ) {
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
          const disabled = yield* raw("POST", `${ADMIN}/operators/${console.operatorId}/disable`, {
            bearer: ADMIN_TOKEN
          })
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

      it.effect("only owners and the admin token manage operators; an operator runs the business and reads no link", () =>
        Effect.gen(function*() {
          const operator = yield* newOperator
          const owner = yield* operatorOf("owner")
          const mine = yield* call(operator, "GET", `${CONSOLE}/session`)
          assert.strictEqual(mine.json.operator.role, "operator", "the default role")
          assert.strictEqual((yield* call(owner, "GET", `${CONSOLE}/session`)).json.operator.role, "owner")
          // An operator sees who the operators are...
          const listed = yield* call(operator, "GET", `${ADMIN}/operators`)
          assert.strictEqual(listed.status, 200)
          assert.strictEqual(listed.json.operators.find((o: any) => o.id === owner.operatorId).role, "owner")
          // ...and manages none of them, themselves included: 403, nothing changes, nothing logged.
          const backdoor = { email: freshEmail(), name: "Backdoor", password: PASSWORD, role: "owner" }
          const refusals = [
            yield* call(operator, "POST", `${ADMIN}/operators`, { body: backdoor }),
            yield* call(operator, "POST", `${ADMIN}/operators/${owner.operatorId}/password`, {
              body: { password: "taken over 12345" }
            }),
            yield* call(operator, "POST", `${ADMIN}/operators/${owner.operatorId}/disable`),
            yield* call(operator, "PATCH", `${ADMIN}/operators/${operator.operatorId}`, { body: { role: "owner" } })
          ]
          for (const refused of refusals) {
            assert.strictEqual(refused.status, 403, refused.text)
            assert.strictEqual(refused.json.code, "forbidden")
          }
          assert.strictEqual((yield* signIn(backdoor.email)).status, 401, "no operator was created")
          assert.strictEqual((yield* signIn(owner.email)).status, 200, "the owner's password is unchanged")
          assert.strictEqual((yield* call(owner, "GET", `${CONSOLE}/session`)).status, 200, "the owner not disabled")
          assert.lengthOf(yield* actions(`target_id=${owner.operatorId}&action=operator.password_reset`), 0)
          // The business is theirs to run: accounts, money, the outbox (without a live link).
          const account = yield* newAccount(0n)
          const funded = yield* call(operator, "POST", `${ADMIN}/accounts/${account.id}/wallet/fund`, {
            body: { amount: 5 }
          })
          assert.strictEqual(funded.status, 200, funded.text)
          const holder = freshEmail()
          yield* raw("POST", "/dashboard/v1/register", {
            body: { name: "Ama", email: holder, phone: "0241234567", password: PASSWORD }
          })
          yield* raw("POST", "/dashboard/v1/password/forgot", { body: { email: holder } })
          const outbox = yield* call(operator, "GET", `${ADMIN}/emails?to=${encodeURIComponent(holder)}`)
          assert.strictEqual(outbox.status, 200)
          assert.deepStrictEqual(outbox.json.emails.map((m: any) => m.kind), ["reset_password", "verify_email"])
          for (const kind of ["verify_email", "reset_password"]) {
            const token = /token=([A-Za-z0-9_-]+)/.exec((yield* mailed(holder, kind)).link!)![1]!
            assert.notInclude(outbox.text, token)
          }
          for (const mail of outbox.json.emails) assert.match(mail.link, /[?]token=\[hidden\]$/)

          // An owner manages operators: creates one (an operator unless asked), sets roles, disables.
          const made = yield* call(owner, "POST", `${ADMIN}/operators`, {
            body: { email: freshEmail(), name: "New hire", password: PASSWORD }
          })
          assert.strictEqual(made.status, 201, made.text)
          assert.strictEqual(made.json.operator.role, "operator")
          const promoted = yield* call(owner, "PATCH", `${ADMIN}/operators/${operator.operatorId}`, {
            body: { role: "owner" }
          })
          assert.strictEqual(promoted.status, 200, promoted.text)
          assert.strictEqual(promoted.json.operator.role, "owner")
          const [line] = yield* actions(`action=operator.role&target_id=${operator.operatorId}`)
          assert.strictEqual(line.operator_id, owner.operatorId)
          // The promotion bites at once, on the session already open.
          const now = yield* call(operator, "POST", `${ADMIN}/operators/${made.json.operator.id}/disable`)
          assert.strictEqual(now.status, 200, now.text)
          const badRole = yield* call(owner, "PATCH", `${ADMIN}/operators/${operator.operatorId}`, {
            body: { role: "admin" }
          })
          assert.strictEqual(badRole.status, 422)
          assert.deepStrictEqual(badRole.json.errors.role, ["role must be one of owner, operator"])
          // The admin token manages operators whatever its caller.
          const demoted = yield* raw("PATCH", `${ADMIN}/operators/${operator.operatorId}`, {
            bearer: ADMIN_TOKEN,
            body: { role: "operator" }
          })
          assert.strictEqual(demoted.json.operator.role, "operator")
          assert.strictEqual(
            (yield* call(operator, "POST", `${ADMIN}/operators/${owner.operatorId}/disable`)).status,
            403
          )
        }))

      it.effect("an operator changes their own password: the current one checked, their other sessions ended", () =>
        Effect.gen(function*() {
          const console = yield* newOperator
          const other = yield* signIn(console.email)
          const elsewhere = { ...console, cookie: cookieOf(other.headers["set-cookie"]), csrf: other.json.csrf_token }
          const next = "a brand new pass phrase"
          // Without the CSRF token: 403, nothing changes.
          const forged = yield* call(console, "POST", `${CONSOLE}/password`, {
            csrf: null,
            body: { current_password: PASSWORD, new_password: next }
          })
          assert.strictEqual(forged.status, 403, forged.text)
          // A wrong current password: 422 at its field, nothing changes.
          const wrong = yield* call(console, "POST", `${CONSOLE}/password`, {
            body: { current_password: "not the password", new_password: next }
          })
          assert.strictEqual(wrong.status, 422, wrong.text)
          assert.strictEqual(wrong.json.success, false)
          assert.deepStrictEqual(Object.keys(wrong.json.errors), ["current_password"])
          // A new password too short: 422 at its field.
          const short = yield* call(console, "POST", `${CONSOLE}/password`, {
            body: { current_password: PASSWORD, new_password: "short" }
          })
          assert.strictEqual(short.status, 422, short.text)
          assert.include(Object.keys(short.json.errors), "new_password")
          // Without a session: 401.
          const anonymous = yield* call(undefined, "POST", `${CONSOLE}/password`, {
            body: { current_password: PASSWORD, new_password: next }
          })
          assert.strictEqual(anonymous.status, 401, anonymous.text)
          assert.strictEqual((yield* call(elsewhere, "GET", `${CONSOLE}/session`)).status, 200)
          assert.lengthOf(yield* actions(`action=operator.password_change&target_id=${console.operatorId}`), 0)

          const changed = yield* call(console, "POST", `${CONSOLE}/password`, {
            body: { current_password: PASSWORD, new_password: next }
          })
          assert.strictEqual(changed.status, 200, changed.text)
          assert.strictEqual(changed.json.success, true)
          // This session goes on; the other one has ended.
          assert.strictEqual((yield* call(console, "GET", `${CONSOLE}/session`)).status, 200)
          assert.strictEqual((yield* call(elsewhere, "GET", `${CONSOLE}/session`)).status, 401)
          assert.strictEqual((yield* signIn(console.email)).status, 401)
          assert.strictEqual((yield* signIn(console.email, next)).status, 200)
          const [line, ...more] = yield* actions(`action=operator.password_change&target_id=${console.operatorId}`)
          assert.lengthOf(more, 0)
          assert.strictEqual(line.actor_kind, "operator")
          assert.strictEqual(line.operator_id, console.operatorId)
          assert.notInclude(JSON.stringify(line), next)
        }))

      it.effect("the admin sets a new password for an operator: every session of theirs ends, logged", () =>
        Effect.gen(function*() {
          const console = yield* newOperator
          const next = "given by the admin 123"
          const path = `${ADMIN}/operators/${console.operatorId}/password`
          const short = yield* raw("POST", path, { bearer: ADMIN_TOKEN, body: { password: "short" } })
          assert.strictEqual(short.status, 422, short.text)
          const missing = yield* raw("POST", `${ADMIN}/operators/2147483647/password`, {
            bearer: ADMIN_TOKEN,
            body: { password: next }
          })
          assert.strictEqual(missing.status, 404, missing.text)
          const unauthenticated = yield* raw("POST", path, { body: { password: next } })
          assert.strictEqual(unauthenticated.status, 401, unauthenticated.text)
          assert.strictEqual((yield* call(console, "GET", `${CONSOLE}/session`)).status, 200)
          assert.strictEqual((yield* signIn(console.email)).status, 200)

          const reset = yield* raw("POST", path, { bearer: ADMIN_TOKEN, body: { password: next } })
          assert.strictEqual(reset.status, 200, reset.text)
          assert.strictEqual(reset.json.operator.id, console.operatorId)
          assert.notInclude(reset.text, next)
          assert.strictEqual((yield* call(console, "GET", `${CONSOLE}/session`)).status, 401)
          assert.strictEqual((yield* signIn(console.email)).status, 401)
          assert.strictEqual((yield* signIn(console.email, next)).status, 200)
          const [line, ...more] = yield* actions(`action=operator.password_reset&target_id=${console.operatorId}`)
          assert.lengthOf(more, 0)
          assert.strictEqual(line.actor_kind, "token")
          assert.notInclude(JSON.stringify(line), next)
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
          const suspend = yield* call(console, "PATCH", `${ADMIN}/accounts/${account.id}`, {
            body: { status: "suspended" }
          })
          assert.strictEqual(suspend.status, 200)
          const updates = yield* actions(`${target}&action=account.update`)
          assert.lengthOf(updates, 1)
          assert.match(updates[0].summary, /status suspended/)
          assert.deepStrictEqual(updates[0].detail, { status: "suspended" })
          const reseller = yield* resellerClient(account.key)
          const blocked = yield* Effect.either(reseller.wallet.balance())
          assert.isTrue(blocked._tag === "Left", "the suspended account's key is refused")
          yield* call(console, "PATCH", `${ADMIN}/accounts/${account.id}`, { body: { status: "active" } })

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

    // A database of its own, where orders stay pending until resolved: the figures are known.
    layer(serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "600" }), {
      timeout: 120_000,
      excludeTestServices: true
    })((it) => {
      it.effect("gives the figures for the charts from a known set of orders; refuses ranges out of bounds", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const networks = yield* seedCatalog
          const buyer = yield* newAccount(100_00n)
          const client = yield* resellerClient(buyer.key)
          const listed = (yield* client.catalog.networks()).networks
          const mtn = listed.find((n) => n.slug === "mtn")!
          const { bundles } = yield* client.catalog.bundles({ path: { network_id: mtn.id } })
          const bundle = bundles.find((b) => b.is_active)!
          const place = (phone: string) =>
            Effect.map(
              raw("POST", "/api/v1/orders", { key: buyer.key, body: { bundle_id: bundle.id, phone_number: phone } }),
              (response) => {
                assert.strictEqual(response.status, 200, response.text)
                return response.json.order.order_number as string
              }
            )
          // Numbers ending in 9999 stay pending with the simulator until resolved.
          const won = yield* place("0241119999")
          const lost = yield* place("0242229999")
          yield* place("0243339999")
          const old = yield* place("0244449999")
          assert.strictEqual(
            (yield* raw("POST", `${ADMIN}/orders/${won}/resolve`, {
              bearer: ADMIN_TOKEN,
              body: { status: "successful" }
            }))
              .status,
            200
          )
          // Failed by an operator, with a reason: refunded once, one line in the log; the repeat is a 409 with none.
          const console = yield* newOperator
          const fail = () =>
            call(console, "POST", `${ADMIN}/orders/${lost}/resolve`, {
              body: { status: "failed", note: "upstream never delivered" }
            })
          assert.strictEqual((yield* fail()).status, 200)
          assert.strictEqual((yield* fail()).status, 409)
          const resolved = yield* actions(`action=order.resolve&target_id=${lost}`)
          assert.lengthOf(resolved, 1)
          assert.strictEqual(resolved[0].account_id, buyer.id)
          assert.strictEqual(resolved[0].operator_id, console.operatorId)
          assert.match(resolved[0].summary, /failed: upstream never delivered/)
          const refunds = (yield* raw("GET", `${ADMIN}/accounts/${buyer.id}/ledger`, { bearer: ADMIN_TOKEN })).json
            .entries.filter((e: any) => e.reason === "refund")
          assert.lengthOf(refunds, 1, "refunded once")
          assert.strictEqual(refunds[0].note, "upstream never delivered")
          // One order placed three days ago (UTC), still pending: a day of its own, the oldest age bucket.
          yield* sql`UPDATE orders SET created_at = now() - interval '3 days' WHERE order_number = ${old}`
          // A date moved by hand is no write the console's rollups follow: its count moves with it.
          yield* sql`
            INSERT INTO stats_order_days (day, bundle_id, network_name, shard, orders, successful, sales)
            SELECT m.day, o.bundle_id, o.network_name, o.account_id % 16, m.orders, 0, 0
            FROM orders o CROSS JOIN LATERAL (VALUES ((now() AT TIME ZONE 'UTC')::date, -1),
              ((o.created_at AT TIME ZONE 'UTC')::date, 1)) AS m(day, orders)
            WHERE o.order_number = ${old}
          `.pipe(Effect.asVoid)
          assert.isDefined(networks)

          // The pending queue: oldest first, and only those stuck longer than an hour.
          const queue = (query: string) =>
            Effect.map(raw("GET", `${ADMIN}/orders?status=pending&${query}`, { bearer: ADMIN_TOKEN }), (r) => {
              assert.strictEqual(r.status, 200, r.text)
              return r.json.orders.map((o: any) => o.order_number) as Array<string>
            })
          assert.strictEqual((yield* queue("sort=oldest"))[0], old)
          assert.notStrictEqual((yield* queue("sort=newest"))[0], old)
          assert.deepStrictEqual(yield* queue("older_than=60"), [old])
          assert.strictEqual((yield* raw("GET", `${ADMIN}/orders?sort=up`, { bearer: ADMIN_TOKEN })).status, 422)
          assert.strictEqual((yield* raw("GET", `${ADMIN}/orders?older_than=0`, { bearer: ADMIN_TOKEN })).status, 422)

          const response = yield* raw("GET", `${ADMIN}/stats?days=7&hours=6`, { bearer: ADMIN_TOKEN })
          assert.strictEqual(response.status, 200, response.text)
          const stats = response.json
          // The typed client reads pesewas; the API answers in cedis.
          const price = Number(bundle.price) / 100
          const today = new Date().toISOString().slice(0, 10)
          const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10)
          assert.lengthOf(stats.daily, 7)
          assert.strictEqual(stats.daily[6].date, today)
          assert.deepStrictEqual(stats.daily[6], {
            date: today,
            orders: 3,
            sales: price,
            refunds: price,
            funding: 100,
            commissions: 0
          })
          const back = stats.daily.find((d: any) => d.date === threeDaysAgo)
          assert.deepStrictEqual(back, {
            date: threeDaysAgo,
            orders: 1,
            sales: 0,
            refunds: 0,
            funding: 0,
            commissions: 0
          })
          assert.strictEqual(
            stats.daily.reduce((n: number, d: any) => n + d.orders, 0),
            4,
            "every other day is present, with zeros"
          )
          assert.lengthOf(stats.orders_per_hour, 6)
          const thisHour = stats.orders_per_hour[5]
          assert.deepStrictEqual(
            { pending: thisHour.pending, successful: thisHour.successful, failed: thisHour.failed },
            { pending: 1, successful: 1, failed: 1 }
          )
          assert.strictEqual(new Date(thisHour.hour).getUTCMinutes(), 0)
          assert.deepStrictEqual(stats.sales_by_network, [{
            network_id: mtn.id,
            name: mtn.name,
            orders: 1,
            sales: price
          }])
          assert.deepStrictEqual(stats.pending_age, [
            { label: "<1m", count: 1 },
            { label: "1-5m", count: 0 },
            { label: "5-30m", count: 0 },
            { label: "30m-2h", count: 0 },
            { label: ">2h", count: 1 }
          ])
          const defaults = (yield* raw("GET", `${ADMIN}/stats`, { bearer: ADMIN_TOKEN })).json
          assert.lengthOf(defaults.daily, 30)
          assert.lengthOf(defaults.orders_per_hour, 24)
          for (const query of ["days=0", "days=91", "hours=0", "hours=169", "days=x", "days=7&days=8"]) {
            const refused = yield* raw("GET", `${ADMIN}/stats?${query}`, { bearer: ADMIN_TOKEN })
            assert.strictEqual(refused.status, 422, query)
            assert.strictEqual(refused.json.success, false)
          }
        }))

      it.scoped("shows webhook health per endpoint, lists abandoned deliveries and resends one (logged)", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const failing = yield* receiver(503)
          const account = yield* newAccount(0n)
          const quiet = yield* newAccount(0n)
          const patch = (id: number, body: unknown) =>
            raw("PATCH", `${ADMIN}/accounts/${id}`, { bearer: ADMIN_TOKEN, body })
          assert.strictEqual((yield* patch(account.id, { webhook_url: failing.url })).status, 200)
          assert.strictEqual((yield* patch(quiet.id, { webhook_url: "http://127.0.0.1:9/none" })).status, 200)
          const fund = () =>
            raw("POST", `${ADMIN}/accounts/${account.id}/wallet/fund`, { bearer: ADMIN_TOKEN, body: { amount: 1 } })
          assert.strictEqual((yield* fund()).status, 200)
          assert.strictEqual((yield* fund()).status, 200)
          // Wait for the first attempts to fail.
          let health: any
          for (let i = 0; i < 100; i++) {
            health = (yield* raw("GET", `${ADMIN}/webhooks`, { bearer: ADMIN_TOKEN })).json
            const row = health.endpoints.find((e: any) => e.account_id === account.id)
            if (row?.last_status === 503 && row.failing_since !== null) break
            yield* Effect.sleep("100 millis")
          }
          const row = health.endpoints.find((e: any) => e.account_id === account.id)
          assert.strictEqual(row.url, failing.url)
          assert.strictEqual(row.backlog, 2)
          assert.strictEqual(row.last_status, 503)
          assert.isString(row.failing_since)
          assert.isString(row.oldest_queued_at)
          assert.strictEqual(row.abandoned, 0)
          assert.strictEqual(health.endpoints[0].account_id, account.id, "failing endpoints first")
          const calm = health.endpoints.find((e: any) => e.account_id === quiet.id)
          assert.deepStrictEqual(
            { backlog: calm.backlog, failing_since: calm.failing_since, abandoned: calm.abandoned },
            { backlog: 0, failing_since: null, abandoned: 0 }
          )

          // The retry window closes on one of them (as the worker would mark it).
          const [event] = yield* sql<{ id: string }>`
            UPDATE webhook_events SET abandoned_at = now(), next_attempt_at = NULL
            WHERE id = (SELECT id FROM webhook_events WHERE account_id = ${account.id} ORDER BY seq LIMIT 1)
            RETURNING id
          `
          const after = (yield* raw("GET", `${ADMIN}/webhooks`, { bearer: ADMIN_TOKEN })).json
          const now = after.endpoints.find((e: any) => e.account_id === account.id)
          assert.strictEqual(now.abandoned, 1)
          assert.strictEqual(now.backlog, 1)
          const abandoned = yield* raw(
            "GET",
            `${ADMIN}/accounts/${account.id}/webhook/deliveries?state=abandoned`,
            { bearer: ADMIN_TOKEN }
          )
          assert.strictEqual(abandoned.status, 200, abandoned.text)
          assert.deepStrictEqual(abandoned.json.deliveries.map((d: any) => d.id), [event!.id])
          assert.strictEqual(abandoned.json.deliveries[0].state, "abandoned")
          assert.strictEqual(
            (yield* raw("GET", `${ADMIN}/accounts/2147483647/webhook/deliveries`, { bearer: ADMIN_TOKEN })).status,
            404
          )
          assert.strictEqual(
            (yield* raw("GET", `${ADMIN}/accounts/${account.id}/webhook/deliveries?state=lost`, {
              bearer: ADMIN_TOKEN
            }))
              .status,
            422
          )

          // Resend by an operator: queued again, one line in the log; an unknown event is a 404 with none.
          const console = yield* newOperator
          const resent = yield* call(
            console,
            "POST",
            `${ADMIN}/accounts/${account.id}/webhook/deliveries/${event!.id}/resend`
          )
          assert.strictEqual(resent.status, 202, resent.text)
          assert.notStrictEqual(resent.json.delivery.state, "abandoned")
          const missing = yield* call(
            console,
            "POST",
            `${ADMIN}/accounts/${account.id}/webhook/deliveries/evt_nothing/resend`
          )
          assert.strictEqual(missing.status, 404)
          const other = yield* call(
            console,
            "POST",
            `${ADMIN}/accounts/${quiet.id}/webhook/deliveries/${event!.id}/resend`
          )
          assert.strictEqual(other.status, 404, "another account's event")
          const lines = yield* actions(`action=webhook.resend&account_id=${account.id}`)
          assert.lengthOf(lines, 1)
          assert.strictEqual(lines[0].target_id, event!.id)
          assert.strictEqual(lines[0].operator_id, console.operatorId)
          assert.lengthOf(yield* actions(`action=webhook.resend&account_id=${quiet.id}`), 0)
        }))

      it.effect("lists the catalogue by id, activates and reprices one network or bundle at a time (logged)", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const console = yield* newOperator
          const listed = yield* call(console, "GET", `${ADMIN}/networks`)
          assert.strictEqual(listed.status, 200, listed.text)
          const network = listed.json.networks.find((n: any) => n.slug === "telecel")
          const bundle = network.bundles[0]
          assert.strictEqual(bundle.network_id, network.id)
          assert.isNumber(bundle.price)
          assert.isObject(bundle.prices)
          const agent = yield* newAccount(0n, { priceGroup: "agent" })
          const agentClient = yield* resellerClient(agent.key)
          const agentPrice = () =>
            Effect.map(
              agentClient.catalog.bundles({ path: { network_id: network.id } }),
              // The typed client reads prices in pesewas.
              ({ bundles }) => Number(bundles.find((b) => b.id === bundle.id)!.price)
            )

          // A price for the agent group, a new base price, and deactivation in one change.
          const changed = yield* call(console, "PATCH", `${ADMIN}/bundles/${bundle.id}`, {
            body: { active: false, price: bundle.price + 1, prices: { agent: 1.25 } }
          })
          assert.strictEqual(changed.status, 200, changed.text)
          assert.strictEqual(changed.json.bundle.active, false)
          assert.strictEqual(changed.json.bundle.price, bundle.price + 1)
          assert.strictEqual(changed.json.bundle.prices.agent, 1.25)
          assert.strictEqual(yield* agentPrice(), 125)
          const [line] = yield* actions(`action=bundle.update&target_id=${bundle.id}`)
          assert.strictEqual(line.operator_id, console.operatorId)
          assert.match(line.summary, /deactivated/)
          assert.match(line.summary, /agent .* -> GHS 1\.25/)
          assert.deepStrictEqual(line.detail.prices, { agent: "1.25" })

          // Removing the group's price: it pays the base price again.
          const removed = yield* call(console, "PATCH", `${ADMIN}/bundles/${bundle.id}`, {
            body: { prices: { agent: null }, active: true }
          })
          assert.strictEqual(removed.status, 200)
          assert.notProperty(removed.json.bundle.prices, "agent")
          assert.strictEqual(yield* agentPrice(), Math.round((bundle.price + 1) * 100))

          // Refused changes change nothing and write nothing.
          const before = (yield* actions(`action=bundle.update&target_id=${bundle.id}`)).length
          const unknownGroup = yield* call(console, "PATCH", `${ADMIN}/bundles/${bundle.id}`, {
            body: { active: false, prices: { wholesale: 2 } }
          })
          assert.strictEqual(unknownGroup.status, 422)
          assert.isArray(unknownGroup.json.errors["prices.wholesale"])
          const zero = yield* call(console, "PATCH", `${ADMIN}/bundles/${bundle.id}`, { body: { price: 0 } })
          assert.strictEqual(zero.status, 422)
          assert.strictEqual(
            (yield* call(console, "PATCH", `${ADMIN}/bundles/2147483647`, { body: { active: true } })).status,
            404
          )
          assert.strictEqual(
            (yield* call(console, "PATCH", `${ADMIN}/bundles/${bundle.id}`, { body: { active: false }, csrf: null }))
              .status,
            403
          )
          assert.lengthOf(yield* actions(`action=bundle.update&target_id=${bundle.id}`), before)
          const still = (yield* call(console, "GET", `${ADMIN}/networks`)).json.networks
            .find((n: any) => n.id === network.id).bundles.find((b: any) => b.id === bundle.id)
          assert.strictEqual(still.active, true)

          // A network off and on again: resellers stop seeing it.
          const off = yield* call(console, "PATCH", `${ADMIN}/networks/${network.id}`, { body: { active: false } })
          assert.strictEqual(off.status, 200, off.text)
          assert.strictEqual(off.json.network.active, false)
          const seen = (yield* agentClient.catalog.networks()).networks.map((n) => n.id)
          assert.notInclude(seen, network.id)
          assert.strictEqual(
            (yield* call(console, "PATCH", `${ADMIN}/networks/${network.id}`, { body: { active: true } })).status,
            200
          )
          assert.strictEqual(
            (yield* call(console, "PATCH", `${ADMIN}/networks/2147483647`, { body: { active: true } })).status,
            404
          )
          assert.strictEqual(
            (yield* call(console, "PATCH", `${ADMIN}/networks/${network.id}`, { body: { active: "yes" } })).status,
            422
          )
          const networkLines = yield* actions(`action=network.update&target_id=${network.id}`)
          assert.lengthOf(networkLines, 2)
          assert.match(networkLines[1].summary, /Deactivated network Telecel/)
        }))

      it.effect("a change and its log line commit together: a failed line undoes the change, nested or not", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const account = yield* newAccount(0n)
          const { logged } = yield* ActionLog.make.pipe(Effect.provide(OperatorActions.OperatorActions.Default))
          const nameOf = Effect.map(
            sql<{ name: string }>`SELECT name FROM accounts WHERE id = ${account.id}`,
            (rows) => rows[0]!.name
          )
          const lines = Effect.map(
            sql<{ n: string }>`
              SELECT count(*) AS n FROM operator_actions WHERE account_id = ${account.id} AND action = 'account.update'
            `,
            (rows) => Number(rows[0]!.n)
          )
          // The change opens its own transaction (a savepoint inside the log's), as the domain's do.
          const rename = (name: string) =>
            sql.withTransaction(sql`UPDATE accounts SET name = ${name} WHERE id = ${account.id}`).pipe(Effect.orDie)
          const failed = yield* Effect.exit(logged(rename("Never Kept"), () => {
            throw new Error("the log line cannot be written")
          }))
          assert.isTrue(Exit.isFailure(failed))
          assert.strictEqual(yield* nameOf, "E2E Reseller", "the change was rolled back with its line")
          assert.strictEqual(yield* lines, 0)
          yield* logged(rename("Kept"), () => ({
            action: "account.update" as const,
            targetKind: "account" as const,
            targetId: account.id,
            accountId: account.id,
            summary: "renamed"
          }))
          assert.strictEqual(yield* nameOf, "Kept")
          assert.strictEqual(yield* lines, 1)
        }))

      it.effect("searches accounts by name, email, phone or id", () =>
        Effect.gen(function*() {
          const named = yield* raw("POST", `${ADMIN}/accounts`, {
            bearer: ADMIN_TOKEN,
            body: { name: "Zebra Data Hub" }
          })
          const id = named.json.id
          const search = (q: string) =>
            Effect.map(
              raw("GET", `${ADMIN}/accounts?search=${encodeURIComponent(q)}`, { bearer: ADMIN_TOKEN }),
              (response) => {
                assert.strictEqual(response.status, 200, response.text)
                return response.json.accounts.map((a: any) => a.id) as Array<number>
              }
            )
          assert.deepStrictEqual(yield* search("zebra data"), [id])
          assert.include(yield* search(String(id)), id)
          assert.deepStrictEqual(yield* search("no such account anywhere"), [])
          assert.deepStrictEqual(yield* search("100%_"), [], "LIKE wildcards are taken literally")
          const email = freshEmail()
          const registered = yield* raw("POST", "/dashboard/v1/register", {
            body: { name: "Akua", email, phone: "0501112233", password: PASSWORD }
          })
          assert.strictEqual(registered.status, 201)
          const byEmail = yield* search(email.toUpperCase())
          assert.lengthOf(byEmail, 1)
          assert.deepStrictEqual(yield* search("233501112233"), byEmail)
          assert.deepStrictEqual(yield* search("050 111 2233"), byEmail)
          assert.strictEqual(
            (yield* raw("GET", `${ADMIN}/accounts?search=`, { bearer: ADMIN_TOKEN })).status,
            422
          )
        }))

      it.effect("shows an account's holder and a payment's account by name; lists the price groups", () =>
        Effect.gen(function*() {
          const console = yield* newOperator
          const email = freshEmail()
          const registered = yield* raw("POST", "/dashboard/v1/register", {
            body: { name: "Adwoa Sarpong", email, phone: "0541112233", password: PASSWORD }
          })
          assert.strictEqual(registered.status, 201)
          const [id] = (yield* call(console, "GET", `${ADMIN}/accounts?search=${encodeURIComponent(email)}`)).json
            .accounts.map((a: any) => a.id)
          const detail = yield* call(console, "GET", `${ADMIN}/accounts/${id}`)
          assert.deepStrictEqual(detail.json.holder, { name: "Adwoa Sarpong", email, phone: "0541112233" })
          const made = yield* raw("POST", `${ADMIN}/accounts`, { bearer: ADMIN_TOKEN, body: { name: "No Holder" } })
          assert.isNull((yield* call(console, "GET", `${ADMIN}/accounts/${made.json.id}`)).json.holder)

          // The holder asks for a manual transfer: the operator sees it under the account's name.
          const mail = yield* mailed(email, "verify_email")
          const token = /token=([A-Za-z0-9_-]+)/.exec(mail.link!)![1]
          assert.strictEqual((yield* raw("POST", "/dashboard/v1/email/verify", { body: { token } })).status, 200)
          const session = yield* raw("POST", "/dashboard/v1/session", { body: { email, password: PASSWORD } })
          const cookie = /bundles_session=([^;]*)/.exec(session.headers["set-cookie"]!)![1]
          const transfer = yield* raw("POST", "/dashboard/v1/payments", {
            body: { method: "manual_transfer", amount: 40 },
            headers: {
              cookie: `${Session.SESSION_COOKIE}=${cookie}`,
              [Session.CSRF_HEADER]: session.json.csrf_token,
              "idempotency-key": `name-${Date.now()}`
            }
          })
          assert.strictEqual(transfer.status, 201, transfer.text)
          const number = transfer.json.payment.payment_number
          const waiting = (yield* call(console, "GET", `${ADMIN}/payments?status=pending&method=manual_transfer`)).json
          assert.strictEqual(
            waiting.payments.find((p: any) => p.payment_number === number).account_name,
            "Adwoa Sarpong"
          )
          assert.strictEqual((yield* call(console, "GET", `${ADMIN}/payments/${number}`)).json.payment.account_id, id)

          const groups = yield* call(console, "GET", `${ADMIN}/price-groups`)
          assert.strictEqual(groups.status, 200, groups.text)
          assert.includeMembers(groups.json.price_groups, ["agent"])
          assert.deepStrictEqual(groups.json.price_groups, [...groups.json.price_groups].sort())
        }))

      it.effect("an owner cannot disable themselves (409, nothing changed) but can disable another operator", () =>
        Effect.gen(function*() {
          const console = yield* operatorOf("owner")
          const self = yield* call(console, "POST", `${ADMIN}/operators/${console.operatorId}/disable`)
          assert.strictEqual(self.status, 409, self.text)
          assert.match(self.json.message, /cannot disable yourself/)
          assert.strictEqual((yield* call(console, "GET", `${CONSOLE}/session`)).status, 200)
          assert.deepStrictEqual(yield* actions(`action=operator.disable&target_id=${console.operatorId}`), [])
          const other = yield* newOperator
          assert.strictEqual(
            (yield* call(console, "POST", `${ADMIN}/operators/${other.operatorId}/disable`)).status,
            200
          )
        }))
    })
  })
}

/** A webhook receiver on 127.0.0.1 answering every request with `status`. */
const receiver = (status: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = http.createServer((request, response) => {
        request.resume()
        request.on("end", () => response.writeHead(status).end())
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const address = server.address() as { port: number }
      return { server, url: `http://127.0.0.1:${address.port}/hook` }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )
