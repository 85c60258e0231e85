/**
 * Accounts: created and managed by the operator; each gets three empty wallets.
 */
import { Account, ApiError, type ApiKey, Page as PageContract } from "@databundle/contract"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { ApiKeys, limitsOf } from "./ApiKeys.js"
import { Int8, orDie, rowsOf } from "./Database.js"
import * as Page from "./Page.js"
import * as Tokens from "./Tokens.js"

/** An account row with its three balances, as `select` reads it. */
const AccountRow = Schema.Struct({
  id: Account.AccountId,
  name: Schema.String,
  price_group: Schema.NullOr(Schema.String),
  status: Account.AccountStatus,
  webhook_url: Schema.NullOr(Schema.String),
  webhook_secret: Schema.NullOr(Schema.String),
  limit_all: Schema.NullOr(Schema.Number),
  limit_orders: Schema.NullOr(Schema.Number),
  limit_balance: Schema.NullOr(Schema.Number),
  created_at: Schema.DateFromSelf,
  main: Int8,
  referral: Int8,
  agent: Int8
})

type AccountRow = typeof AccountRow.Type

/** An account with everything the operator may need (`ApiKey.AccountDetail` in the contract). */
export interface AccountDetail extends Account.AccountSummary {
  readonly webhook_secret_prefix: string | null
  readonly keys: ReadonlyArray<ApiKey.ApiKeyView>
  readonly holder: typeof Account.AccountHolder.Type | null
  readonly agent_id: Account.AccountId | null
  readonly referred_by: Account.AccountId | null
  readonly referral_code: string
}

const toSummary = (row: AccountRow): Account.AccountSummary => ({
  id: row.id,
  name: row.name,
  price_group: row.price_group,
  status: row.status,
  created_at: row.created_at,
  balance: { main: row.main, referral: row.referral, agent: row.agent },
  webhook_url: row.webhook_url,
  limits: limitsOf(row)
})

/** Creating, listing, showing and updating accounts (operator side). */
export class Accounts extends Effect.Service<Accounts>()("core/Accounts", {
  dependencies: [ApiKeys.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const apiKeys = yield* ApiKeys

    const selectText = (where: ReturnType<typeof sql.and>, tail = sql``) =>
      sql`
        SELECT a.id, a.name, g.name AS price_group, a.status, a.webhook_url, a.webhook_secret,
          a.limit_all, a.limit_orders, a.limit_balance, a.created_at,
          COALESCE(max(w.balance) FILTER (WHERE w.kind = 'main'), 0) AS main,
          COALESCE(max(w.balance) FILTER (WHERE w.kind = 'referral'), 0) AS referral,
          COALESCE(max(w.balance) FILTER (WHERE w.kind = 'agent'), 0) AS agent
        FROM accounts a
        LEFT JOIN price_groups g ON g.id = a.price_group_id
        LEFT JOIN wallets w ON w.account_id = a.id
        WHERE ${where}
        GROUP BY a.id, g.name
        ORDER BY a.id
        ${tail}
      `

    const select = (where: ReturnType<typeof sql.and>, tail = sql``) => rowsOf(AccountRow, selectText(where, tail))

    const priceGroupId = (name: string | null) =>
      Effect.gen(function*() {
        if (name === null) return null
        const [row] = yield* orDie(sql<{ id: number }>`SELECT id FROM price_groups WHERE name = ${name}`)
        if (row === undefined) {
          return yield* ApiError.ValidationError.field("price_group", `"${name}" is not a price group`)
        }
        return row.id
      })

    const createdRow = (name: string, groupId: number | null) =>
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: Schema.Struct({
          id: Account.AccountId,
          name: Schema.String,
          status: Account.AccountStatus,
          created_at: Schema.DateFromSelf
        }),
        execute: () =>
          sql`
            INSERT INTO accounts (name, price_group_id, webhook_secret)
            VALUES (${name}, ${groupId}, ${Tokens.webhookSecret()})
            RETURNING id, name, status, created_at
          `
      })(undefined)

    const notFound = (id: number) => new Account.AccountNotFound({ message: `Account ${id} not found` })

    /** Creates an active account with three empty wallets. */
    const create = Effect.fn("Accounts.create")(
      function*(input: { readonly name: string; readonly price_group?: string | null | undefined }) {
        const groupId = yield* priceGroupId(input.price_group ?? null)
        const [row] = yield* orDie(sql.withTransaction(Effect.gen(function*() {
          const rows = yield* createdRow(input.name, groupId)
          yield* sql`
          INSERT INTO wallets (account_id, kind)
          VALUES (${rows[0]!.id}, 'main'), (${rows[0]!.id}, 'referral'), (${rows[0]!.id}, 'agent')
        `
          return rows
        })))
        return {
          id: row!.id,
          name: row!.name,
          price_group: input.price_group ?? null,
          status: row!.status,
          created_at: row!.created_at
        }
      }
    )

    /** One page of accounts with their balances, oldest first. */
    const list = Effect.fn("Accounts.list")(function*(
      query: Page.PageQuery & {
        readonly status?: Account.AccountStatus | undefined
        readonly search?: string | undefined
      }
    ) {
      const page = Page.resolve(query, PageContract.ADMIN_LISTS)
      // Test accounts are part of their live account, never listed on their own.
      const conditions = [sql`a.mode = 'live'`]
      if (query.status) conditions.push(sql`a.status = ${query.status}`)
      const search = query.search?.trim()
      if (search) {
        // Part of the name, or of the user's email or phone, or the account id itself.
        const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
        const digits = search.replace(/\D/g, "")
        const id = /^\d{1,9}$/.test(search) ? Number(search) : null
        conditions.push(sql`(
          lower(a.name) LIKE ${pattern}
          OR EXISTS (SELECT 1 FROM users u WHERE u.account_id = a.id AND (u.email LIKE ${pattern}
            ${
          digits.length >= 3
            ? sql`OR u.phone LIKE ${`%${digits.slice(digits.startsWith("233") ? 3 : digits.startsWith("0") ? 1 : 0)}%`}`
            : sql``
        }))
          ${id === null ? sql`` : sql`OR a.id = ${id}`}
        )`)
      }
      const where = sql.and(conditions)
      const [count] = yield* orDie(sql<{ total: string }>`SELECT count(*) AS total FROM accounts a WHERE ${where}`)
      const rows = yield* orDie(select(where, sql`LIMIT ${page.perPage} OFFSET ${page.offset}`))
      return { accounts: rows.map(toSummary), pagination: Page.pagination(page, Number(count!.total)) }
    })

    /** Everything about one account: balances, overrides, webhook settings (not the secret), keys, its holder. */
    const show = Effect.fn("Accounts.show")(function*(id: Account.AccountId) {
      const [row] = yield* orDie(select(sql.and([sql`a.id = ${id}`, sql`a.mode = 'live'`])))
      if (row === undefined) return yield* notFound(id)
      const keys = yield* apiKeys.list(id)
      const [holder] = yield* orDie(
        sql<
          { name: string; email: string; phone: string }
        >`SELECT name, email, phone FROM users WHERE account_id = ${id}`
      )
      const programmes = yield* orDie(programmesRow(id))
      const detail: AccountDetail = {
        ...toSummary(row),
        webhook_secret_prefix: row.webhook_secret === null ? null : Tokens.webhookSecretPrefix(row.webhook_secret),
        keys,
        holder: holder ?? null,
        ...programmes
      }
      return detail
    })

    const programmesRow = SqlSchema.single({
      Request: Schema.Number,
      Result: Schema.Struct({
        agent_id: Schema.NullOr(Account.AccountId),
        referred_by: Schema.NullOr(Account.AccountId),
        referral_code: Schema.String
      }),
      execute: (id) => sql`SELECT agent_id, referred_by, referral_code FROM accounts WHERE id = ${id}`
    })

    /** An agent or referrer to set on account `id`: another live account, or null for none. */
    const earner = (id: number, field: "agent_id" | "referred_by", earnerId: Account.AccountId | null) =>
      Effect.gen(function*() {
        if (earnerId === null) return null
        if (earnerId === id) return yield* ApiError.ValidationError.field(field, "must be another account")
        const [row] = yield* orDie(sql<{ id: number }>`
          SELECT id FROM accounts WHERE id = ${earnerId} AND mode = 'live'
        `)
        if (row === undefined) return yield* ApiError.ValidationError.field(field, `account ${earnerId} does not exist`)
        return earnerId
      })

    /** Applies the given changes; fields left out stay as they are. */
    const update = Effect.fn("Accounts.update")(function*(id: Account.AccountId, patch: Account.UpdateAccountPayload) {
      const changes: Record<string, unknown> = {}
      if (patch.name !== undefined) changes.name = patch.name
      if (patch.price_group !== undefined) changes.price_group_id = yield* priceGroupId(patch.price_group)
      if (patch.status !== undefined) changes.status = patch.status
      if (patch.webhook_url !== undefined) changes.webhook_url = patch.webhook_url
      if (patch.agent_id !== undefined) changes.agent_id = yield* earner(id, "agent_id", patch.agent_id)
      if (patch.referred_by !== undefined) changes.referred_by = yield* earner(id, "referred_by", patch.referred_by)
      for (const scope of ["all", "orders", "balance"] as const) {
        const value = patch.limits?.[scope]
        if (value !== undefined) changes[`limit_${scope}`] = value
      }
      const [current] = yield* orDie(sql<{ webhook_secret: string | null }>`
        SELECT webhook_secret FROM accounts WHERE id = ${id} AND mode = 'live'
      `)
      if (current === undefined) return yield* notFound(id)
      // Every account gets a secret when created; one made before that had none until its first URL was set.
      const wantsSecret = patch.rotate_webhook_secret === true ||
        (patch.webhook_url !== undefined && patch.webhook_url !== null && current.webhook_secret === null)
      if (wantsSecret) changes.webhook_secret = Tokens.webhookSecret()
      if (Object.keys(changes).length > 0) {
        yield* orDie(sql`UPDATE accounts SET ${sql.update(changes)}, updated_at = now() WHERE id = ${id}`)
        // Status, price group and limits ride along with cached authentications: drop them here at once.
        yield* apiKeys.forgetAll
      }
      return yield* show(id)
    })

    return { create, list, show, update }
  })
}) {}
