/**
 * Password guesses sent all at once, from several addresses, against the built server: the
 * dashboard's and the console's sign-in, and the current-password check of "change password"
 * on both. Every attempt takes its slot before its password is checked, so a burst is held to
 * the limits exactly as guesses sent one by one are; a browser that signed in before still
 * signs in while its email address is locked out elsewhere. On PGlite (counts in memory) and on
 * Postgres (counts in the database) when TEST_DATABASE_URL is set.
 */
import { ConsoleApi, DashboardApi, Operator, Session } from "@databundle/contract"
import { freshDatabase } from "@databundle/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"

const ADMIN_TOKEN = "adm_bursts_token_for_the_process_suite"
const PASSWORD = "correct horse battery"
const DASHBOARD = DashboardApi.DASHBOARD_PREFIX
const CONSOLE = ConsoleApi.CONSOLE_PREFIX

interface Answer {
  readonly status: number
  readonly json: any
  readonly cookies: Readonly<Record<string, string>>
}

/** One request to the server from the local address `from` (127.x.y.z: a client of its own). */
const send = (
  base: string,
  from: string,
  method: string,
  route: string,
  options: { readonly body?: unknown; readonly headers?: Record<string, string> } = {}
) =>
  Effect.async<Answer>((resume) => {
    const url = new URL(route, base)
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      method,
      localAddress: from,
      agent: false,
      headers: {
        accept: "application/json",
        ...(body === undefined
          ? {}
          : { "content-type": "application/json", "content-length": Buffer.byteLength(body) }),
        ...options.headers
      }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => text += chunk)
      response.on("end", () => {
        const cookies: Record<string, string> = {}
        for (const line of response.headers["set-cookie"] ?? []) {
          const [pair] = line.split(";")
          const at = pair!.indexOf("=")
          cookies[pair!.slice(0, at)] = pair!.slice(at + 1)
        }
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        resume(Effect.succeed({ status: response.statusCode ?? 0, json, cookies }))
      })
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.end(body)
  })

/** How many answers had each status. */
const tally = (answers: ReadonlyArray<Answer>) => {
  const counts: Record<number, number> = {}
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

/** `count` requests from each address, all sent at once. */
const burst = (addresses: ReadonlyArray<string>, count: number, request: (from: string) => Effect.Effect<Answer>) =>
  Effect.all(
    addresses.flatMap((from) =>
      Array.from({ length: count }, () => Effect.map(request(from), (a) => ({ ...a, from })))
    ),
    { concurrency: "unbounded" }
  )

const targets = [
  { name: "pglite", env: Effect.succeed({}) },
  ...(process.env.TEST_DATABASE_URL
    ? [{
      name: "postgres",
      env: Effect.map(freshDatabase(process.env.TEST_DATABASE_URL), (url) => ({
        DATABASE_URL: url,
        BUNDLES_RATE_LIMIT_STORE: "database"
      }))
    }]
    : [])
]

for (const target of targets) {
  describe(`password guesses in bursts against the built server on ${target.name}`, () => {
    it.scopedLive(
      "are held to the limits before any password is checked; a known browser still signs in",
      () =>
        Effect.gen(function*() {
          const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-bursts-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
          const server = yield* Processes.start({
            ...(yield* target.env),
            BUNDLES_DATA_DIR: dataDir,
            BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN,
            // The holder's verification link comes through the demo mailbox (loopback, no SMTP).
            BUNDLES_DEMO_MAILBOX: "1"
          })
          const base = server.url

          // A verified holder, signed in once from a browser of theirs.
          const email = `burst${Date.now().toString(36)}@example.com`
          const registered = yield* send(base, "127.0.0.1", "POST", `${DASHBOARD}/register`, {
            body: { name: "Ama Mensah", email, phone: "0241234567", password: PASSWORD }
          })
          assert.strictEqual(registered.status, 201)
          const mailbox = yield* send(base, "127.0.0.1", "GET", `${DASHBOARD}/demo/mailbox?email=${email}`)
          const token = /token=([A-Za-z0-9_-]+)/.exec(mailbox.json.emails[0].link)![1]!
          assert.strictEqual(
            (yield* send(base, "127.0.0.1", "POST", `${DASHBOARD}/email/verify`, { body: { token } })).status,
            200
          )
          const first = yield* send(base, "127.0.0.9", "POST", `${DASHBOARD}/session`, {
            body: { email, password: PASSWORD }
          })
          assert.strictEqual(first.status, 200)
          const knownBrowser = first.cookies[Session.BROWSER_COOKIE]
          assert.isDefined(knownBrowser, "the browser that signed in is remembered")

          // 36 wrong passwords at once from 4 addresses: 5 checked per address, 20 for the email.
          const guesses = yield* burst(["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"], 9, (from) =>
            send(base, from, "POST", `${DASHBOARD}/session`, { body: { email, password: "wrong password!" } }))
          assert.deepStrictEqual(tally(guesses), { 401: 20, 429: 16 })
          for (const from of ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]) {
            assert.strictEqual(
              guesses.filter((g) =>
                g.from === from && g.status === 401
              ).length,
              5,
              from
            )
          }
          // The email address is locked out from anywhere else, the right password included...
          const elsewhere = yield* send(base, "127.0.0.6", "POST", `${DASHBOARD}/session`, {
            body: { email, password: PASSWORD }
          })
          assert.strictEqual(elsewhere.status, 429)
          assert.match(elsewhere.json.message, /for this email address/)
          // ...but not from the browser its owner signed in with before.
          const owner = yield* send(base, "127.0.0.6", "POST", `${DASHBOARD}/session`, {
            body: { email, password: PASSWORD },
            headers: { cookie: `${Session.BROWSER_COOKIE}=${knownBrowser}` }
          })
          assert.strictEqual(owner.status, 200, JSON.stringify(owner.json))

          // 12 wrong current passwords at once through the owner's session: 5 checked.
          const session = {
            cookie: `${Session.SESSION_COOKIE}=${owner.cookies[Session.SESSION_COOKIE]}`,
            [Session.CSRF_HEADER]: owner.json.csrf_token as string
          }
          const checks = yield* burst(["127.0.0.6"], 12, (from) =>
            send(base, from, "POST", `${DASHBOARD}/password`, {
              body: { current_password: "not my password", new_password: "a brand new password" },
              headers: session
            }))
          assert.deepStrictEqual(tally(checks), { 422: 5, 429: 7 })

          // The console: an operator, signed in once; 75 guesses at once from 5 addresses.
          const operatorEmail = `op${Date.now().toString(36)}@example.com`
          const created = yield* send(base, "127.0.0.1", "POST", "/admin/v1/operators", {
            body: { email: operatorEmail, name: "Kofi", password: PASSWORD },
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
          })
          assert.strictEqual(created.status, 201)
          const signedIn = yield* send(base, "127.0.1.9", "POST", `${CONSOLE}/session`, {
            body: { email: operatorEmail, password: PASSWORD }
          })
          assert.strictEqual(signedIn.status, 200)
          const operatorBrowser = signedIn.cookies[Operator.OPERATOR_BROWSER_COOKIE]
          assert.isDefined(operatorBrowser)
          const consoleAddresses = ["127.0.1.2", "127.0.1.3", "127.0.1.4", "127.0.1.5", "127.0.1.6"]
          const consoleGuesses = yield* burst(consoleAddresses, 15, (from) =>
            send(base, from, "POST", `${CONSOLE}/session`, {
              body: { email: operatorEmail, password: "wrong password!" }
            }))
          const counted = tally(consoleGuesses)
          assert.deepStrictEqual(counted, { 401: 20, 429: 55 })
          for (const from of consoleAddresses) {
            assert.isAtMost(
              consoleGuesses.filter((g) =>
                g.from === from && g.status === 401
              ).length,
              5,
              from
            )
          }
          assert.strictEqual(
            (yield* send(base, "127.0.1.7", "POST", `${CONSOLE}/session`, {
              body: { email: operatorEmail, password: PASSWORD }
            })).status,
            429
          )
          const operator = yield* send(base, "127.0.1.7", "POST", `${CONSOLE}/session`, {
            body: { email: operatorEmail, password: PASSWORD },
            headers: { cookie: `${Operator.OPERATOR_BROWSER_COOKIE}=${operatorBrowser}` }
          })
          assert.strictEqual(operator.status, 200)
          const operatorChecks = yield* burst(["127.0.1.7"], 12, (from) =>
            send(base, from, "POST", `${CONSOLE}/password`, {
              body: { current_password: "not my password", new_password: "a brand new password" },
              headers: {
                cookie: `${Operator.OPERATOR_COOKIE}=${operator.cookies[Operator.OPERATOR_COOKIE]}`,
                [Session.CSRF_HEADER]: operator.json.csrf_token
              }
            }))
          assert.deepStrictEqual(tally(operatorChecks), { 422: 5, 429: 7 })
          assert.notInclude(server.output(), "\"status\":500")
        }),
      { timeout: 120_000 }
    )
  })
}
