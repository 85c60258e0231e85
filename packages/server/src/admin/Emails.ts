/**
 * `admin emails`: the outbox of email sent to dashboard users (verification and password
 * reset links), newest first, with where each is (queued, sent, failed, or kept when no SMTP server is
 * configured): without SMTP it is how those links reach people. `admin emails requeue <id>`
 * queues a failed one again.
 */
import { AdminApi, Mail } from "@databundle/contract"
import { Args, Command, Options } from "@effect/cli"
import { Effect, Either } from "effect"
import type * as AdminClient from "../AdminClient.js"
import { execute, request } from "./Call.js"
import { decodeWith, listing, shared, type UrlParamsOf, usage } from "./Options.js"
import { date, pageLine } from "./Text.js"

const emailsListing = listing<UrlParamsOf<AdminClient.Client["mailAdmin"]["list"]>>(
  AdminApi.MailAdminGroup.endpoints.list
)

/** Where an email is, in words. */
const statusLine = (mail: Mail.OutboxMail): string => {
  const error = mail.last_error === null ? "" : ` (last error: ${mail.last_error})`
  switch (mail.status) {
    case "sent":
      return `sent ${mail.sent_at === null ? "" : date(mail.sent_at)}`.trimEnd()
    case "queued":
      return mail.attempts === 0
        ? "queued"
        : `queued, attempt ${mail.attempts + 1} ${
          mail.next_attempt_at === null ? "soon" : `at ${date(mail.next_attempt_at)}`
        }${error}`
    case "failed":
      return `failed after ${mail.attempts} attempts${error}`
    case "kept":
      return "kept in the outbox (no SMTP server configured)"
  }
}

/** `admin emails requeue <id>`: a failed email queued again. */
const emailsRequeue = Command.make("requeue", {
  ...shared,
  id: Args.integer({ name: "ID" }).pipe(
    Args.withDescription("The email's id, as `admin emails --json` shows it"),
    Args.mapEffect((n) => Either.mapLeft(decodeWith(Mail.MailId)(n), (message) => usage(`ID ${message}`).error))
  )
}, (options) =>
  execute(
    options,
    request(options, (client) => client.mailAdmin.requeue({ path: { email_id: options.id } })),
    AdminApi.MailResponse,
    ({ email }) => [`Email ${email.id} to ${email.to} is queued again: ${statusLine(email)}.`]
  )).pipe(Command.withDescription("Queue a failed email again, for a full round of attempts"))

/** `admin emails`: the outbox, optionally for one address; `admin emails requeue <id>`. */
export const emails = Command.make("emails", {
  ...shared,
  to: Options.text("to").pipe(
    Options.withPseudoName("ADDRESS"),
    Options.withDescription("Only email to this address"),
    Options.optional
  ),
  ...emailsListing.options
}, (options) =>
  execute(
    options,
    emailsListing.params(options, { to: options.to }).pipe(
      Effect.flatMap((urlParams) => request(options, (client) => client.mailAdmin.list({ urlParams })))
    ),
    AdminApi.MailPage,
    ({ emails, pagination }) =>
      emails.length === 0 ? ["No email."] : [
        ...emails.flatMap((mail: Mail.OutboxMail) => [
          `${date(mail.created_at)}  ${mail.to}  ${mail.kind}: ${mail.subject}`,
          `  ${statusLine(mail)}`,
          ...(mail.link === null ? [] : [`  ${mail.link}`])
        ]),
        pageLine(pagination, "email")
      ]
  )).pipe(
    Command.withDescription("Email sent to dashboard users (verification and reset links), newest first"),
    Command.withSubcommands([emailsRequeue])
  )
