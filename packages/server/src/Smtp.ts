/**
 * The SMTP transport of dashboard email (`BUNDLES_SMTP_URL`, `BUNDLES_MAIL_FROM`), on
 * nodemailer: `smtp://` upgrades with STARTTLS whenever the server offers it, `smtps://` is TLS
 * from the first byte, and the URL's user and password authenticate. The queue, its retries
 * and its record of every attempt are core's `Mailer`; this only hands one message over.
 */
import { Mailer } from "@databundle/core"
import { ConfigError, Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import * as OutsideAnswers from "./OutsideAnswers.js"
import * as ServerConfig from "./ServerConfig.js"

/**
 * Short enough that one attempt ends well within the sender's lease on its row; and no reply
 * of the mail server read past the cap of every answer from outside (the connection is dropped).
 */
const LIMITS = {
  connectionTimeout: 20_000,
  greetingTimeout: 20_000,
  socketTimeout: 60_000,
  maxResponseSize: OutsideAnswers.MAX_BYTES
}

/** Why an attempt failed, for the outbox's `last_error`: the server's answer or the network error, no secrets. */
const describe = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const { code, message, response } = error as { code?: unknown; message?: unknown; response?: unknown }
  const text = typeof response === "string" && response.length > 0 ? response : String(message)
  return typeof code === "string" ? `${code}: ${text}` : text
}

/** The transport on one SMTP server. */
export const make = (url: Redacted.Redacted, from: string) =>
  Layer.scoped(
    Mailer.MailTransport,
    Effect.gen(function*() {
      const transporter = yield* Effect.acquireRelease(
        Effect.sync(() => nodemailer.createTransport({ url: Redacted.value(url).trim(), ...LIMITS })),
        (transporter) => Effect.sync(() => transporter.close())
      )
      return {
        sends: true,
        deliver: (message) =>
          Effect.tryPromise({
            try: () => transporter.sendMail({ from, to: message.to, subject: message.subject, text: message.body }),
            catch: (error) => new Mailer.MailDeliveryError({ message: describe(error) })
          }).pipe(Effect.asVoid, Effect.withSpan("Smtp.deliver"))
      }
    })
  )

/** SMTP when `BUNDLES_SMTP_URL` is set (it then needs `BUNDLES_MAIL_FROM`), else the outbox alone. */
export const layer = Layer.unwrapEffect(Effect.gen(function*() {
  const url = yield* ServerConfig.smtpUrl
  if (Option.isNone(url)) return Mailer.MailTransport.Outbox
  const from = yield* ServerConfig.mailFrom
  if (Option.isNone(from)) {
    return yield* Effect.fail(
      ConfigError.MissingData(
        ["BUNDLES_MAIL_FROM"],
        "BUNDLES_SMTP_URL is set: BUNDLES_MAIL_FROM must say who the email is from, e.g. " +
          "\"Data Bundles <no-reply@example.com>\""
      )
    )
  }
  return make(url.value, from.value)
}))
