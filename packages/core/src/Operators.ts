/**
 * Operators: the people who run the business from the console, with passwords of their own
 * (scrypt, as the dashboard users') and sessions of their own (`operator_sessions`, the token
 * stored only as its SHA-256 hash, the CSRF token derived from it, as the dashboard's). An
 * operator's session moves money, so it is short: it ends 12 hours after sign-in (a working
 * day), after 2 hours unused, at sign-out, or when its operator is disabled. Sign-in failures are throttled as the dashboard's are, with counts of their own.
 *
 * Each operator has a role: an `owner` manages operators (creates, disables, sets passwords
 * and roles), an `operator` runs the business but manages no operator. The gateway refuses an
 * operator's session on the endpoints the contract marks for owners (`OwnersOnly`).
 */
import { ApiError, Operator } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { Int8Number, isUniqueViolation, orDie, rowsOf } from "./Database.js"
import { KnownBrowsers } from "./KnownBrowsers.js"
import * as PasswordAttempts from "./PasswordAttempts.js"
import * as Passwords from "./Passwords.js"
import { csrfToken, looksLikeToken, newToken } from "./Sessions.js"
import * as Tokens from "./Tokens.js"

/** How long an operator's session lasts from sign-in, in hours. */
const SESSION_HOURS = 12
/** How long an operator's session lasts unused, in hours. */
const IDLE_HOURS = 2

/** Who an operator session is. */
export interface OperatorPrincipal {
  readonly sessionId: number
  readonly operatorId: Operator.OperatorId
  readonly role: Operator.OperatorRole
  readonly expiresAt: Date
}

/** An operator's row (`SELECT *`). */
const OperatorRow = Schema.Struct({
  id: Operator.OperatorId,
  email: Schema.String,
  name: Schema.String,
  password_hash: Schema.String,
  role: Operator.OperatorRole,
  created_at: Schema.DateFromSelf,
  disabled_at: Schema.NullOr(Schema.DateFromSelf)
})

type OperatorRow = typeof OperatorRow.Type

/** A session just opened. */
const SessionRow = Schema.Struct({ id: Int8Number, expires_at: Schema.DateFromSelf })

/** A live session of a token, and whether its last use is old enough to record anew. */
const LiveSessionRow = Schema.Struct({
  id: Int8Number,
  operator_id: Operator.OperatorId,
  role: Operator.OperatorRole,
  expires_at: Schema.DateFromSelf,
  stale: Schema.Boolean
})

const toSummary = (row: OperatorRow): Operator.OperatorSummary => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  created_at: row.created_at,
  disabled_at: row.disabled_at
})

/** The public view (without `disabled_at`). */
export const toView = ({ disabled_at: _, ...view }: Operator.OperatorSummary): Operator.OperatorView => view

const notFound = (id: number) => new Operator.OperatorNotFound({ message: `No operator with id ${id}` })

/** Operators, their passwords and their sessions. */
export class Operators extends Effect.Service<Operators>()("core/Operators", {
  dependencies: [KnownBrowsers.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const browsers = yield* KnownBrowsers
    const decoy = yield* Effect.cached(Passwords.hash(randomBytes(16).toString("hex")))

    const byId = (id: number) =>
      orDie(rowsOf(OperatorRow, sql`SELECT * FROM operators WHERE id = ${id}`)).pipe(Effect.map((rows) => rows[0]))

    /** Every operator, oldest first. */
    const list = orDie(rowsOf(OperatorRow, sql`SELECT * FROM operators ORDER BY id`)).pipe(
      Effect.map((rows) => rows.map(toSummary)),
      Effect.withSpan("Operators.list")
    )

    /** The operator with this id. */
    const get = Effect.fn("Operators.get")(function*(id: number) {
      const row = yield* byId(id)
      if (row === undefined) return yield* notFound(id)
      return toSummary(row)
    })

    /**
     * A new operator (an `operator` unless the payload says `owner`), with the hash of their
     * password (`Passwords.hash`, made before any transaction: it takes tens of milliseconds);
     * a 409 when the email address is taken.
     */
    const insert = Effect.fn("Operators.insert")(function*(
      payload: Omit<Operator.CreateOperatorPayload, "password">,
      passwordHash: string
    ) {
      const rows = yield* rowsOf(
        OperatorRow,
        sql`
        INSERT INTO operators (email, name, password_hash, role)
        VALUES (${payload.email}, ${payload.name}, ${passwordHash}, ${payload.role ?? "operator"})
        RETURNING *
      `
      ).pipe(
        Effect.catchIf(
          isUniqueViolation,
          () => new ApiError.Conflict({ message: `An operator with the email ${payload.email} already exists` })
        ),
        orDie
      )
      return toSummary(rows[0]!)
    })

    /** Disables an operator and ends their sessions; disabling twice changes nothing more. */
    const disable = Effect.fn("Operators.disable")(function*(id: number) {
      const rows = yield* orDie(rowsOf(
        OperatorRow,
        sql`
        UPDATE operators SET disabled_at = coalesce(disabled_at, now()), updated_at = now() WHERE id = ${id} RETURNING *
      `
      ))
      if (rows[0] === undefined) return yield* notFound(id)
      yield* orDie(sql`UPDATE operator_sessions SET ended_at = now() WHERE operator_id = ${id} AND ended_at IS NULL`)
      return toSummary(rows[0])
    })

    /** Sets an operator's role. */
    const setRole = Effect.fn("Operators.setRole")(function*(id: number, role: Operator.OperatorRole) {
      const rows = yield* orDie(rowsOf(
        OperatorRow,
        sql`UPDATE operators SET role = ${role}, updated_at = now() WHERE id = ${id} RETURNING *`
      ))
      if (rows[0] === undefined) return yield* notFound(id)
      return toSummary(rows[0])
    })

    /**
     * Signs an operator in: a new session (and the cookie of a known browser), or a 401 (wrong
     * address or password, or a disabled operator: the same answer) or a 429 past the failure
     * limits, counted before the password is read, as the dashboard's (`PasswordAttempts`).
     */
    const signIn = Effect.fn("Operators.signIn")(function*(
      email: string,
      password: string,
      from: { readonly address: string; readonly browser?: string }
    ) {
      const [found] = yield* orDie(rowsOf(OperatorRow, sql`SELECT * FROM operators WHERE email = ${email}`))
      const row = yield* PasswordAttempts.signIn(
        browsers,
        "console",
        email,
        password,
        from,
        found === undefined ? undefined : {
          principal: { _tag: "Operator", id: found.id },
          passwordHash: found.password_hash,
          usable: found.disabled_at === null,
          value: found
        },
        decoy
      )
      const { hash, token } = newToken()
      const [session] = yield* orDie(rowsOf(
        SessionRow,
        sql`
        INSERT INTO operator_sessions (token_hash, operator_id, expires_at)
        VALUES (${hash}, ${row.id}, now() + make_interval(hours => ${SESSION_HOURS}))
        RETURNING id, expires_at
      `
      ))
      return {
        token,
        csrfToken: csrfToken(token),
        sessionId: session!.id,
        expiresAt: session!.expires_at,
        operator: toView(toSummary(row)),
        browser: yield* browsers.remember(from.browser, { _tag: "Operator", id: row.id })
      }
    })

    /** The live session of a token (operator not disabled, not ended, expired or idle); marks it used. */
    const authenticate = Effect.fn("Operators.authenticate")(function*(token: string) {
      if (!looksLikeToken(token)) return Option.none<OperatorPrincipal>()
      const [row] = yield* orDie(rowsOf(
        LiveSessionRow,
        sql`
        SELECT s.id, s.operator_id, o.role, s.expires_at, s.last_seen_at < now() - interval '1 minute' AS stale
        FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
        WHERE s.token_hash = ${Tokens.sha256Hex(token)} AND s.ended_at IS NULL AND s.expires_at > now()
          AND s.last_seen_at > now() - make_interval(hours => ${IDLE_HOURS}) AND o.disabled_at IS NULL
      `
      ))
      if (row === undefined) return Option.none<OperatorPrincipal>()
      if (row.stale) yield* orDie(sql`UPDATE operator_sessions SET last_seen_at = now() WHERE id = ${row.id}`)
      return Option.some<OperatorPrincipal>({
        sessionId: row.id,
        operatorId: row.operator_id,
        role: row.role,
        expiresAt: row.expires_at
      })
    })

    /** Ends one session. */
    const end = Effect.fn("Operators.end")(function*(sessionId: number) {
      yield* orDie(sql`UPDATE operator_sessions SET ended_at = now() WHERE id = ${sessionId} AND ended_at IS NULL`)
    })

    /**
     * Sets an operator's password to this hash (made before, outside any transaction) and ends
     * every session of theirs: whoever held the old password is signed out.
     */
    const setPassword = Effect.fn("Operators.setPassword")(function*(id: number, passwordHash: string) {
      const rows = yield* orDie(rowsOf(
        OperatorRow,
        sql`
        UPDATE operators SET password_hash = ${passwordHash}, updated_at = now() WHERE id = ${id} RETURNING *
      `
      ))
      if (rows[0] === undefined) return yield* notFound(id)
      yield* orDie(sql`UPDATE operator_sessions SET ended_at = now() WHERE operator_id = ${id} AND ended_at IS NULL`)
      return toSummary(rows[0])
    })

    /**
     * The first step of an operator changing their own password: the operator, or a 422 on
     * `current_password` when it is wrong (nothing changes), or a 429 past the limit of wrong
     * ones, counted before the check (`PasswordAttempts`). The new hash is then made outside
     * any transaction and written with `replacePassword`, in the action log's transaction.
     */
    const checkCurrentPassword = Effect.fn("Operators.checkCurrentPassword")(function*(id: number, current: string) {
      return yield* PasswordAttempts.attempt(
        PasswordAttempts.checkSlots(`operator:${id}`),
        Effect.gen(function*() {
          const row = yield* byId(id)
          if (row === undefined || !(yield* Passwords.verify(current, row.password_hash))) {
            return yield* ApiError.ValidationError.field("current_password", "is not your current password")
          }
          return toSummary(row)
        })
      )
    })

    /** Writes the new hash, checking the old one is still in place, and ends the operator's other sessions. */
    const replacePassword = Effect.fn("Operators.replacePassword")(function*(
      id: number,
      sessionId: number,
      passwordHash: string
    ) {
      const rows = yield* orDie(rowsOf(
        OperatorRow,
        sql`
        UPDATE operators SET password_hash = ${passwordHash}, updated_at = now()
        WHERE id = ${id} AND disabled_at IS NULL RETURNING *
      `
      ))
      if (rows[0] === undefined) return yield* new ApiError.Unauthorized({ message: "The session has ended" })
      yield* orDie(sql`
        UPDATE operator_sessions SET ended_at = now()
        WHERE operator_id = ${id} AND id <> ${sessionId} AND ended_at IS NULL
      `)
      return toSummary(rows[0])
    })

    /** A new operator; a 409 when the email address is taken. */
    const create = (payload: Operator.CreateOperatorPayload) =>
      Effect.flatMap(Passwords.hash(payload.password), (passwordHash) => insert(payload, passwordHash))

    return {
      list,
      get,
      create,
      insert,
      disable,
      setRole,
      setPassword,
      checkCurrentPassword,
      replacePassword,
      signIn,
      authenticate,
      end
    }
  })
}) {}
