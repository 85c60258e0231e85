/**
 * Commissions: the agent and referral programmes, and moving their earnings to main.
 *
 * An account may sell under an agent (`accounts.agent_id`) and may have a referrer
 * (`accounts.referred_by`). When one of its orders becomes `successful`, `credit` pays the
 * agent's agent wallet what the order cost minus the agent's own price for the bundle (when
 * positive) and the referrer's referral wallet the operator's referral rate of it, rounded down
 * to the pesewa; when an order is resolved as failed, `reverse` takes back what was credited.
 * Both run inside the settlement's transaction, so a commission exists exactly when its order's
 * state says it should; unique indexes (one commission, one reversal per order and wallet) are a
 * second guard. A test order pays the earner's test account, never its live wallets.
 *
 * `transfer` moves earnings from the referral or agent wallet to main: one transfer row and its
 * two ledger entries in one transaction, replayed by the holder's `Idempotency-Key`.
 */
import {
  Account,
  ApiError,
  type Commission,
  Money,
  type Order,
  Wallet as WalletContract,
  type Webhook
} from "@databundle/contract"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Int8, Int8Number, orDie } from "./Database.js"
import { Idempotency } from "./Idempotency.js"
import { type Movement, Wallet } from "./Wallet.js"

/** A commission an order earns, as `credit` computes it. */
const EarnedRow = Schema.Struct({
  wallet: Schema.Literal("agent", "referral"),
  account_id: Account.AccountId,
  amount: Int8
})

/** What a transfer answers (and replays). */
const Transferred = Schema.Struct({ balance: WalletContract.Balance })

/** A webhook event a settlement records at its end (`Orders.settle` records them by account). */
export interface Event {
  readonly accountId: number
  readonly content: Webhook.WebhookEventContent
}

/** What `credit` or `reverse` moved: how many commissions, and the earners' events to record. */
export interface Moved {
  readonly kind: "credited" | "reversed"
  readonly events: ReadonlyArray<Event>
}

/** An order whose settlement moves commissions: its id, number, account and mode. */
export interface SettledOrder {
  readonly id: string
  readonly order_number: Order.OrderNumber
  readonly mode: "live" | "test"
}

/** The referral rate, the programmes' credits and reversals, and transfers to main. */
export class Commissions extends Effect.Service<Commissions>()("core/Commissions", {
  dependencies: [Wallet.Default, Idempotency.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wallet = yield* Wallet
    const idempotency = yield* Idempotency

    const ratesRow = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ referral_bps: Schema.Number }),
      execute: () => sql`SELECT referral_bps FROM commission_rates`
    })

    /** The operator's commission settings. */
    const rates = orDie(ratesRow(undefined)).pipe(
      Effect.map((row): Commission.CommissionRates => ({ referral_percent: row.referral_bps })),
      Effect.withSpan("Commissions.rates")
    )

    /** Sets the referral rate (basis points); 0 turns the programme off. */
    const setRates = Effect.fn("Commissions.setRates")(function*(input: Commission.CommissionRates) {
      yield* orDie(sql`UPDATE commission_rates SET referral_bps = ${input.referral_percent}, updated_at = now()`)
      return yield* rates
    })

    // The earner of a test order is the earner's test account (`live_account_id`): test money
    // never reaches live wallets. The agent's price is its price group's, else the base price,
    // read at settlement.
    const earnedRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: EarnedRow,
      execute: (orderId) =>
        sql`
          SELECT e.wallet, e.account_id, e.amount FROM (
            SELECT 'agent' AS wallet, earner.id AS account_id, o.amount - COALESCE(p.price, b.base_price) AS amount
            FROM orders o
            JOIN accounts a ON a.id = o.account_id
            JOIN accounts l ON l.id = COALESCE(a.live_account_id, a.id)
            JOIN accounts ag ON ag.id = l.agent_id
            JOIN accounts earner ON CASE WHEN o.mode = 'test' THEN earner.live_account_id = ag.id ELSE earner.id = ag.id END
            JOIN bundles b ON b.id = o.bundle_id
            LEFT JOIN bundle_prices p ON p.bundle_id = b.id AND p.price_group_id = ag.price_group_id
            WHERE o.id = ${orderId}
            UNION ALL
            SELECT 'referral', earner.id, o.amount * r.referral_bps / 10000
            FROM orders o
            JOIN accounts a ON a.id = o.account_id
            JOIN accounts l ON l.id = COALESCE(a.live_account_id, a.id)
            JOIN accounts rf ON rf.id = l.referred_by
            JOIN accounts earner ON CASE WHEN o.mode = 'test' THEN earner.live_account_id = rf.id ELSE earner.id = rf.id END
            CROSS JOIN commission_rates r
            WHERE o.id = ${orderId}
          ) e
          WHERE e.amount > 0
          ORDER BY e.account_id, e.wallet
        `
    })

    /** Counts a live order's commissions for the metrics, in the transaction of the movements it counts. */
    const count = (order: SettledOrder, moved: Moved) =>
      order.mode !== "live" || moved.events.length === 0 ? Effect.void : sql`
        UPDATE figures SET value = value + ${moved.events.length}
        WHERE name = ${moved.kind === "credited" ? "live_commissions" : "live_commission_reversals"}
      `.pipe(Effect.asVoid)

    /**
     * Credits what an order that just became `successful` earns its agent and referrer, and
     * answers the `wallet.funded` event of each for the settlement to record. Run it in the
     * settlement's transaction.
     */
    const credit = (order: SettledOrder) =>
      Effect.gen(function*() {
        const earned = yield* earnedRows(order.id)
        const events: Array<Event> = []
        for (const row of earned) {
          const movement: Movement = {
            accountId: row.account_id,
            wallet: row.wallet,
            amount: row.amount,
            reason: "commission",
            orderId: order.id
          }
          const moved = yield* wallet.move(movement)
          if (Option.isNone(moved)) return yield* Effect.dieMessage(`commission found no ${row.wallet} wallet`)
          events.push(wallet.movementEvent(movement, moved.value, order.order_number))
        }
        return { kind: "credited", events } satisfies Moved as Moved
      }).pipe(Effect.withSpan("Commissions.credit"))

    const creditedRows = SqlSchema.findAll({
      Request: Schema.String,
      Result: EarnedRow,
      execute: (orderId) =>
        sql`
          SELECT wallet, account_id, amount FROM ledger_entries
          WHERE order_id = ${orderId} AND reason = 'commission'
          ORDER BY account_id, wallet
        `
    })

    /**
     * Takes back the commissions an order earned, when it is resolved as failed after it was
     * successful. A wallet that no longer holds its commission (it was moved to main) refuses the
     * whole resolution with a 409: no wallet goes below zero, and the operator adjusts first.
     * Run it in the settlement's transaction.
     */
    const reverse = (order: SettledOrder) =>
      Effect.gen(function*() {
        const credited = yield* creditedRows(order.id)
        const events: Array<Event> = []
        for (const row of credited) {
          const movement: Movement = {
            accountId: row.account_id,
            wallet: row.wallet,
            amount: -row.amount,
            reason: "commission_reversal",
            orderId: order.id
          }
          const moved = yield* wallet.move(movement)
          if (Option.isNone(moved)) {
            const held = Option.match(yield* wallet.balances(row.account_id), {
              onNone: () => 0n,
              onSome: (balance) => balance[row.wallet]
            })
            return yield* new ApiError.Conflict({
              message: `Account ${row.account_id}'s ${row.wallet} wallet holds ${Money.formatGhs(held)}, ` +
                `less than the commission of ${Money.formatGhs(row.amount)} to take back; adjust its wallets first`
            })
          }
          events.push(wallet.movementEvent(movement, moved.value, order.order_number))
        }
        return { kind: "reversed", events } satisfies Moved as Moved
      }).pipe(Effect.withSpan("Commissions.reverse"))

    const transferRow = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.Number, from: Schema.String, amount: Schema.BigIntFromSelf }),
      Result: Schema.Struct({ id: Int8Number }),
      execute: ({ accountId, amount, from }) =>
        sql`
          INSERT INTO wallet_transfers (account_id, from_wallet, amount)
          VALUES (${accountId}, ${from}, ${amount})
          RETURNING id
        `
    })

    const move = (accountId: Account.AccountId, input: WalletContract.TransferPayload) =>
      orDie(sql.withTransaction(Effect.gen(function*() {
        const transfer = yield* transferRow({ accountId, from: input.from, amount: input.amount })
        const transferId = String(transfer.id)
        const out: Movement = {
          accountId,
          wallet: input.from,
          amount: -input.amount,
          reason: "transfer",
          transferId
        }
        const taken = yield* wallet.move(out)
        if (Option.isNone(taken)) {
          const current = yield* wallet.balances(accountId)
          return yield* new WalletContract.InsufficientBalance({
            message: `The ${input.from} wallet holds less than the transfer`,
            balance: Option.match(current, { onNone: () => 0n, onSome: (b) => b[input.from] }),
            required: input.amount
          })
        }
        const into: Movement = { accountId, wallet: "main", amount: input.amount, reason: "transfer", transferId }
        const given = yield* wallet.move(into)
        if (Option.isNone(given)) return yield* Effect.dieMessage("transfer found no main wallet")
        yield* wallet.announce(out, taken.value)
        yield* wallet.announce(into, given.value)
        return { balance: Option.getOrThrow(yield* wallet.balances(accountId)) }
      })))

    /**
     * Moves earnings from the referral or agent wallet to main; a 400 `InsufficientBalance` when
     * the wallet holds less. With a key, a repeat replays the first answer (a 422 when the same
     * key came with another body), as the operator's money movements do; keys are the account's.
     */
    const transfer = Effect.fn("Commissions.transfer")(function*(
      accountId: Account.AccountId,
      input: WalletContract.TransferPayload,
      key?: string
    ) {
      if (key === undefined) return { value: yield* move(accountId, input), replayed: false }
      return yield* idempotency.run(
        { key: `account:${accountId}:${key}`, endpoint: "wallet.transfer", target: String(accountId), body: input },
        Transferred,
        move(accountId, input)
      )
    })

    const earnedFromRows = SqlSchema.findAll({
      Request: Schema.Number,
      Result: Schema.Struct({
        account_id: Account.AccountId,
        name: Schema.String,
        referred: Schema.Boolean,
        sub: Schema.Boolean,
        referral_earned: Int8,
        agent_earned: Int8
      }),
      execute: (id) =>
        sql`
          SELECT a.id AS account_id, a.name, COALESCE(a.referred_by = ${id}, false) AS referred,
            COALESCE(a.agent_id = ${id}, false) AS sub,
            COALESCE(e.referral, 0) AS referral_earned, COALESCE(e.agent, 0) AS agent_earned
          FROM accounts a
          LEFT JOIN (
            SELECT o.account_id,
              sum(l.amount) FILTER (WHERE l.wallet = 'referral') AS referral,
              sum(l.amount) FILTER (WHERE l.wallet = 'agent') AS agent
            FROM ledger_entries l JOIN orders o ON o.id = l.order_id
            WHERE l.account_id = ${id} AND l.reason IN ('commission', 'commission_reversal')
            GROUP BY o.account_id
          ) e ON e.account_id = a.id
          WHERE a.referred_by = ${id} OR a.agent_id = ${id}
          ORDER BY a.id
          LIMIT 400
        `
    })

    /** The holder's view of its programmes: its code, whom it referred, its sub-accounts, what each earned it. */
    const earnings = Effect.fn("Commissions.earnings")(function*(accountId: Account.AccountId) {
      const [code] = yield* orDie(sql<{ referral_code: string }>`
        SELECT referral_code FROM accounts WHERE id = ${accountId}
      `)
      const rows = yield* orDie(earnedFromRows(accountId))
      const from = (earned: "referral_earned" | "agent_earned") => (row: typeof rows[number]) => ({
        account_id: row.account_id,
        name: row.name,
        earned: row[earned]
      })
      return {
        referral_code: code?.referral_code ?? "",
        referral_percent: (yield* rates).referral_percent,
        referred: rows.filter((row) => row.referred).slice(0, 200).map(from("referral_earned")),
        sub_accounts: rows.filter((row) => row.sub).slice(0, 200).map(from("agent_earned"))
      }
    })

    return { rates, setRates, credit, reverse, count, transfer, earnings }
  })
}) {}
