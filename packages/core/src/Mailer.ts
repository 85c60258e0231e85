/**
 * Email to dashboard users, through a port. Every message is first written to the outbox
 * table (`mail_outbox`), in the caller's transaction, so the operator can always read what was
 * sent and how its delivery went (`GET /admin/v1/emails`), but never a link's one-time token:
 * the operator's list shows each link with its token hidden, so nobody takes over a holder's
 * account by reading it there.
 *
 * With a transport that sends (SMTP), the outbox is a queue: the row is written unsent, and
 * the sender (`runSender`, one of the server's workers) delivers it once the caller's
 * transaction has committed, so an email never announces something that was rolled back.
 * A failed attempt is retried with a doubling delay; the row records every attempt, its last
 * error, and `sent_at` once the mail server took it. The queue is in the database, so
 * unsent email survives a restart, and a claimed row is leased, so two server processes
 * never send it at once.
 *
 * Without a transport that sends, the outbox is the delivery: rows are kept, never queued,
 * and with `BUNDLES_MAIL_LOG=1` (set by `serve --demo`) each is also written to the log.
 */
import { ApiError, Mail, Page as PageContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Config, Context, Data, Duration, Effect, Layer, Queue, Schema } from "effect"
import { Int8Number, orDie, rowsOf } from "./Database.js"
import * as Page from "./Page.js"
import { Settings } from "./Settings.js"
import * as Worker from "./Worker.js"

/** A message to send. */
export interface Message {
  readonly to: string
  readonly kind: Mail.MailKind
  readonly subject: string
  readonly body: string
  readonly link: string | null
}

/** The mail server did not take a message; the sender retries it later. */
export class MailDeliveryError extends Data.TaggedError("MailDeliveryError")<{
  readonly message: string
}> {}

/** The transport: what happens to a message after it is in the outbox. */
export class MailTransport extends Context.Tag("core/MailTransport")<MailTransport, {
  /** True when it really sends (the outbox is a queue); false when the outbox is the delivery. */
  readonly sends: boolean
  readonly deliver: (message: Message) => Effect.Effect<void, MailDeliveryError>
}>() {
  /** No SMTP: the outbox table is the delivery; `BUNDLES_MAIL_LOG=1` also logs each message. */
  static readonly Outbox = Layer.effect(
    MailTransport,
    Effect.gen(function*() {
      const log = yield* Config.boolean("BUNDLES_MAIL_LOG").pipe(Config.withDefault(false), Effect.orDie)
      return {
        sends: false,
        deliver: (message) =>
          log
            ? Effect.logInfo(`email to ${message.to}: ${message.subject}\n${message.body}`)
            : Effect.void
      }
    })
  )
}

/** Attempts before an email is given up as failed. */
export const MAX_ATTEMPTS = 8
/** The longest wait between two attempts. */
const MAX_RETRY_DELAY = Duration.hours(1)
/** How long a claimed row is leased to its sender; longer than one attempt may take. */
const CLAIM_LEASE_SECONDS = 120
/** The longest one attempt may take before it counts as failed. */
const ATTEMPT_TIMEOUT = Duration.seconds(90)
/** Rows claimed at once. */
const BATCH = 20

/** An email's row as `COLUMNS` read it. */
const MailRow = Schema.Struct({
  id: Int8Number,
  to_address: Schema.String,
  kind: Mail.MailKind,
  subject: Schema.String,
  body: Schema.String,
  link: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  sent_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})

type MailRow = typeof MailRow.Type

const COLUMNS = "id, to_address, kind, subject, body, link, attempts, last_error, next_attempt_at, sent_at, created_at"

const status = (row: MailRow): Mail.MailStatus =>
  row.sent_at !== null ? "sent" : row.next_attempt_at !== null ? "queued" : row.attempts > 0 ? "failed" : "kept"

/** `text` with the one-time token of every link in it hidden (`token=[hidden]`). */
export const hideTokens = (text: string): string => text.replace(/([?&#]token=)[A-Za-z0-9_-]+/g, "$1[hidden]")

/** An outbox row as the operator sees it: every link's token hidden. */
const toMail = (row: MailRow): Mail.OutboxMail => ({
  id: row.id,
  to: row.to_address,
  kind: row.kind,
  subject: row.subject,
  body: hideTokens(row.body),
  link: row.link === null ? null : hideTokens(row.link),
  status: status(row),
  attempts: row.attempts,
  last_error: row.last_error,
  next_attempt_at: row.next_attempt_at,
  sent_at: row.sent_at,
  created_at: row.created_at
})

/** The wait after the `attempts`-th failed attempt: the first delay, doubled each time, at most an hour. */
export const retryDelay = (first: Duration.Duration, attempts: number): Duration.Duration =>
  Duration.min(Duration.times(first, 2 ** Math.max(0, attempts - 1)), MAX_RETRY_DELAY)

/** Sends email: outbox first, then the transport. */
export class Mailer extends Effect.Service<Mailer>()("core/Mailer", {
  dependencies: [Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transport = yield* MailTransport
    const settings = yield* Settings
    // Wakes the sender when a message is queued, so it need not wait for its next poll.
    const wake = yield* Queue.sliding<void>(1)

    /**
     * Writes the message to the outbox, in the caller's transaction. A transport that sends
     * gets it from the sender after commit; otherwise it is kept (and logged) now.
     */
    const send = Effect.fn("Mailer.send")(function*(message: Message) {
      yield* orDie(sql`
        INSERT INTO mail_outbox (to_address, kind, subject, body, link, next_attempt_at)
        VALUES (${message.to}, ${message.kind}, ${message.subject}, ${message.body}, ${message.link},
          ${transport.sends ? sql`now()` : null})
      `)
      if (transport.sends) yield* Queue.offer(wake, undefined)
      else yield* transport.deliver(message).pipe(Effect.ignore)
    })

    const where = (to: string | undefined) =>
      to === undefined ? sql`true` : sql`to_address = ${to.trim().toLowerCase()}`

    /** The outbox, newest first, optionally for one address. */
    const list = Effect.fn("Mailer.list")(function*(query: Page.PageQuery & { readonly to?: string | undefined }) {
      const page = Page.resolve(query, PageContract.ADMIN_LISTS)
      const [count] = yield* orDie(
        sql<{ total: string }>`SELECT count(*) AS total FROM mail_outbox WHERE ${where(query.to)}`
      )
      const rows = yield* orDie(rowsOf(
        MailRow,
        sql`
        SELECT ${sql.literal(COLUMNS)} FROM mail_outbox WHERE ${where(query.to)}
        ORDER BY id DESC LIMIT ${page.perPage} OFFSET ${page.offset}
      `
      ))
      return { emails: rows.map(toMail), pagination: Page.pagination(page, Number(count!.total)) }
    })

    /**
     * The newest emails to one address written in the last `within`, newest first, links
     * whole: the demo mailbox's, which only someone on the server's own machine reads.
     */
    const recent = Effect.fn("Mailer.recent")(function*(to: string, within: Duration.Duration, limit: number) {
      const rows = yield* orDie(rowsOf(
        MailRow,
        sql`
        SELECT ${sql.literal(COLUMNS)} FROM mail_outbox
        WHERE to_address = ${to.trim().toLowerCase()}
          AND created_at > now() - make_interval(secs => ${Duration.toSeconds(within)})
        ORDER BY id DESC LIMIT ${limit}
      `
      ))
      return rows.map((row): typeof Mail.DemoMail.Type => ({
        kind: row.kind,
        subject: row.subject,
        body: row.body,
        link: row.link,
        created_at: row.created_at
      }))
    })

    // As the payment worker: a claim leases the rows, SKIP LOCKED gives processes disjoint batches.
    const claimDue = rowsOf(
      MailRow,
      sql`
      UPDATE mail_outbox SET next_attempt_at = now() + make_interval(secs => ${CLAIM_LEASE_SECONDS})
      WHERE id IN (
        SELECT id FROM mail_outbox
        WHERE sent_at IS NULL AND next_attempt_at <= now()
        ORDER BY next_attempt_at, id
        LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING ${sql.literal(COLUMNS)}
    `
    )

    /**
     * One attempt at a claimed row; records the outcome. Interrupted (the server stops) while
     * the mail server has it, the row is due again at once rather than at the end of its lease:
     * whether that message went through cannot be known, and a duplicate beats a lost link.
     */
    const attempt = (row: MailRow) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          // Only the conversation with the mail server may be interrupted, never the record of its answer.
          const outcome = yield* restore(transport.deliver({
            to: row.to_address,
            kind: row.kind,
            subject: row.subject,
            body: row.body,
            link: row.link
          })).pipe(
            Effect.timeoutFail({
              duration: ATTEMPT_TIMEOUT,
              onTimeout: () => new MailDeliveryError({ message: "the mail server did not answer in time" })
            }),
            Effect.either,
            Effect.onInterrupt(() =>
              sql`UPDATE mail_outbox SET next_attempt_at = now() WHERE id = ${row.id} AND sent_at IS NULL`.pipe(
                Effect.ignore
              )
            )
          )
          if (outcome._tag === "Right") {
            yield* sql`
            UPDATE mail_outbox SET sent_at = now(), attempts = attempts + 1, next_attempt_at = NULL, last_error = NULL
            WHERE id = ${row.id}
          `
            return
          }
          const attempts = row.attempts + 1
          const error = outcome.left.message.slice(0, 500)
          if (attempts >= MAX_ATTEMPTS) {
            yield* Effect.logWarning(`email ${row.id} to ${row.to_address} failed for good: ${error}`)
          }
          yield* sql`
          UPDATE mail_outbox SET attempts = ${attempts}, last_error = ${error},
            next_attempt_at = ${
            attempts >= MAX_ATTEMPTS
              ? null
              : sql`now() + make_interval(secs => ${Duration.toSeconds(retryDelay(settings.mailRetry, attempts))})`
          }
          WHERE id = ${row.id}
        `
        })
      )

    /** Sends every queued email that is due; returns how many were attempted. */
    const processDue = Effect.gen(function*() {
      let total = 0
      while (true) {
        const due = yield* claimDue
        yield* Effect.forEach(due, attempt, { concurrency: 4, discard: true })
        total += due.length
        if (due.length < BATCH) return total
      }
    }).pipe(orDie, Effect.withSpan("Mailer.processDue"))

    /** Runs forever: the sender, woken by new email and polling for retries that fall due. */
    const runSender = transport.sends
      ? Worker.supervise("mail sender", processDue, {
        interval: settings.pollInterval,
        idle: Effect.raceFirst(Queue.take(wake), Effect.sleep(settings.pollInterval))
      })
      : Effect.never

    /**
     * Queues a failed email again, due now, for a full round of attempts (its last error kept
     * until the next attempt); `wakeSender` after the commit sends it at once. A 404 for an unknown id; a 409 for an email that is not failed
     * (queued, sent or kept) or when no mail server is configured to send it.
     */
    const requeue = Effect.fn("Mailer.requeue")(function*(id: number) {
      if (!transport.sends) {
        const [existing] = yield* orDie(sql<{ id: string }>`SELECT id FROM mail_outbox WHERE id = ${id}`)
        if (existing === undefined) return yield* new Mail.MailNotFound({ message: `No email with id ${id}` })
        return yield* new ApiError.Conflict({
          message: "No SMTP server is configured (BUNDLES_SMTP_URL); the email cannot be sent"
        })
      }
      const [row] = yield* orDie(rowsOf(
        MailRow,
        sql`
        UPDATE mail_outbox SET next_attempt_at = now(), attempts = 0
        WHERE id = ${id} AND sent_at IS NULL AND next_attempt_at IS NULL AND attempts > 0
        RETURNING ${sql.literal(COLUMNS)}
      `
      ))
      if (row === undefined) {
        const [existing] = yield* orDie(
          rowsOf(MailRow, sql`SELECT ${sql.literal(COLUMNS)} FROM mail_outbox WHERE id = ${id}`)
        )
        if (existing === undefined) return yield* new Mail.MailNotFound({ message: `No email with id ${id}` })
        return yield* new ApiError.Conflict({
          message: `Email ${id} is ${status(existing)}; only a failed email can be queued again`
        })
      }
      return toMail(row)
    })

    /** Wakes the sender (after a commit that queued email), so it need not wait for its next poll. */
    const wakeSender = Queue.offer(wake, undefined).pipe(Effect.asVoid)

    return { send, list, recent, requeue, wakeSender, processDue, runSender }
  })
}) {}
