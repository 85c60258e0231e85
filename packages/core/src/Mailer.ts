/**
 * Email to dashboard users, through a port. Every message is first written to the outbox
 * table (`mail_outbox`), in the caller's transaction, so the operator can always read what was
 * sent (`GET /admin/v1/emails`) and tests can follow the links. The default transport has no
 * SMTP: the outbox is the delivery, and with `BUNDLES_MAIL_LOG=1` (set by `serve --demo`)
 * each message is also written to the server's log. A real transport is another Layer of
 * `MailTransport` that sends the outbox's unsent rows.
 */
import type { Mail } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Config, Context, Effect, Layer } from "effect"
import { orDie } from "./Database.js"
import * as Page from "./Page.js"

/** A message to send. */
export interface Message {
  readonly to: string
  readonly kind: Mail.MailKind
  readonly subject: string
  readonly body: string
  readonly link: string | null
}

/** The transport: what happens to a message after it is in the outbox. */
export class MailTransport extends Context.Tag("core/MailTransport")<MailTransport, {
  readonly deliver: (message: Message) => Effect.Effect<void>
}>() {
  /** No SMTP: the outbox table is the delivery; `BUNDLES_MAIL_LOG=1` also logs each message. */
  static readonly Outbox = Layer.effect(
    MailTransport,
    Effect.gen(function*() {
      const log = yield* Config.boolean("BUNDLES_MAIL_LOG").pipe(Config.withDefault(false), Effect.orDie)
      return {
        deliver: (message) =>
          log
            ? Effect.logInfo(`email to ${message.to}: ${message.subject}\n${message.body}`)
            : Effect.void
      }
    })
  )
}

interface MailRow {
  readonly id: string | number
  readonly to_address: string
  readonly kind: Mail.MailKind
  readonly subject: string
  readonly body: string
  readonly link: string | null
  readonly created_at: Date
}

/** Sends email: outbox first, then the transport. */
export class Mailer extends Effect.Service<Mailer>()("core/Mailer", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transport = yield* MailTransport

    /** Writes the message to the outbox and hands it to the transport. */
    const send = Effect.fn("Mailer.send")(function*(message: Message) {
      yield* orDie(sql`
        INSERT INTO mail_outbox (to_address, kind, subject, body, link, sent_at)
        VALUES (${message.to}, ${message.kind}, ${message.subject}, ${message.body}, ${message.link}, now())
      `)
      yield* transport.deliver(message)
    })

    /** The outbox, newest first, optionally for one address. */
    const list = Effect.fn("Mailer.list")(function*(query: Page.PageQuery & { readonly to?: string | undefined }) {
      const page = Page.resolve(query, 50)
      const where = query.to === undefined ? sql`true` : sql`to_address = ${query.to.trim().toLowerCase()}`
      const [count] = yield* orDie(sql<{ total: string }>`SELECT count(*) AS total FROM mail_outbox WHERE ${where}`)
      const rows = yield* orDie(sql<MailRow>`
        SELECT id, to_address, kind, subject, body, link, created_at FROM mail_outbox WHERE ${where}
        ORDER BY id DESC LIMIT ${page.perPage} OFFSET ${page.offset}
      `)
      const emails: Array<Mail.OutboxMail> = rows.map((row) => ({
        id: Number(row.id),
        to: row.to_address,
        kind: row.kind,
        subject: row.subject,
        body: row.body,
        link: row.link,
        created_at: row.created_at
      }))
      return { emails, pagination: Page.pagination(page, Number(count!.total)) }
    })

    return { send, list }
  })
}) {}
