/**
 * Dashboard users: registration (a user and its account, in the default price group, with
 * empty wallets), email verification, sign-in with throttling, password change and reset.
 *
 * Email links carry a 256-bit single-use token, stored only as its SHA-256 hash, in the
 * URL's fragment (`#/verify-email?token=...`): browsers never send a fragment to a server, so
 * no request log holds it; the page posts it. Answers never say whether an address is
 * registered (register, resend and forgot answer alike; sign-in says "email or password"),
 * and an unknown address costs a sign-in the same key derivation as a wrong password.
 */
import { Account, ApiError, type Mail, User } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { Accounts } from "./Accounts.js"
import { isUniqueViolation, orDie, rowsOf } from "./Database.js"
import { KnownBrowsers } from "./KnownBrowsers.js"
import { Mailer } from "./Mailer.js"
import * as PasswordAttempts from "./PasswordAttempts.js"
import * as Passwords from "./Passwords.js"
import { Sessions } from "./Sessions.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"
import { Wallet } from "./Wallet.js"

/** How long a verification link works. */
export const VERIFY_HOURS = 48

/** How long a password reset link works. */
export const RESET_HOURS = 1

type Purpose = "verify_email" | "reset_password"

/** A user's row (`SELECT *`). */
const UserRow = Schema.Struct({
  id: User.UserId,
  account_id: Account.AccountId,
  name: Schema.String,
  email: Schema.String,
  phone: Schema.String,
  password_hash: Schema.String,
  email_verified_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})

type UserRow = typeof UserRow.Type

const toView = (row: UserRow): User.UserView => ({
  id: row.id,
  name: row.name,
  email: row.email,
  phone: row.phone,
  email_verified_at: row.email_verified_at,
  created_at: row.created_at
})

const badToken = () => ApiError.ValidationError.field("token", "is invalid or has expired; ask for a new link")

/** Users of the dashboard and their credentials. */
export class Users extends Effect.Service<Users>()("core/Users", {
  dependencies: [
    Accounts.Default,
    Sessions.Default,
    Wallet.Default,
    Settings.Default,
    Mailer.Default,
    KnownBrowsers.Default
  ],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const sessions = yield* Sessions
    const wallet = yield* Wallet
    const settings = yield* Settings
    const mailer = yield* Mailer
    const browsers = yield* KnownBrowsers
    const decoy = yield* Effect.cached(Passwords.hash(randomBytes(16).toString("hex")))

    const byEmail = (email: string) =>
      orDie(rowsOf(UserRow, sql`SELECT * FROM users WHERE email = ${email}`)).pipe(Effect.map((rows) => rows[0]))

    const byId = (id: number) =>
      orDie(rowsOf(UserRow, sql`SELECT * FROM users WHERE id = ${id}`)).pipe(Effect.map((rows) => rows[0]))

    /** A new one-time token for a user; only its hash is stored. */
    const issueToken = (userId: number, purpose: Purpose) =>
      Effect.gen(function*() {
        const token = randomBytes(32).toString("base64url")
        const hours = purpose === "verify_email" ? VERIFY_HOURS : RESET_HOURS
        yield* orDie(sql`
          INSERT INTO user_tokens (token_hash, user_id, purpose, expires_at)
          VALUES (${Tokens.sha256Hex(token)}, ${userId}, ${purpose}, now() + make_interval(hours => ${hours}))
        `)
        return token
      })

    /** Uses up a token: the user it was for, or a 422 on `token`. */
    const consumeToken = (token: string, purpose: Purpose) =>
      Effect.gen(function*() {
        const [row] = yield* orDie(sql<{ user_id: number }>`
          UPDATE user_tokens SET used_at = now()
          WHERE token_hash = ${Tokens.sha256Hex(token)} AND purpose = ${purpose} AND used_at IS NULL
            AND expires_at > now()
          RETURNING user_id
        `)
        if (row === undefined) return yield* badToken()
        return row.user_id
      })

    const link = (baseUrl: string, page: string, token: string) =>
      `${baseUrl.replace(/\/+$/, "")}/#/${page}?token=${token}`

    const mail = (to: string, kind: Mail.MailKind, subject: string, body: string, url: string | null) =>
      mailer.send({ to, kind, subject, body, link: url })

    const sendVerification = (user: { id: number; name: string; email: string }, baseUrl: string) =>
      Effect.gen(function*() {
        const url = link(baseUrl, "verify-email", yield* issueToken(user.id, "verify_email"))
        yield* mail(
          user.email,
          "verify_email",
          "Verify your email address",
          `Hello ${user.name},\n\nOpen this link to verify your email address and sign in:\n${url}\n\n` +
            `It works for ${VERIFY_HOURS} hours. If you did not register, ignore this email.`,
          url
        )
      })

    /**
     * Registers a user and its account (default price group, three empty wallets) and emails
     * a verification link. A registered address is emailed that it already has an account;
     * the caller cannot tell the two apart.
     */
    const register = Effect.fn("Users.register")(function*(input: User.RegisterPayload, baseUrl: string) {
      // An unknown code is the form's mistake, told before anything is looked up by the address.
      const referrer = input.referral_code === undefined ? undefined : (yield* orDie(sql<{ id: number }>`
        SELECT id FROM accounts WHERE referral_code = ${input.referral_code.toUpperCase()} AND mode = 'live'
      `))[0]
      if (input.referral_code !== undefined && referrer === undefined) {
        return yield* ApiError.ValidationError.field("referral_code", "is not a referral code; check the link")
      }
      const passwordHash = yield* Passwords.hash(input.password)
      const created = yield* sql.withTransaction(Effect.gen(function*() {
        if ((yield* byEmail(input.email)) !== undefined) return Option.none()
        const account = yield* accounts.create({ name: input.name, price_group: settings.defaultPriceGroup }).pipe(
          // A default price group that does not exist is the operator's mistake, not the user's.
          Effect.catchTag("ValidationError", (error) => Effect.die(error))
        )
        if (referrer !== undefined) {
          yield* sql`UPDATE accounts SET referred_by = ${referrer.id} WHERE id = ${account.id}`
        }
        const [row] = yield* rowsOf(
          UserRow,
          sql`
          INSERT INTO users (account_id, name, email, phone, password_hash)
          VALUES (${account.id}, ${input.name}, ${input.email}, ${input.phone}, ${passwordHash})
          RETURNING *
        `
        )
        yield* sendVerification(row!, baseUrl)
        return Option.some(row!)
      })).pipe(
        // Two registrations of one address at once: the second finds the first's row.
        Effect.catchIf(isUniqueViolation, () => Effect.succeed(Option.none())),
        orDie
      )
      if (Option.isNone(created)) {
        yield* mail(
          input.email,
          "already_registered",
          "You already have an account",
          `Someone (perhaps you) tried to register this email address again.\n\n` +
            `Sign in at ${baseUrl.replace(/\/+$/, "")}/ or reset your password there if you forgot it.`,
          null
        )
      }
    })

    /** Verifies the address of the token's user. */
    const verifyEmail = Effect.fn("Users.verifyEmail")(function*(token: string) {
      yield* sql.withTransaction(Effect.gen(function*() {
        const userId = yield* consumeToken(token, "verify_email")
        yield* sql`UPDATE users SET email_verified_at = COALESCE(email_verified_at, now()) WHERE id = ${userId}`
      })).pipe(orDie)
    })

    /** Emails a new verification link to an unverified address; nothing for others. */
    const resendVerification = Effect.fn("Users.resendVerification")(function*(email: string, baseUrl: string) {
      const user = yield* byEmail(email)
      if (user !== undefined && user.email_verified_at === null) yield* orDie(sendVerification(user, baseUrl))
    })

    /** Emails a password reset link to a registered address; nothing for others. */
    const forgotPassword = Effect.fn("Users.forgotPassword")(function*(email: string, baseUrl: string) {
      const user = yield* byEmail(email)
      if (user === undefined) return
      const url = link(baseUrl, "reset-password", yield* issueToken(user.id, "reset_password"))
      yield* mail(
        user.email,
        "reset_password",
        "Reset your password",
        `Hello ${user.name},\n\nOpen this link to choose a new password:\n${url}\n\n` +
          `It works for ${RESET_HOURS} hour, once. If you did not ask for it, ignore this email.`,
        url
      )
    })

    /** Uses up every reset link of a user that is still unused: a new password makes them all void. */
    const revokeResetLinks = (userId: number) =>
      sql`
        UPDATE user_tokens SET used_at = now()
        WHERE user_id = ${userId} AND purpose = 'reset_password' AND used_at IS NULL
      `

    /**
     * Sets a new password with a reset token; ends every session and voids the user's other
     * reset links. It also proves the address, so the browser that reset becomes a known
     * browser of the user (`browser`: the cookie it already holds, if any): the cookie to set.
     */
    const resetPassword = Effect.fn("Users.resetPassword")(
      function*(token: string, password: string, browser: string | undefined) {
        const passwordHash = yield* Passwords.hash(password)
        const userId = yield* sql.withTransaction(Effect.gen(function*() {
          const userId = yield* consumeToken(token, "reset_password")
          yield* sql`
            UPDATE users SET password_hash = ${passwordHash}, updated_at = now(),
              email_verified_at = COALESCE(email_verified_at, now())
            WHERE id = ${userId}
          `
          yield* revokeResetLinks(userId)
          yield* sessions.endAll(userId)
          return userId
        })).pipe(orDie)
        return yield* browsers.remember(browser, { _tag: "User", id: userId })
      }
    )

    /**
     * Signs a user in: a new session (and the cookie of a known browser), or a 401 (wrong
     * address or password), a 403 (address not verified, or the account suspended: said only
     * after the right password) or a 429. The attempt is counted
     * before the password is checked (`PasswordAttempts`): per email address and client
     * address and per email address, or, from a browser this user signed in with before
     * (`browser`, its cookie), per email address and that browser. Past a limit the answer is
     * a 429 and the password is not looked at, so further guesses learn nothing.
     */
    const signIn = Effect.fn("Users.signIn")(
      function*(email: string, password: string, from: { readonly address: string; readonly browser?: string }) {
        const user = yield* byEmail(email)
        const signedIn = yield* PasswordAttempts.signIn(
          browsers,
          "dashboard",
          email,
          password,
          from,
          user === undefined
            ? undefined
            : { principal: { _tag: "User", id: user.id }, passwordHash: user.password_hash, usable: true, value: user },
          decoy
        )
        if (signedIn.email_verified_at === null) {
          return yield* new User.EmailNotVerified({
            message: "Verify your email address first: open your verification link, or ask for a new one"
          })
        }
        const [account] = yield* orDie(
          sql<{ status: string }>`SELECT status FROM accounts WHERE id = ${signedIn.account_id}`
        )
        if (account?.status !== "active") return yield* new User.AccountSuspended({ message: User.SUSPENDED_MESSAGE })
        const session = yield* sessions.create(signedIn.id)
        const browser = yield* browsers.remember(from.browser, { _tag: "User", id: signedIn.id })
        return { ...session, userId: signedIn.id, browser }
      }
    )

    /**
     * Changes the password of a signed-in user; ends their other sessions and voids their
     * reset links. Wrong current passwords are counted before the check, as sign-ins are
     * (`PasswordAttempts.CHECK_LIMIT` a minute): a stolen session cannot guess the password.
     */
    const changePassword = Effect.fn("Users.changePassword")(
      function*(userId: number, sessionId: number, current: string, next: string) {
        yield* PasswordAttempts.attempt(
          PasswordAttempts.checkSlots(`user:${userId}`),
          Effect.gen(function*() {
            const user = yield* byId(userId)
            if (user === undefined || !(yield* Passwords.verify(current, user.password_hash))) {
              return yield* ApiError.ValidationError.field("current_password", "is not your current password")
            }
          })
        )
        const passwordHash = yield* Passwords.hash(next)
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE users SET password_hash = ${passwordHash}, updated_at = now() WHERE id = ${userId}`
          yield* revokeResetLinks(userId)
        })).pipe(orDie)
        yield* sessions.endAll(userId, sessionId)
      }
    )

    /** The user and their account, for the session's page. */
    const profile = Effect.fn("Users.profile")(function*(userId: number) {
      const user = yield* byId(userId)
      if (user === undefined) return yield* Effect.dieMessage(`user ${userId} vanished`)
      const accountId = user.account_id
      const detail = yield* accounts.show(accountId).pipe(Effect.orDie)
      const balance = Option.getOrThrow(yield* wallet.balances(accountId))
      const account: User.AccountView = {
        id: detail.id,
        name: detail.name,
        price_group: detail.price_group,
        status: detail.status,
        created_at: detail.created_at,
        balance
      }
      return { user: toView(user), account }
    })

    return {
      register,
      verifyEmail,
      resendVerification,
      forgotPassword,
      resetPassword,
      signIn,
      changePassword,
      profile
    }
  })
}) {}
