/**
 * Users: the people who sign in to the web dashboard. Each user holds one account (registered
 * in the dashboard, or linked by the operator); email addresses are unique, compared in lower case.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AccountFields } from "./Account.js"
import { extensions, Failed } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"
import { MobileNumber } from "./Phone.js"
import { text } from "./Text.js"
import { Balance } from "./Wallet.js"

/** A user's identifier. */
export const UserId = Schema.Int.pipe(Schema.between(1, MAX_ID), Schema.brand("UserId"))

/** The type of `UserId`. */
export type UserId = typeof UserId.Type

/** The shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 10

/** The longest password accepted (the key derivation reads every byte of it). */
export const MAX_PASSWORD_LENGTH = 128

// One `@`, no spaces or controls, a dot in the domain: what mail systems deliver to, no more.
const EMAIL =
  /^[^\s@\u0000-\u001F\u007F]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+$/

/** An email address, trimmed and lower-cased on decoding, at most 254 characters. */
export const Email = Schema.Trim.pipe(
  Schema.compose(Schema.Lowercase),
  Schema.filter((s) => (s.length <= 254 && EMAIL.test(s)) || "must be an email address such as ama@example.com")
).annotations({ identifier: "Email" })

/** A password: 10 to 128 characters, anything printable. */
export const Password = Schema.String.pipe(
  Schema.minLength(MIN_PASSWORD_LENGTH, {
    message: () => `must be at least ${MIN_PASSWORD_LENGTH} characters`
  }),
  Schema.maxLength(MAX_PASSWORD_LENGTH, {
    message: () => `must be at most ${MAX_PASSWORD_LENGTH} characters`
  })
).annotations({ identifier: "Password" })

/** A one-time token from an email link (verification or password reset). */
export const EmailToken = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{16,128}$/, { message: () => "is not a valid link token" })
)

/** The body of POST /dashboard/v1/register. */
export const RegisterPayload = Schema.Struct({
  name: text(100),
  email: Email,
  phone: MobileNumber,
  password: Password,
  referral_code: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^[0-9A-Za-z]{4,32}$/, { message: () => "must be 4 to 32 letters and digits" })
    ).annotations({ description: "The code of the account that referred this one (from its /?ref=CODE link)" })
  )
}).annotations({ identifier: "RegisterPayload", parseOptions: { errors: "all" } })

/** The type of `RegisterPayload`. */
export type RegisterPayload = typeof RegisterPayload.Type

/** The body of POST /dashboard/v1/session (sign in). */
export const SignInPayload = Schema.Struct({
  email: Email,
  // Any length: a too-short password is simply wrong, and says nothing about the policy.
  password: Schema.String.pipe(Schema.minLength(1, { message: () => "is required" }), Schema.maxLength(1024))
}).annotations({ identifier: "SignInPayload", parseOptions: { errors: "all" } })

/** The body of the endpoints that only name an address (resend verification, forgotten password). */
export const EmailPayload = Schema.Struct({ email: Email }).annotations({ parseOptions: { errors: "all" } })

/** The body of POST /dashboard/v1/email/verify. */
export const VerifyEmailPayload = Schema.Struct({ token: EmailToken }).annotations({
  parseOptions: { errors: "all" }
})

/** The body of POST /dashboard/v1/password/reset. */
export const ResetPasswordPayload = Schema.Struct({ token: EmailToken, password: Password }).annotations({
  parseOptions: { errors: "all" }
})

/** The body of POST /dashboard/v1/password (change it while signed in). */
export const ChangePasswordPayload = Schema.Struct({
  current_password: Schema.String.pipe(Schema.minLength(1, { message: () => "is required" }), Schema.maxLength(1024)),
  new_password: Password
}).annotations({ parseOptions: { errors: "all" } })

/** A user as the dashboard shows them. */
export const UserView = Schema.Struct({
  id: UserId,
  name: Schema.String,
  email: Schema.String,
  phone: Schema.String,
  email_verified_at: Schema.NullOr(Schema.Date),
  created_at: Schema.Date
}).annotations({ identifier: "UserView" })

/** The type of `UserView`. */
export type UserView = typeof UserView.Type

/** The account a user holds, as the dashboard shows it. */
export const AccountView = Schema.Struct({
  ...AccountFields,
  balance: Balance
}).annotations({ identifier: "AccountView" })

/** The type of `AccountView`. */
export type AccountView = typeof AccountView.Type

/** 403: sign-in with the right password before the address was verified. */
export class EmailNotVerified extends Schema.TaggedError<EmailNotVerified>()(
  "EmailNotVerified",
  { success: Failed, message: Schema.String, ...extensions("email_not_verified") },
  HttpApiSchema.annotations({ status: 403 })
) {}

/**
 * What a suspended account is told, wherever it tries: signing in, a session that was open
 * when the operator suspended it, an API key (the spec's 401). One sentence, written once.
 */
export const SUSPENDED_MESSAGE = "This account is suspended: it cannot sign in, buy or use its API keys until the " +
  "service's operators reactivate it. Contact them to learn why and what they need from you."

/** 403 of sign-in with the right password for a suspended account (said only to who knows the password). */
export class AccountSuspended extends Schema.TaggedError<AccountSuspended>()(
  "AccountSuspended",
  { success: Failed, message: Schema.String, ...extensions("account_suspended") },
  HttpApiSchema.annotations({ status: 403 })
) {}
