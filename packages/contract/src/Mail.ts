/**
 * Email the server sends to dashboard users (verification and password reset links). Every
 * message is written to the outbox table, where the operator reads it with every link's
 * one-time token hidden (`GET /admin/v1/emails`, `bundles-server admin emails`), and handed to
 * the configured transport. A link's secret travels in its fragment (`#/...?token=...`), which
 * browsers never send to a server, so no request log ever holds it.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { extensions, Failed } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"
import { ADMIN_LISTS, params } from "./Page.js"

/** Why an email was sent. */
export const MailKind = Schema.Literal("verify_email", "reset_password", "already_registered")

/** The type of `MailKind`. */
export type MailKind = typeof MailKind.Type

/**
 * Where an email is: `queued` waits for the sender (again, after a failed attempt, when
 * `last_error` is set), `sent` was accepted by the SMTP server, `failed` gave up after the
 * last attempt, and `kept` was never sent because no SMTP server is configured (the outbox,
 * and the log in demo mode, are its only delivery).
 */
export const MailStatus = Schema.Literal("queued", "sent", "failed", "kept")

/** The type of `MailStatus`. */
export type MailStatus = typeof MailStatus.Type

/** An email as the outbox holds it. */
export const OutboxMail = Schema.Struct({
  id: Schema.Int,
  to: Schema.String,
  kind: MailKind,
  subject: Schema.String,
  body: Schema.String.annotations({ description: "The text sent, every link's token shown as [hidden]" }),
  link: Schema.NullOr(Schema.String).annotations({
    description: "The link the email carries, if any, its one-time token shown as [hidden]"
  }),
  status: MailStatus,
  attempts: Schema.Int.annotations({ description: "How many times the sender tried to deliver it" }),
  last_error: Schema.NullOr(Schema.String).annotations({ description: "Why the last attempt failed, if it did" }),
  next_attempt_at: Schema.NullOr(Schema.Date).annotations({ description: "When a queued email is tried next" }),
  sent_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date
}).annotations({ identifier: "OutboxMail" })

/** The type of `OutboxMail`. */
export type OutboxMail = typeof OutboxMail.Type

/** Query parameters of GET /admin/v1/emails. */
export const ListMailParams = Schema.Struct({
  ...params(ADMIN_LISTS),
  to: Schema.optional(Schema.String.pipe(Schema.maxLength(254)))
}).annotations({ parseOptions: { errors: "all" } })

/** An email as the demo mailbox shows it. */
export const DemoMail = Schema.Struct({
  kind: MailKind,
  subject: Schema.String,
  body: Schema.String,
  link: Schema.NullOr(Schema.String).annotations({ description: "The link the email carries, if any" }),
  created_at: Schema.Date
}).annotations({ identifier: "DemoMail" })

/** Query parameters of GET /dashboard/v1/demo/mailbox. */
export const DemoMailboxParams = Schema.Struct({
  email: Schema.String.pipe(Schema.minLength(3), Schema.maxLength(254))
}).annotations({ parseOptions: { errors: "all" } })

/** An email's identifier in the outbox. */
export const MailId = Schema.Int.pipe(Schema.between(1, MAX_ID))

/** 404: no email with that id. */
export class MailNotFound extends Schema.TaggedError<MailNotFound>()(
  "MailNotFound",
  { success: Failed, message: Schema.String, ...extensions("email_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}
