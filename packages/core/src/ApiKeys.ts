/**
 * API keys: random, shown once, stored only as a SHA-256 hash with a short display prefix.
 *
 * Authentication results are cached for `Settings.authCacheTtl` (2 s by default), so a
 * revoked key or a suspended account is refused by every server process within that
 * bound; the process that revokes drops its entry at once. `last_used_at` is written on
 * each cache miss, so it is accurate to within the same bound.
 */
import { Account, type AdminApi, ApiKey, type RateLimit } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Cache, Effect, Option, Redacted } from "effect"
import { orDie } from "./Database.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"

/** Who an authenticated request acts for, and the account facts every request needs. */
export interface Principal {
  readonly accountId: Account.AccountId
  readonly keyId: ApiKey.ApiKeyId
  readonly priceGroupId: number | null
  /** The account's per-minute overrides; scopes left out take the defaults. */
  readonly limits: RateLimit.RateLimits
}

interface PrincipalRow {
  readonly id: number
  readonly account_id: number
  readonly price_group_id: number | null
  readonly limit_all: number | null
  readonly limit_orders: number | null
  readonly limit_balance: number | null
}

/** Reads the three override columns of an account row into `RateLimits`. */
export const limitsOf = (
  row: {
    readonly limit_all: number | null
    readonly limit_orders: number | null
    readonly limit_balance: number | null
  }
): RateLimit.RateLimits => ({
  ...(row.limit_all === null ? {} : { all: row.limit_all }),
  ...(row.limit_orders === null ? {} : { orders: row.limit_orders }),
  ...(row.limit_balance === null ? {} : { balance: row.limit_balance })
})

interface KeyRow {
  readonly id: number
  readonly prefix: string
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

const toView = (row: KeyRow): AdminApi.ApiKeyView => ({
  id: row.id as ApiKey.ApiKeyId,
  prefix: row.prefix,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
  revoked_at: row.revoked_at
})

/** Creating, revoking, listing and checking API keys. */
export class ApiKeys extends Effect.Service<ApiKeys>()("core/ApiKeys", {
  dependencies: [Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* Settings

    const lookup = (hash: string) =>
      orDie(sql<PrincipalRow>`
        UPDATE api_keys k SET last_used_at = now()
        FROM accounts a
        WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL AND a.id = k.account_id AND a.status = 'active'
        RETURNING k.id, k.account_id, a.price_group_id, a.limit_all, a.limit_orders, a.limit_balance
      `).pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row): Principal => ({
            accountId: row.account_id as Account.AccountId,
            keyId: row.id as ApiKey.ApiKeyId,
            priceGroupId: row.price_group_id,
            limits: limitsOf(row)
          }))
        )
      )

    // Keyed by hash, never by the key itself; unknown keys are cached too, so a flood of
    // one bad key costs one query per TTL. Capacity bounds memory.
    const cache = yield* Cache.make({ capacity: 50_000, timeToLive: settings.authCacheTtl, lookup })

    /** The principal of a key; `None` for a malformed, unknown or revoked key or a suspended account. */
    const authenticate = (key: Redacted.Redacted<string>) => {
      const value = Redacted.value(key)
      return Tokens.looksLikeApiKey(value)
        ? cache.get(Tokens.sha256Hex(value)).pipe(Effect.withSpan("ApiKeys.authenticate"))
        : Effect.succeed(Option.none<Principal>())
    }

    /** Creates a key for an account; the key itself is returned only here. */
    const create = Effect.fn("ApiKeys.create")(function*(accountId: number) {
      const key = Tokens.apiKey()
      const prefix = Tokens.displayPrefix(key)
      const rows = yield* orDie(sql<{ id: number }>`
        INSERT INTO api_keys (account_id, key_hash, prefix)
        SELECT id, ${Tokens.sha256Hex(key)}, ${prefix} FROM accounts WHERE id = ${accountId}
        RETURNING id
      `)
      if (rows.length === 0) {
        return yield* new Account.AccountNotFound({ message: `Account ${accountId} not found` })
      }
      return { id: rows[0]!.id as ApiKey.ApiKeyId, api_key: key, prefix }
    })

    /** Revokes a key at once in this process, and within the cache bound everywhere; revoking twice is harmless. */
    const revoke = Effect.fn("ApiKeys.revoke")(function*(accountId: number, keyId: number) {
      const rows = yield* orDie(sql<KeyRow & { key_hash: string }>`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = ${keyId} AND account_id = ${accountId}
        RETURNING id, prefix, created_at, last_used_at, revoked_at, key_hash
      `)
      const row = rows[0]
      if (row === undefined) {
        return yield* new ApiKey.ApiKeyNotFound({ message: `Key ${keyId} not found on account ${accountId}` })
      }
      yield* cache.invalidate(row.key_hash)
      return toView(row)
    })

    /** The keys of an account, newest first. */
    const list = (accountId: number) =>
      orDie(sql<KeyRow>`
        SELECT id, prefix, created_at, last_used_at, revoked_at FROM api_keys
        WHERE account_id = ${accountId} ORDER BY id DESC
      `).pipe(Effect.map((rows) => rows.map(toView)), Effect.withSpan("ApiKeys.list"))

    /** Forgets every cached authentication, for changes that touch a whole account (suspension, price group). */
    const forgetAll = cache.invalidateAll

    return { authenticate, create, revoke, list, forgetAll }
  })
}) {}
