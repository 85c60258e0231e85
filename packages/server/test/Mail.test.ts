/**
 * Dashboard email through a real SMTP server started here (smtp-server), on PGlite and on
 * Postgres: the verification email arrives with its link (STARTTLS and password auth), a
 * server that is down is retried later and delivered once, also across a restart of ours,
 * and the outbox shows each email's status.
 */
import { DashboardApi, type Mail } from "@databundle/contract"
import { type Target, targets } from "@databundle/core/testing"
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import { SMTPServer } from "smtp-server"
import { parseExposition, sample } from "./Exposition.js"
import { ADMIN_TOKEN, adminClient, mailed, raw, serverLayer } from "./Harness.js"

const PREFIX = DashboardApi.DASHBOARD_PREFIX
const USER = "mailer"
const PASS = "smtp secret"
const FROM = "Data Bundles <no-reply@bundles.test>"

interface Received {
  readonly to: ReadonlyArray<string>
  readonly from: string
  readonly secure: boolean
  readonly data: string
}

/** A free port on 127.0.0.1, closed again: nothing listens there until a test says so. */
const freePort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const probe = net.createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
)

/** An SMTP server on `port` that needs the test's user and offers STARTTLS (or TLS from the start). */
const smtpServer = (port: number, options: { readonly secure?: boolean } = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<Received> = []
      const server = new SMTPServer({
        secure: options.secure ?? false,
        key: fs.readFileSync(new URL("fixtures/tls-key.pem", import.meta.url)),
        cert: fs.readFileSync(new URL("fixtures/tls-cert.pem", import.meta.url)),
        authMethods: ["PLAIN", "LOGIN"],
        logger: false,
        onAuth: (auth, _session, callback) =>
          auth.username === USER && auth.password === PASS
            ? callback(null, { user: USER })
            : callback(new Error("Invalid username or password")),
        onData: (stream, session, callback) => {
          let data = ""
          stream.setEncoding("utf8")
          stream.on("data", (chunk: string) => (data += chunk))
          stream.on("end", () => {
            received.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
              secure: session.secure,
              data
            })
            callback()
          })
        }
      })
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()))
      return { server, received }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

/** A message's text with its quoted-printable soft breaks and escapes undone. */
const decoded = (data: string) =>
  data.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

let counter = 0
const freshEmail = () => `mail${Date.now().toString(36)}${(counter++).toString(36)}@example.com`

const register = (email: string) =>
  raw("POST", `${PREFIX}/register`, {
    body: { name: "Kofi Boateng", email, phone: "0241234567", password: "correct horse battery" }
  })

/** The outbox's email of one kind to an address. */
const outbox = (to: string) =>
  Effect.flatMap(adminClient, (admin) => admin.mailAdmin.list({ urlParams: { to } })).pipe(
    Effect.map(({ emails }) => emails),
    Effect.orDie
  )

const waitFor = <A>(what: string, check: Effect.Effect<A | undefined, never, any>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 150; i++) {
      const found = yield* check
      if (found !== undefined) return found
      yield* Effect.sleep("100 millis")
    }
    return assert.fail(`waited 15 s in vain for ${what}`)
  })

const onlyMail = (emails: ReadonlyArray<Mail.OutboxMail>, kind: Mail.MailKind) => {
  const matching = emails.filter((m) => m.kind === kind)
  assert.strictEqual(matching.length, 1, `one ${kind} email in ${JSON.stringify(emails)}`)
  return matching[0]!
}

/** Our server on the given database with SMTP at `port`. */
const ours = (database: Target, port: number, scheme = "smtp", query = "") =>
  serverLayer(database, {
    BUNDLES_SMTP_URL: `${scheme}://${USER}:${encodeURIComponent(PASS)}@127.0.0.1:${port}${query}`,
    BUNDLES_MAIL_FROM: FROM,
    BUNDLES_MAIL_RETRY_SECONDS: "0.3",
    BUNDLES_POLL_SECONDS: "0.1",
    BUNDLES_DASHBOARD_LIMITS: "dashboard=100000,access=100000"
  })

for (const target of targets) {
  describe(`dashboard email over SMTP on ${target.name}`, () => {
    it.scopedLive(
      "sends the verification email with its link over STARTTLS; the link verifies",
      () =>
        Effect.gen(function*() {
          const port = yield* freePort
          const smtp = yield* smtpServer(port)
          // The test's certificate is self-signed: the client is told not to check it, and to insist on STARTTLS.
          const server = yield* Layer.build(ours(target, port, "smtp", "?requireTLS=true&tls.rejectUnauthorized=false"))
          const email = freshEmail()
          yield* Effect.gen(function*() {
            assert.strictEqual((yield* register(email)).status, 201)
            const sent = yield* waitFor(
              "the email to be sent",
              Effect.map(outbox(email), (emails) => {
                const mail = onlyMail(emails, "verify_email")
                return mail.status === "sent" ? mail : undefined
              })
            )
            assert.strictEqual(sent.attempts, 1)
            assert.isNull(sent.last_error)
            assert.isNotNull(sent.sent_at)
            const delivered = smtp.received.filter((m) => m.to.includes(email))
            assert.strictEqual(delivered.length, 1)
            assert.isTrue(delivered[0]!.secure, "upgraded with STARTTLS")
            assert.strictEqual(delivered[0]!.from, "no-reply@bundles.test")
            const text = decoded(delivered[0]!.data)
            assert.include(text, "Subject: Verify your email address")
            const link = (yield* mailed(email, "verify_email")).link!
            assert.include(text, link, "the email carries the outbox's link")
            const token = /[?&]token=([A-Za-z0-9_-]+)/.exec(link)![1]!
            assert.notInclude(JSON.stringify(sent), token, "the operator's list hides the token")
            const verified = yield* raw("POST", `${PREFIX}/email/verify`, { body: { token } })
            assert.strictEqual(verified.status, 200, verified.text)
          }).pipe(Effect.provide(server))
        }),
      { timeout: 60_000 }
    )

    it.scopedLive("sends over smtps:// (TLS from the first byte)", () =>
      Effect.gen(function*() {
        const port = yield* freePort
        const smtp = yield* smtpServer(port, { secure: true })
        const server = yield* Layer.build(ours(target, port, "smtps", "?tls.rejectUnauthorized=false"))
        const email = freshEmail()
        yield* Effect.gen(function*() {
          assert.strictEqual((yield* register(email)).status, 201)
          yield* waitFor("the email to arrive", Effect.sync(() => smtp.received.find((m) => m.to.includes(email))))
          onlyMail(yield* outbox(email), "verify_email")
          yield* waitFor("sent_at", Effect.map(outbox(email), (emails) => emails[0]!.status === "sent" || undefined))
          assert.isTrue(smtp.received.find((m) => m.to.includes(email))!.secure)
          assert.include(
            decoded(smtp.received.find((m) => m.to.includes(email))!.data),
            (yield* mailed(email, "verify_email")).link!
          )
        }).pipe(Effect.provide(server))
      }), { timeout: 60_000 })

    it.scopedLive(
      "SMTP down: the email is retried later, and after our restart, and delivered once",
      () =>
        Effect.gen(function*() {
          const port = yield* freePort
          // One database for two runs of our server, as a restart.
          const database = yield* Layer.build(target.layer)
          const same: Target = { name: target.name, layer: Layer.succeedContext(database) }
          const email = freshEmail()
          // First run: nothing listens on the SMTP port.
          yield* Effect.scoped(Effect.gen(function*() {
            const server = yield* Layer.build(ours(same, port, "smtp", "?tls.rejectUnauthorized=false"))
            yield* Effect.gen(function*() {
              assert.strictEqual((yield* register(email)).status, 201)
              const failed = yield* waitFor(
                "two failed attempts",
                Effect.map(outbox(email), (emails) => {
                  const mail = onlyMail(emails, "verify_email")
                  return mail.attempts >= 2 ? mail : undefined
                })
              )
              assert.strictEqual(failed.status, "queued")
              assert.isNull(failed.sent_at)
              assert.match(failed.last_error ?? "", /ECONNREFUSED|ESOCKET|connect/i)
              assert.isNotNull(failed.next_attempt_at)
            }).pipe(Effect.provide(server))
          }))
          // The mail server comes up while ours is down; ours starts again and sends what is due.
          const smtp = yield* smtpServer(port)
          yield* Effect.scoped(Effect.gen(function*() {
            const server = yield* Layer.build(ours(same, port, "smtp", "?tls.rejectUnauthorized=false"))
            yield* Effect.gen(function*() {
              const sent = yield* waitFor(
                "the email to be sent",
                Effect.map(outbox(email), (emails) => {
                  const mail = onlyMail(emails, "verify_email")
                  return mail.status === "sent" ? mail : undefined
                })
              )
              assert.isNull(sent.last_error)
              assert.isAtLeast(sent.attempts, 3)
              // Several more polls: a sent email is never sent again.
              yield* Effect.sleep("1 second")
              assert.strictEqual(smtp.received.filter((m) => m.to.includes(email)).length, 1)
              assert.include(
                decoded(smtp.received.find((m) => m.to.includes(email))!.data),
                (yield* mailed(email, "verify_email")).link!
              )
            }).pipe(Effect.provide(server))
          }))
        }),
      { timeout: 90_000 }
    )

    it.scopedLive(
      "a failed email shows in the metrics and is queued again by the operator, then sent once",
      () =>
        Effect.gen(function*() {
          const port = yield* freePort
          const server = yield* Layer.build(
            serverLayer(target, {
              BUNDLES_SMTP_URL: `smtp://${USER}:${
                encodeURIComponent(PASS)
              }@127.0.0.1:${port}?tls.rejectUnauthorized=false`,
              BUNDLES_MAIL_FROM: FROM,
              BUNDLES_MAIL_RETRY_SECONDS: "30",
              BUNDLES_POLL_SECONDS: "0.1"
            })
          )
          const email = freshEmail()
          yield* Effect.gen(function*() {
            const emails = Effect.map(
              raw("GET", "/metrics", { bearer: ADMIN_TOKEN }),
              (res) => (state: string) => sample(parseExposition(res.text), "bundles_emails", { state })
            )
            assert.strictEqual((yield* register(email)).status, 201)
            const first = yield* waitFor(
              "a failed attempt",
              Effect.map(outbox(email), (list) => {
                const mail = onlyMail(list, "verify_email")
                return mail.attempts >= 1 ? mail : undefined
              })
            )
            const before = yield* emails
            // Not failed yet: the operator cannot requeue it (409), nothing changes.
            const early = yield* raw("POST", `/admin/v1/emails/${first.id}/requeue`, { bearer: ADMIN_TOKEN })
            assert.strictEqual(early.status, 409, early.text)
            assert.include(early.json.message, "queued")
            // The sender's last attempts, as after MAX_ATTEMPTS failures (the schedule takes hours).
            const sql = yield* SqlClient.SqlClient
            yield* sql`UPDATE mail_outbox SET attempts = 8, next_attempt_at = NULL WHERE id = ${first.id}`
            const failed = onlyMail(yield* outbox(email), "verify_email")
            assert.strictEqual(failed.status, "failed")
            const during = yield* emails
            assert.strictEqual(during("failed") - before("failed"), 1)
            assert.strictEqual(during("queued") - before("queued"), -1)

            // An id that names no email, written any way: 404.
            for (const path of ["2147483647", "0", "x", "2147483648", "07"]) {
              const res = yield* raw("POST", `/admin/v1/emails/${path}/requeue`, { bearer: ADMIN_TOKEN })
              assert.strictEqual(res.status, 404, `${path}: ${res.text}`)
              assert.strictEqual(res.json.success, false)
            }
            const anonymous = yield* raw("POST", `/admin/v1/emails/${first.id}/requeue`)
            assert.strictEqual(anonymous.status, 401, anonymous.text)
            assert.strictEqual(onlyMail(yield* outbox(email), "verify_email").status, "failed")

            // The mail server comes up; the operator queues the email again and it is sent, once.
            const smtp = yield* smtpServer(port)
            const requeued = yield* raw("POST", `/admin/v1/emails/${first.id}/requeue`, { bearer: ADMIN_TOKEN })
            assert.strictEqual(requeued.status, 200, requeued.text)
            assert.strictEqual(requeued.json.email.id, first.id)
            assert.strictEqual(requeued.json.email.attempts, 0)
            assert.include(requeued.headers["cache-control"] ?? "", "no-store")
            const sent = yield* waitFor(
              "the requeued email to be sent",
              Effect.map(outbox(email), (list) => {
                const mail = onlyMail(list, "verify_email")
                return mail.status === "sent" ? mail : undefined
              })
            )
            assert.strictEqual(sent.attempts, 1)
            const again = yield* raw("POST", `/admin/v1/emails/${first.id}/requeue`, { bearer: ADMIN_TOKEN })
            assert.strictEqual(again.status, 409, again.text)
            assert.include(again.json.message, "sent")
            yield* Effect.sleep("500 millis")
            assert.strictEqual(smtp.received.filter((m) => m.to.includes(email)).length, 1)
            const after = yield* emails
            assert.strictEqual(after("failed"), before("failed"))
            assert.strictEqual(after("sent") - before("sent"), 1)
            const log = yield* raw("GET", `/admin/v1/actions?action=email.requeue&target_id=${first.id}`, {
              bearer: ADMIN_TOKEN
            })
            assert.strictEqual(log.json.actions.length, 1, log.text)
            assert.strictEqual(log.json.actions[0].target_kind, "email")
          }).pipe(Effect.provide(server))
        }),
      { timeout: 60_000 }
    )

    it.scopedLive(
      "a mail server refusing our login leaves the email queued with its answer",
      () =>
        Effect.gen(function*() {
          const port = yield* freePort
          yield* smtpServer(port)
          const server = yield* Layer.build(
            serverLayer(target, {
              BUNDLES_SMTP_URL: `smtp://${USER}:wrong@127.0.0.1:${port}?tls.rejectUnauthorized=false`,
              BUNDLES_MAIL_FROM: FROM,
              BUNDLES_MAIL_RETRY_SECONDS: "30",
              BUNDLES_POLL_SECONDS: "0.1"
            })
          )
          const email = freshEmail()
          yield* Effect.gen(function*() {
            assert.strictEqual((yield* register(email)).status, 201)
            const mail = yield* waitFor(
              "a failed attempt",
              Effect.map(outbox(email), (emails) => {
                const mail = onlyMail(emails, "verify_email")
                return mail.attempts >= 1 ? mail : undefined
              })
            )
            assert.strictEqual(mail.status, "queued")
            assert.match(mail.last_error!, /EAUTH|Invalid username or password/)
            assert.notInclude(mail.last_error!, "wrong", "no password in the error")
            // The next attempt waits the retry delay (30 s here), not the poll.
            const retryIn = mail.next_attempt_at!.getTime() - Date.now()
            assert.isAbove(retryIn, 20_000)
          }).pipe(Effect.provide(server))
        }),
      { timeout: 60_000 }
    )
  })
}

const mailbox = (email: string) => raw("GET", `${PREFIX}/demo/mailbox?email=${encodeURIComponent(email)}`)

for (const target of targets) {
  describe(`the demo mailbox on ${target.name}`, () => {
    it.scopedLive(
      "under --demo on loopback without SMTP: shows the email just sent, with its link",
      () =>
        Effect.gen(function*() {
          const server = yield* Layer.build(serverLayer(target, { BUNDLES_DEMO_MAILBOX: "1" }))
          yield* Effect.gen(function*() {
            const email = freshEmail()
            const empty = yield* mailbox(email)
            assert.strictEqual(empty.status, 200, empty.text)
            assert.deepStrictEqual(empty.json.emails, [])
            assert.strictEqual((yield* register(email)).status, 201)
            const shown = yield* mailbox(email.toUpperCase())
            assert.strictEqual(shown.status, 200)
            assert.strictEqual(shown.json.emails.length, 1)
            const [mail] = shown.json.emails
            assert.strictEqual(mail.kind, "verify_email")
            assert.strictEqual(mail.subject, "Verify your email address")
            assert.include(mail.body, mail.link)
            assert.strictEqual(shown.headers["cache-control"]?.includes("no-store"), true, "never cached")
            // The link works.
            const token = /[?&]token=([A-Za-z0-9_-]+)/.exec(mail.link)![1]!
            assert.strictEqual((yield* raw("POST", `${PREFIX}/email/verify`, { body: { token } })).status, 200)
            // Another address sees none of it; a reset email shows up newest first.
            assert.deepStrictEqual((yield* mailbox(freshEmail())).json.emails, [])
            assert.strictEqual((yield* raw("POST", `${PREFIX}/password/forgot`, { body: { email } })).status, 200)
            const after = (yield* mailbox(email)).json.emails
            assert.deepStrictEqual(after.map((m: { kind: string }) => m.kind), ["reset_password", "verify_email"])
            // Through a proxy (even one on this machine) it does not exist.
            for (const header of [{ "x-forwarded-for": "203.0.113.9" }, { forwarded: "for=203.0.113.9" }]) {
              const proxied = yield* raw("GET", `${PREFIX}/demo/mailbox?email=${encodeURIComponent(email)}`, {
                headers: header
              })
              assert.strictEqual(proxied.status, 404, proxied.text)
              assert.notInclude(proxied.text, "token")
            }
            // A bad query is a 422 in the envelope.
            const bad = yield* raw("GET", `${PREFIX}/demo/mailbox`)
            assert.strictEqual(bad.status, 422)
            assert.strictEqual(bad.json.success, false)
          }).pipe(Effect.provide(server))
        }),
      { timeout: 60_000 }
    )

    const off = [
      ["without --demo", {}],
      ["bound to every address", { BUNDLES_DEMO_MAILBOX: "1", HOST: "0.0.0.0" }],
      ["with a public URL", { BUNDLES_DEMO_MAILBOX: "1", BUNDLES_PUBLIC_URL: "https://bundles.example.com" }],
      ["with SMTP", { BUNDLES_DEMO_MAILBOX: "1", BUNDLES_SMTP_URL: "smtp://127.0.0.1:1", BUNDLES_MAIL_FROM: FROM }]
    ] as const
    for (const [when, config] of off) {
      it.scopedLive(`is a 404 ${when}, as an unknown path`, () =>
        Effect.gen(function*() {
          const server = yield* Layer.build(serverLayer(target, config))
          yield* Effect.gen(function*() {
            const email = freshEmail()
            assert.strictEqual((yield* register(email)).status, 201)
            const response = yield* mailbox(email)
            assert.strictEqual(response.status, 404, response.text)
            assert.strictEqual(response.json.success, false)
            assert.strictEqual(response.json.message, `No route for GET ${PREFIX}/demo/mailbox`)
            assert.notInclude(response.text, "token")
          }).pipe(Effect.provide(server))
        }), { timeout: 60_000 })
    }
  })
}
