/**
 * Dashboard sessions: a 256-bit random token in the browser's cookie, known here only as its
 * SHA-256 hash. A session ends 30 days after sign-in, after 7 days unused, at sign-out, or
 * when its user's password changes. Its CSRF token is derived from the session token, so it
 * needs no storage and cannot be computed from the database.
 */
import { Account, type RateLimit, User } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { limitsOf } from "./ApiKeys.js"
import { Int8Number, orDie, rowsOf } from "./Database.js"
import * as Tokens from "./Tokens.js"

/** How long a session lives at most. */
export const ABSOLUTE_DAYS = 30

/** How long a session lives unused. */
export const IDLE_DAYS = 7

/** Who a session is. */
export interface SessionPrincipal {
  readonly sessionId: number
  readonly userId: User.UserId
  readonly accountId: Account.AccountId
  readonly priceGroupId: number | null
  /** The account's per-minute overrides (its `orders` limit applies to dashboard purchases too). */
  readonly limits: RateLimit.RateLimits
  readonly expiresAt: Date
}

/** The CSRF token of a session token: base64url SHA-256 of a label and the token. */
export const csrfToken = (sessionToken: string): string =>
  createHash("sha256").update(`bundles-csrf\u0000${sessionToken}`).digest("base64url")

/** True when a session token has the shape of one (checked before any database work). */
export const looksLikeToken = (token: string) => /^[A-Za-z0-9_-]{43}$/.test(token)

/** A new session token (256 random bits, base64url) and its SHA-256 hash, the only form stored. */
export const newToken = (): { readonly token: string; readonly hash: string } => {
  const token = randomBytes(32).toString("base64url")
  return { token, hash: Tokens.sha256Hex(token) }
}

/** A session just opened. */
const SessionRow = Schema.Struct({ id: Int8Number, expires_at: Schema.DateFromSelf })

/** A live session of a token with its user's account, and whether its last use is old enough to record anew. */
const LiveSessionRow = Schema.Struct({
  id: Int8Number,
  user_id: User.UserId,
  account_id: Account.AccountId,
  price_group_id: Schema.NullOr(Schema.Number),
  limit_all: Schema.NullOr(Schema.Number),
  limit_orders: Schema.NullOr(Schema.Number),
  limit_balance: Schema.NullOr(Schema.Number),
  expires_at: Schema.DateFromSelf,
  stale: Schema.Boolean
})

/** Creating, checking and ending dashboard sessions. */
export class Sessions extends Effect.Service<Sessions>()("core/Sessions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A new session for a user; the token is returned only here. */
    const create = Effect.fn("Sessions.create")(function*(userId: number) {
      const { hash, token } = newToken()
      const [row] = yield* orDie(rowsOf(
        SessionRow,
        sql`
          INSERT INTO sessions (token_hash, user_id, expires_at)
          VALUES (${hash}, ${userId}, now() + make_interval(days => ${ABSOLUTE_DAYS}))
          RETURNING id, expires_at
        `
      ))
      return { token, sessionId: row!.id, expiresAt: row!.expires_at, csrfToken: csrfToken(token) }
    })

    /**
     * The live session of a token (its account active, its user's session neither ended nor
     * expired nor idle too long); `None` otherwise. Marks it used, at most once a minute.
     */
    const authenticate = Effect.fn("Sessions.authenticate")(function*(token: string) {
      if (!looksLikeToken(token)) return Option.none<SessionPrincipal>()
      const [row] = yield* orDie(rowsOf(
        LiveSessionRow,
        sql`
        SELECT s.id, s.user_id, u.account_id, a.price_group_id, a.limit_all, a.limit_orders, a.limit_balance,
          s.expires_at,
          s.last_seen_at < now() - interval '1 minute' AS stale
        FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
        WHERE s.token_hash = ${Tokens.sha256Hex(token)} AND s.ended_at IS NULL AND s.expires_at > now()
          AND s.last_seen_at > now() - make_interval(days => ${IDLE_DAYS}) AND a.status = 'active'
      `
      ))
      if (row === undefined) return Option.none<SessionPrincipal>()
      if (row.stale) yield* orDie(sql`UPDATE sessions SET last_seen_at = now() WHERE id = ${row.id}`)
      return Option.some<SessionPrincipal>({
        sessionId: row.id,
        userId: row.user_id,
        accountId: row.account_id,
        priceGroupId: row.price_group_id,
        limits: limitsOf(row),
        expiresAt: row.expires_at
      })
    })

    /**
     * True when a token is a live session of an account the operator suspended: asked only of a
     * token `authenticate` refused, so the refusal can say why.
     */
    const suspended = Effect.fn("Sessions.suspended")(function*(token: string) {
      if (!looksLikeToken(token)) return false
      const rows = yield* orDie(sql`
        SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
        WHERE s.token_hash = ${Tokens.sha256Hex(token)} AND s.ended_at IS NULL AND s.expires_at > now()
          AND a.status = 'suspended'
      `)
      return rows.length > 0
    })

    /** Ends one session. */
    const end = Effect.fn("Sessions.end")(function*(sessionId: number) {
      yield* orDie(sql`UPDATE sessions SET ended_at = now() WHERE id = ${sessionId} AND ended_at IS NULL`)
    })

    /** Ends every session of a user, but `except` when given. */
    const endAll = Effect.fn("Sessions.endAll")(function*(userId: number, except?: number) {
      yield* orDie(sql`
        UPDATE sessions SET ended_at = now()
        WHERE user_id = ${userId} AND ended_at IS NULL ${except === undefined ? sql`` : sql`AND id <> ${except}`}
      `)
    })

    return { create, authenticate, suspended, end, endAll }
  })
}) {}
