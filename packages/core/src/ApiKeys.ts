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
import { Effect, Option, Redacted, Schema } from "effect"
import { afterCommit, orDie, rowsOf } from "./Database.js"
import { Settings } from "./Settings.js"
import * as TimedCache from "./TimedCache.js"
import * as Tokens from "./Tokens.js"

/** Who an authenticated request acts for, and the account facts every request needs. */
export interface Principal {
  /**
   * The account whose data the request acts on: the key's own account for a live key, that
   * account's test account for a test key (its own wallets, orders and events).
   */
  readonly accountId: Account.AccountId
  /** The account the key belongs to (the same as `accountId` for a live key): its limits and price group apply. */
  readonly ownerId: Account.AccountId
  readonly mode: ApiKey.ApiKeyMode
  readonly keyId: ApiKey.ApiKeyId
  readonly priceGroupId: number | null
  /** The account's per-minute overrides; scopes left out take the defaults. */
  readonly limits: RateLimit.RateLimits
}

const PrincipalRow = Schema.Struct({
  id: ApiKey.ApiKeyId,
  mode: ApiKey.ApiKeyMode,
  account_id: Schema.NullOr(Account.AccountId),
  owner_id: Account.AccountId,
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

/** What a test wallet holds when it is made, in pesewas (GHS 1,000 of play money). */
export const TEST_OPENING_BALANCE = 100_000n

/** An account's id. */
const AccountIdRow = Schema.Struct({ id: Account.AccountId })

/** A key's row: its view, with the driver's dates. */
const KeyRow = Schema.Struct({
  id: ApiKey.ApiKeyId,
  prefix: Schema.String,
  mode: ApiKey.ApiKeyMode,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

const toView = (
  { created_at, id, last_used_at, mode, prefix, revoked_at }: typeof KeyRow.Type
): ApiKey.ApiKeyView => ({
  id,
  prefix,
  mode,
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
          FROM accounts a LEFT JOIN accounts t ON t.live_account_id = a.id
          WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL AND a.id = k.account_id AND a.status = 'active'
          RETURNING k.id, k.mode, CASE WHEN k.mode = 'test' THEN t.id ELSE a.id END AS account_id,
            a.id AS owner_id, a.price_group_id, a.limit_all, a.limit_orders, a.limit_balance
        `
    })

    const lookup = (hash: string) =>
      orDie(findPrincipal(hash)).pipe(
        Effect.map((found) =>
          Option.flatMap(found, (row) =>
            // A test key always has its test account (made with the key); without one it cannot act.
            row.account_id === null ? Option.none() : Option.some<Principal>({
              accountId: row.account_id,
              ownerId: row.owner_id,
              mode: row.mode,
              keyId: row.id,
              priceGroupId: row.price_group_id,
              limits: limitsOf(row)
            }))
        )
      )

    // Keyed by hash, never by the key itself; unknown keys are cached too, so a flood of
    // one bad key costs one query per TTL. Revoking a key or changing an account forgets
    // here at once (see TimedCache for why that is exact).
    const cache = TimedCache.make({
      lookup,
      timeToLive: settings.authCacheTtl,
      capacity: 50_000,
      span: "ApiKeys.authenticate"
    })

    /** The principal of a key; `None` for a malformed, unknown or revoked key or a suspended account. */
    const authenticate = (key: Redacted.Redacted<string>): Effect.Effect<Option.Option<Principal>> => {
      const value = Redacted.value(key)
      return Tokens.looksLikeApiKey(value) ? cache.get(Tokens.sha256Hex(value)) : Effect.succeed(Option.none())
    }

    /**
     * What `authenticate` would answer for a key from the cache alone, synchronously:
     * `undefined` when it would have to look the key up (not cached, or expired).
     */
    const peek = (key: string): Option.Option<Principal> | undefined =>
      Tokens.looksLikeApiKey(key) ? cache.peek(Tokens.sha256Hex(key)) : Option.none()

    /**
     * True when a key is one of an account the operator suspended (not revoked): asked only of
     * a key `authenticate` refused, so the refusal can say why. Not cached: refusals are
     * counted and limited per address before this is asked.
     */
    const suspended = Effect.fn("ApiKeys.suspended")(function*(key: string) {
      if (!Tokens.looksLikeApiKey(key)) return false
      const rows = yield* orDie(sql`
        SELECT 1 FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = ${Tokens.sha256Hex(key)} AND k.revoked_at IS NULL AND a.status = 'suspended'
      `)
      return rows.length > 0
    })

    /**
     * The test account of a live account, made on first use: a hidden account with its own
     * three wallets, the main one opened with `TEST_OPENING_BALANCE` of play money. Run it
     * inside a transaction; concurrent callers make one.
     */
    const ensureTestAccount = (liveId: number) =>
      Effect.gen(function*() {
        const made = yield* rowsOf(
          AccountIdRow,
          sql`
            INSERT INTO accounts (name, mode, live_account_id, webhook_secret)
            SELECT name, 'test', id, ${Tokens.webhookSecret()} FROM accounts WHERE id = ${liveId} AND mode = 'live'
            ON CONFLICT (live_account_id) WHERE live_account_id IS NOT NULL DO NOTHING
            RETURNING id
          `
        )
        if (made.length > 0) {
          const id = made[0]!.id
          yield* sql`
            INSERT INTO wallets (account_id, kind) VALUES (${id}, 'main'), (${id}, 'referral'), (${id}, 'agent')
          `
          yield* sql`
            WITH moved AS (
              UPDATE wallets SET balance = balance + ${TEST_OPENING_BALANCE}
              WHERE account_id = ${id} AND kind = 'main'
              RETURNING account_id, kind, balance
            )
            INSERT INTO ledger_entries (account_id, wallet, amount, balance_after, reason, note)
            SELECT account_id, kind, ${TEST_OPENING_BALANCE}, balance, 'funding', 'Test wallet opening balance'
            FROM moved
          `
          return id
        }
        const [found] = yield* rowsOf(AccountIdRow, sql`SELECT id FROM accounts WHERE live_account_id = ${liveId}`)
        return found?.id
      })

    /** The id of an account's test account, made on first use; `None` when the live account does not exist. */
    const testAccount = Effect.fn("ApiKeys.testAccount")(function*(liveId: Account.AccountId) {
      return Option.fromNullable(yield* orDie(sql.withTransaction(ensureTestAccount(liveId))))
    })

    /**
     * The account whose wallets a mode of a live account uses: the account itself for `live`,
     * its test account (made on first use) for `test`; `None` when there is no such live account.
     */
    const accountFor = Effect.fn("ApiKeys.accountFor")(function*(liveId: Account.AccountId, mode: ApiKey.ApiKeyMode) {
      if (mode === "test") return yield* testAccount(liveId)
      const rows = yield* orDie(sql<{ id: number }>`SELECT id FROM accounts WHERE id = ${liveId} AND mode = 'live'`)
      return rows.length === 0 ? Option.none<Account.AccountId>() : Option.some(liveId)
    })

    /** Creates a key for an account; the key itself is returned only here. A test key makes the test account too. */
    const create = Effect.fn("ApiKeys.create")(
      function*(accountId: Account.AccountId, name: string | null = null, mode: ApiKey.ApiKeyMode = "live") {
        const key = Tokens.apiKey(mode)
        const prefix = Tokens.displayPrefix(key)
        const rows = yield* orDie(sql.withTransaction(Effect.gen(function*() {
          const inserted = yield* rowsOf(
            Schema.Struct({ id: ApiKey.ApiKeyId }),
            sql`
              INSERT INTO api_keys (account_id, key_hash, prefix, name, mode)
              SELECT id, ${Tokens.sha256Hex(key)}, ${prefix}, ${name}, ${mode} FROM accounts
              WHERE id = ${accountId} AND mode = 'live'
              RETURNING id
            `
          )
          if (inserted.length > 0 && mode === "test") yield* ensureTestAccount(accountId)
          return inserted
        })))
        if (rows.length === 0) {
          return yield* new Account.AccountNotFound({ message: `Account ${accountId} not found` })
        }
        const created: ApiKey.NewApiKey = {
          id: rows[0]!.id,
          api_key: key,
          prefix,
          mode
        }
        return created
      }
    )

    /** Revokes a key at once in this process, and within the cache bound everywhere; revoking twice is harmless. */
    const revokeRow = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Account.AccountId, keyId: ApiKey.ApiKeyId }),
      Result: Schema.Struct({ ...KeyRow.fields, key_hash: Schema.String }),
      execute: ({ accountId, keyId }) =>
        sql`
          UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
          WHERE id = ${keyId} AND account_id = ${accountId}
          RETURNING id, prefix, mode, created_at, last_used_at, revoked_at, key_hash
        `
    })

    const revoke = Effect.fn("ApiKeys.revoke")(function*(accountId: Account.AccountId, keyId: ApiKey.ApiKeyId) {
      const found = yield* orDie(revokeRow({ accountId, keyId }))
      const row = Option.getOrUndefined(found)
      if (row === undefined) {
        return yield* new ApiKey.ApiKeyNotFound({ message: `Key ${keyId} not found on account ${accountId}` })
      }
      // Once revoked for good: forgotten before the commit, a lookup in between would keep it valid.
      yield* afterCommit(cache.forget(row.key_hash))
      return toView(row)
    })

    /** The keys of an account, newest first. */
    const listRows = SqlSchema.findAll({
      Request: Account.AccountId,
      Result: KeyRow,
      execute: (accountId) =>
        sql`
          SELECT id, prefix, mode, created_at, last_used_at, revoked_at FROM api_keys
          WHERE account_id = ${accountId} ORDER BY id DESC
        `
    })

    const list = (accountId: Account.AccountId) =>
      orDie(listRows(accountId)).pipe(Effect.map((rows) => rows.map(toView)), Effect.withSpan("ApiKeys.list"))

    /** Forgets every cached authentication once the change commits, for changes that touch a whole account (suspension, price group). */
    const forgetAll = afterCommit(cache.forgetAll)

    return { authenticate, peek, suspended, create, testAccount, accountFor, revoke, list, forgetAll }
  })
}) {}
