/**
 * Wallets: three balances per account, every movement a ledger entry that records the
 * balance it left. A movement is one statement that updates the balance only if it stays
 * non-negative and writes the entry from the updated row, so balances always equal the
 * ledger's sum and concurrent movements on one wallet serialise on its row lock.
 */
import {
  Account,
  ApiError,
  Ledger,
  Money,
  Order,
  Page as PageContract,
  Wallet as WalletContract,
  type Webhook
} from "@databundle/contract"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Int8, Int8Number, orDie, rowsOf } from "./Database.js"
import * as Page from "./Page.js"
import { prepared } from "./Prepared.js"
import { Webhooks } from "./Webhooks.js"

/** A movement to apply to one wallet. */
export interface Movement {
  readonly accountId: Account.AccountId
  readonly wallet: WalletContract.WalletKind
  /** Signed pesewas: credits positive, debits negative. */
  readonly amount: bigint
  readonly reason: Ledger.LedgerReason
  readonly orderId?: string | undefined
  /** The payment a funding movement credits (at most one credit per payment). */
  readonly paymentId?: string | undefined
  /** The transfer a `transfer` movement is one side of. */
  readonly transferId?: string | undefined
  readonly note?: string | null | undefined
  /**
   * A credit someone chose to make (a funding, an adjustment): refused when it would take the
   * wallet past `Money.MAX_PESEWAS`. Money owed back (a refund, a payment received) is not.
   */
  readonly bounded?: boolean | undefined
}

/** A movement that was applied. */
export interface Moved {
  readonly entryId: number
  readonly balanceAfter: bigint
  readonly createdAt: Date
}

/** A ledger entry's row: the entry as the API shows it, with the driver's int8 and dates. */
export const LedgerRow = Schema.Struct({
  id: Int8Number,
  wallet: WalletContract.WalletKind,
  amount: Int8,
  balance_after: Int8,
  reason: Ledger.LedgerReason,
  order_number: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf
})

/** A wallet's balance, as `balances` reads it. */
const BalanceRow = Schema.Struct({ kind: WalletContract.WalletKind, balance: Int8 })

/** The ledger entry of a movement, as `move` writes it. */
const MovedRow = Schema.Struct({ id: Int8Number, balance_after: Int8, created_at: Schema.DateFromSelf })

/** A wallet whose balance differs from its ledger's sum, as the audit finds it. */
const MismatchRow = Schema.Struct({
  account_id: Account.AccountId,
  wallet: WalletContract.WalletKind,
  balance: Int8,
  ledger_sum: Int8
})

/** Wallet balances, movements, the ledger and its audit. */
export class Wallet extends Effect.Service<Wallet>()("core/Wallet", {
  dependencies: [Webhooks.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const webhooks = yield* Webhooks

    const balanceRows = SqlSchema.findAll({
      Request: Schema.Number,
      Result: BalanceRow,
      execute: (accountId) =>
        sql`${prepared(sql)}
          SELECT kind, balance FROM wallets WHERE account_id = ${accountId}
        `
    })

    /** The three balances of an account; `None` when the account does not exist. */
    const balances = Effect.fn("Wallet.balances")(function*(accountId: number) {
      const rows = yield* orDie(balanceRows(accountId))
      if (rows.length === 0) return Option.none<WalletContract.Balance>()
      const balance = { main: 0n, referral: 0n, agent: 0n }
      for (const row of rows) balance[row.kind] = row.balance
      return Option.some<WalletContract.Balance>(balance)
    })

    const moveRow = SqlSchema.findOne({
      Request: Schema.Struct({
        accountId: Schema.Number,
        wallet: WalletContract.WalletKind,
        amount: Schema.BigIntFromSelf,
        reason: Ledger.LedgerReason,
        orderId: Schema.NullOr(Schema.String),
        paymentId: Schema.NullOr(Schema.String),
        transferId: Schema.NullOr(Schema.String),
        note: Schema.NullOr(Schema.String),
        bounded: Schema.Boolean
      }),
      Result: MovedRow,
      execute: (movement) =>
        sql`
          WITH moved AS (
            UPDATE wallets SET balance = balance + ${movement.amount}
            WHERE account_id = ${movement.accountId} AND kind = ${movement.wallet}
              AND balance + ${movement.amount} >= 0
              ${movement.bounded ? sql`AND balance + ${movement.amount} <= ${Money.MAX_PESEWAS}` : sql``}
            RETURNING account_id, kind, balance
          )
          INSERT INTO ledger_entries (account_id, wallet, amount, balance_after, reason, order_id, payment_id,
            transfer_id, note)
          SELECT account_id, kind, ${movement.amount}, balance, ${movement.reason}, ${movement.orderId},
            ${movement.paymentId}, ${movement.transferId}, ${movement.note}
          FROM moved
          RETURNING id, balance_after, created_at
        `
    })

    /**
     * Applies a movement; `None` when it would take the wallet below zero, or a bounded credit
     * past `Money.MAX_PESEWAS` (or the wallet does not exist). Run it inside the transaction of
     * whatever else the movement belongs to.
     */
    const move = (movement: Movement) =>
      orDie(moveRow({
        accountId: movement.accountId,
        wallet: movement.wallet,
        amount: movement.amount,
        reason: movement.reason,
        orderId: movement.orderId ?? null,
        paymentId: movement.paymentId ?? null,
        transferId: movement.transferId ?? null,
        note: movement.note ?? null,
        bounded: movement.bounded === true
      })).pipe(
        Effect.map(Option.map((row): Moved => ({
          entryId: row.id,
          balanceAfter: row.balance_after,
          createdAt: row.created_at
        }))),
        Effect.withSpan("Wallet.move")
      )

    /** The event of a movement, to record later in its transaction: `wallet.funded` or `wallet.debited`. */
    const movementEvent = (movement: Movement, moved: Moved, orderNumber?: Order.OrderNumber) => {
      const data: Webhook.WalletMovement = {
        account_id: movement.accountId,
        wallet: movement.wallet,
        amount: movement.amount < 0n ? -movement.amount : movement.amount,
        balance: moved.balanceAfter,
        reason: movement.reason,
        order_number: orderNumber ?? null,
        note: movement.note ?? null
      }
      const content: Webhook.WebhookEventContent = movement.amount > 0n
        ? { type: "wallet.funded", data }
        : { type: "wallet.debited", data }
      return { accountId: movement.accountId, content }
    }

    /** The webhook of a movement, recorded now: `wallet.funded` for credits, `wallet.debited` for debits. */
    const announce = (movement: Movement, moved: Moved, orderNumber?: Order.OrderNumber) => {
      const { accountId, content } = movementEvent(movement, moved, orderNumber)
      return webhooks.enqueue(accountId, content)
    }

    /** A funding or an adjustment: a 404 without the account, a 400 past zero, a 422 past the most a wallet may be funded to. */
    const operatorMovement = (movement: Movement) =>
      sql.withTransaction(Effect.gen(function*() {
        const moved = yield* move({ ...movement, bounded: true })
        if (Option.isNone(moved)) {
          const current = yield* balances(movement.accountId)
          if (Option.isNone(current)) {
            return yield* new Account.AccountNotFound({ message: `Account ${movement.accountId} not found` })
          }
          const after = current.value[movement.wallet] + movement.amount
          if (after > Money.MAX_PESEWAS) {
            return yield* ApiError.ValidationError.field(
              "amount",
              `would take the ${movement.wallet} wallet to ${Money.formatGhs(after)}, past ${
                Money.formatGhs(Money.MAX_PESEWAS)
              }, the most a wallet may be funded to`
            )
          }
          return yield* new WalletContract.InsufficientBalance({
            message: `The ${movement.wallet} wallet holds less than the adjustment takes`,
            balance: current.value[movement.wallet],
            required: -movement.amount
          })
        }
        yield* announce(movement, moved.value)
        const balance = Option.getOrThrow(yield* balances(movement.accountId))
        const entry = yield* SqlSchema.single({
          Request: Schema.Number,
          Result: LedgerRow,
          execute: (id) =>
            sql`
              SELECT id, wallet, amount, balance_after, reason, NULL AS order_number, note, created_at
              FROM ledger_entries WHERE id = ${id}
            `
        })(moved.value.entryId)
        return { balance, entry }
      })).pipe(orDie)

    /** Credits a wallet (operator funding). */
    const fund = (
      accountId: Account.AccountId,
      input: {
        readonly amount: bigint
        readonly wallet?: WalletContract.WalletKind | undefined
        readonly note?: string | undefined
      }
    ) =>
      operatorMovement({
        accountId,
        wallet: input.wallet ?? "main",
        amount: input.amount,
        reason: "funding",
        note: input.note
      })
        .pipe(
          // A credit cannot take a wallet below zero.
          Effect.catchTag("InsufficientBalance", (error) => Effect.die(error)),
          Effect.withSpan("Wallet.fund")
        )

    /** A signed correction by the operator; it may not take a wallet below zero. */
    const adjust = (
      accountId: Account.AccountId,
      input: { readonly amount: bigint; readonly wallet?: WalletContract.WalletKind | undefined; readonly note: string }
    ) =>
      operatorMovement({
        accountId,
        wallet: input.wallet ?? "main",
        amount: input.amount,
        reason: "adjustment",
        note: input.note
      })
        .pipe(Effect.withSpan("Wallet.adjust"))

    /**
     * One page of an account's ledger, newest first: the operator's view of an account and the
     * account's own (GET /wallet/transactions). `to` as a whole day includes that day.
     */
    const ledger = Effect.fn("Wallet.ledger")(function*(
      accountId: number,
      query: Page.PageQuery & {
        readonly wallet?: WalletContract.WalletKind | undefined
        readonly reason?: Ledger.LedgerReason | undefined
        readonly from?: string | undefined
        readonly to?: string | undefined
      }
    ) {
      if (Option.isNone(yield* balances(accountId))) {
        return yield* new Account.AccountNotFound({ message: `Account ${accountId} not found` })
      }
      const page = Page.resolve(query, PageContract.ADMIN_LISTS)
      const conditions = [sql`l.account_id = ${accountId}`]
      if (query.wallet !== undefined) conditions.push(sql`l.wallet = ${query.wallet}`)
      if (query.reason !== undefined) conditions.push(sql`l.reason = ${query.reason}`)
      conditions.push(...Page.dateRange(sql, "l.created_at", query))
      const where = sql.and(conditions)
      const [count] = yield* orDie(
        sql<{ total: string }>`SELECT count(*) AS total FROM ledger_entries l WHERE ${where}`
      )
      const rows = yield* orDie(
        rowsOf(
          LedgerRow,
          sql`
        SELECT l.id, l.wallet, l.amount, l.balance_after, l.reason, o.order_number, l.note, l.created_at
        FROM ledger_entries l LEFT JOIN orders o ON o.id = l.order_id
        WHERE ${where}
        ORDER BY l.id DESC
        LIMIT ${page.perPage} OFFSET ${page.offset}
      `
        )
      )
      return { entries: rows, pagination: Page.pagination(page, Number(count!.total)) }
    })

    /**
     * Checks the money invariants over the whole database: every balance of the three wallets
     * equals its ledger's sum and is non-negative, every order was debited once, every failed
     * order refunded once and nothing else refunded, every commission belongs to a successful
     * order or was reversed once with its failure, and every transfer moved one amount out of an
     * earnings wallet and into main.
     */
    const audit = Effect.gen(function*() {
      const mismatches = yield* rowsOf(
        MismatchRow,
        sql`
            SELECT w.account_id, w.kind AS wallet, w.balance, COALESCE(l.total, 0) AS ledger_sum
            FROM wallets w
            LEFT JOIN (
              SELECT account_id, wallet, sum(amount) AS total FROM ledger_entries GROUP BY account_id, wallet
            ) l ON l.account_id = w.account_id AND l.wallet = w.kind
            WHERE w.balance <> COALESCE(l.total, 0)
            ORDER BY w.account_id, w.kind
          `
      )
      const [counts] = yield* sql<Record<string, string>>`
        SELECT
          (SELECT count(*) FROM wallets) AS wallets,
          (SELECT count(*) FROM ledger_entries) AS ledger_entries,
          (SELECT count(*) FROM orders) AS orders,
          (SELECT count(*) FROM wallets WHERE balance < 0) AS negative_balances,
          (SELECT count(*) FROM orders o WHERE NOT EXISTS (
            SELECT 1 FROM ledger_entries l WHERE l.order_id = o.id AND l.reason = 'order' AND l.amount = -o.amount
          )) AS orders_without_debit,
          (SELECT count(*) FROM orders o WHERE o.status = 'failed' AND NOT EXISTS (
            SELECT 1 FROM ledger_entries l WHERE l.order_id = o.id AND l.reason = 'refund' AND l.amount = o.amount
          )) AS failed_orders_without_refund,
          (SELECT count(*) FROM ledger_entries l JOIN orders o ON o.id = l.order_id
            WHERE l.reason = 'refund' AND o.status <> 'failed') AS refunds_without_failed_order,
          (SELECT count(*) FROM ledger_entries l JOIN orders o ON o.id = l.order_id
            WHERE l.reason = 'commission' AND o.status <> 'successful' AND NOT EXISTS (
              SELECT 1 FROM ledger_entries r WHERE r.order_id = l.order_id AND r.reason = 'commission_reversal'
                AND r.account_id = l.account_id AND r.wallet = l.wallet AND r.amount = -l.amount
            )) AS commissions_without_successful_order,
          (SELECT count(*) FROM ledger_entries r JOIN orders o ON o.id = r.order_id
            WHERE r.reason = 'commission_reversal' AND (o.status <> 'failed' OR NOT EXISTS (
              SELECT 1 FROM ledger_entries l WHERE l.order_id = r.order_id AND l.reason = 'commission'
                AND l.account_id = r.account_id AND l.wallet = r.wallet AND l.amount = -r.amount
            ))) AS reversals_without_commission,
          (SELECT count(*) FROM wallet_transfers t WHERE NOT EXISTS (
              SELECT 1 FROM ledger_entries d JOIN ledger_entries c ON c.transfer_id = d.transfer_id
              WHERE d.transfer_id = t.id AND d.account_id = t.account_id AND d.wallet = t.from_wallet
                AND d.amount = -t.amount AND c.account_id = t.account_id AND c.wallet = 'main' AND c.amount = t.amount
            ) OR (SELECT count(*) FROM ledger_entries e WHERE e.transfer_id = t.id) <> 2) AS unbalanced_transfers
      `
      const n = (key: string) => Number(counts![key])
      const report: Ledger.AuditReport = {
        ok: mismatches.length === 0 && n("negative_balances") === 0 && n("orders_without_debit") === 0 &&
          n("failed_orders_without_refund") === 0 && n("refunds_without_failed_order") === 0 &&
          n("commissions_without_successful_order") === 0 && n("reversals_without_commission") === 0 &&
          n("unbalanced_transfers") === 0,
        wallets: n("wallets"),
        ledger_entries: n("ledger_entries"),
        orders: n("orders"),
        mismatches,
        negative_balances: n("negative_balances"),
        orders_without_debit: n("orders_without_debit"),
        failed_orders_without_refund: n("failed_orders_without_refund"),
        refunds_without_failed_order: n("refunds_without_failed_order"),
        commissions_without_successful_order: n("commissions_without_successful_order"),
        reversals_without_commission: n("reversals_without_commission"),
        unbalanced_transfers: n("unbalanced_transfers")
      }
      return report
    }).pipe(orDie, Effect.withSpan("Wallet.audit"))

    return { balances, move, movementEvent, announce, fund, adjust, ledger, audit }
  })
}) {}
