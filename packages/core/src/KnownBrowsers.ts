/**
 * Known browsers: a browser that signed in to an account (or reset its password, which proves
 * the email address) gets a long-lived cookie of its own, a 256-bit token known here only as
 * its SHA-256 hash, bound to that user or operator. Sign-in from a known browser is counted
 * per browser instead of per email address (`PasswordAttempts`), so someone guessing the
 * password from elsewhere cannot lock the owner out. The cookie lifts nothing else: the
 * password is still checked, and it is sent only to the sign-in path.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { orDie } from "./Database.js"
import { looksLikeToken, newToken } from "./Sessions.js"
import * as Tokens from "./Tokens.js"

/** How long a browser stays known after it last signed in. */
export const KNOWN_DAYS = 180

/** The most browsers kept per user or operator; the longest unused are forgotten first. */
export const MAX_PER_PRINCIPAL = 20

/** Whose browser: a dashboard user's or a console operator's. */
export type Principal =
  | { readonly _tag: "User"; readonly id: number }
  | { readonly _tag: "Operator"; readonly id: number }

/** A browser as the cookie names it: its token, and when the cookie should expire. */
export interface Remembered {
  readonly token: string
  readonly expiresAt: Date
}

/** Recognising and remembering browsers. */
export class KnownBrowsers extends Effect.Service<KnownBrowsers>()("core/KnownBrowsers", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const owner = (principal: Principal) =>
      principal._tag === "User" ? sql`user_id = ${principal.id}` : sql`operator_id = ${principal.id}`

    /**
     * The browser's id (the start of its token's hash, for counting) when `token` is a live
     * known browser of `principal`; `None` otherwise.
     */
    const recognize = Effect.fn("KnownBrowsers.recognize")(function*(
      token: string | undefined,
      principal: Principal
    ) {
      if (token === undefined || !looksLikeToken(token)) return Option.none<string>()
      const hash = Tokens.sha256Hex(token)
      const [row] = yield* orDie(sql<{ token_hash: string }>`
        SELECT token_hash FROM known_browsers
        WHERE token_hash = ${hash} AND ${owner(principal)} AND expires_at > now()
      `)
      return row === undefined ? Option.none<string>() : Option.some(hash.slice(0, 16))
    })

    /**
     * Remembers the browser of a sign-in (or a reset) of `principal`: the one its cookie names
     * when that is known for them (its time renewed), else a new one. The cookie to set either way.
     */
    const remember = Effect.fn("KnownBrowsers.remember")(function*(token: string | undefined, principal: Principal) {
      if (token !== undefined && looksLikeToken(token)) {
        const [row] = yield* orDie(sql<{ expires_at: Date }>`
          UPDATE known_browsers SET last_used_at = now(), expires_at = now() + make_interval(days => ${KNOWN_DAYS})
          WHERE token_hash = ${Tokens.sha256Hex(token)} AND ${owner(principal)} AND expires_at > now()
          RETURNING expires_at
        `)
        if (row !== undefined) return { token, expiresAt: row.expires_at } satisfies Remembered
      }
      const fresh = newToken()
      const column = principal._tag === "User" ? sql`user_id` : sql`operator_id`
      const [row] = yield* orDie(sql<{ expires_at: Date }>`
        INSERT INTO known_browsers (token_hash, ${column}, expires_at)
        VALUES (${fresh.hash}, ${principal.id}, now() + make_interval(days => ${KNOWN_DAYS}))
        RETURNING expires_at
      `)
      // Expired browsers, and all but the most recently used, are forgotten.
      yield* orDie(sql`
        DELETE FROM known_browsers WHERE ${owner(principal)} AND (expires_at <= now() OR token_hash NOT IN (
          SELECT token_hash FROM known_browsers WHERE ${owner(principal)}
          ORDER BY last_used_at DESC LIMIT ${MAX_PER_PRINCIPAL}
        ))
      `)
      return { token: fresh.token, expiresAt: row!.expires_at } satisfies Remembered
    })

    return { recognize, remember }
  })
}) {}
