/**
 * API keys: random, shown once, stored only as a SHA-256 hash with a short display prefix.
 *
 * Authentication results are cached for `Settings.authCacheTtl` (2 s by default), so a
 * revoked key or a suspended account is refused by every server process within that
 * bound; the process that revokes drops its entry at once. `last_used_at` is written on
 * each cache miss, so it is accurate to within the same bound.
 */
import { Account, ApiKey, type RateLimit } from "@databundle/contract"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Cache, Effect, Option, Redacted, Schema } from "effect"
import { orDie, rowsOrDie } from "./Database.js"
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

const PrincipalRow = Schema.Struct({
  id: ApiKey.ApiKeyId,
  account_id: Account.AccountId,
  price_group_id: Schema.NullOr(Schema.Number),
  limit_all: Schema.NullOr(Schema.Number),
  limit_orders: Schema.NullOr(Schema.Number),
  limit_balance: Schema.NullOr(Schema.Number)
})

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

/** A key's row: its view, with the driver's dates. */
const KeyRow = Schema.Struct({
  id: ApiKey.ApiKeyId,
  prefix: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

const toView = ({ created_at, id, last_used_at, prefix, revoked_at }: typeof KeyRow.Type): ApiKey.ApiKeyView => ({
  id,
  prefix,
  created_at,
  last_used_at,
  revoked_at
})

/** Creating, revoking, listing and checking API keys. */
export class ApiKeys extends Effect.Service<ApiKeys>()("core/ApiKeys", {
  dependencies: [Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const settings = yield* Settings

    const findPrincipal = SqlSchema.findOne({
      Request: Schema.String,
      Result: PrincipalRow,
      execute: (hash) =>
        sql`
          UPDATE api_keys k SET last_used_at = now()
          FROM accounts a
          WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL AND a.id = k.account_id AND a.status = 'active'
          RETURNING k.id, k.account_id, a.price_group_id, a.limit_all, a.limit_orders, a.limit_balance
        `
    })

    const lookup = (hash: string) =>
      rowsOrDie(findPrincipal(hash)).pipe(
        Effect.map((found) =>
          Option.map(found, (row): Principal => ({
            accountId: row.account_id,
            keyId: row.id,
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
        ? cache.get(Tokens.sha256Hex(value)).pipe(Effect.withSpan("ApiKeys.authenticate", { captureStackTrace: false }))
        : Effect.succeed(Option.none<Principal>())
    }

    /** Creates a key for an account; the key itself is returned only here. */
    const create = Effect.fn("ApiKeys.create")(function*(accountId: Account.AccountId, name: string | null = null) {
      const key = Tokens.apiKey()
      const prefix = Tokens.displayPrefix(key)
      const rows = yield* orDie(sql<{ id: number }>`
        INSERT INTO api_keys (account_id, key_hash, prefix, name)
        SELECT id, ${Tokens.sha256Hex(key)}, ${prefix}, ${name} FROM accounts WHERE id = ${accountId}
        RETURNING id
      `)
      if (rows.length === 0) {
        return yield* new Account.AccountNotFound({ message: `Account ${accountId} not found` })
      }
      const created: ApiKey.NewApiKey = { id: Schema.decodeSync(ApiKey.ApiKeyId)(rows[0]!.id), api_key: key, prefix }
      return created
    })

    /** Revokes a key at once in this process, and within the cache bound everywhere; revoking twice is harmless. */
    const revokeRow = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Account.AccountId, keyId: ApiKey.ApiKeyId }),
      Result: Schema.Struct({ ...KeyRow.fields, key_hash: Schema.String }),
      execute: ({ accountId, keyId }) =>
        sql`
          UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
          WHERE id = ${keyId} AND account_id = ${accountId}
          RETURNING id, prefix, created_at, last_used_at, revoked_at, key_hash
        `
    })

    const revoke = Effect.fn("ApiKeys.revoke")(function*(accountId: Account.AccountId, keyId: ApiKey.ApiKeyId) {
      const found = yield* rowsOrDie(revokeRow({ accountId, keyId }))
      const row = Option.getOrUndefined(found)
      if (row === undefined) {
        return yield* new ApiKey.ApiKeyNotFound({ message: `Key ${keyId} not found on account ${accountId}` })
      }
      yield* cache.invalidate(row.key_hash)
      return toView(row)
    })

    /** The keys of an account, newest first. */
    const listRows = SqlSchema.findAll({
      Request: Account.AccountId,
      Result: KeyRow,
      execute: (accountId) =>
        sql`
          SELECT id, prefix, created_at, last_used_at, revoked_at FROM api_keys
          WHERE account_id = ${accountId} ORDER BY id DESC
        `
    })

    const list = (accountId: Account.AccountId) =>
      rowsOrDie(listRows(accountId)).pipe(Effect.map((rows) => rows.map(toView)), Effect.withSpan("ApiKeys.list"))

    /** Forgets every cached authentication, for changes that touch a whole account (suspension, price group). */
    const forgetAll = cache.invalidateAll

    return { authenticate, create, revoke, list, forgetAll }
  })
}) {}
