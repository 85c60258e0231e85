/**
 * Payments that fund a main wallet: mobile money through the payment port, or a manual
 * transfer that the operator approves or declines.
 *
 * Exactly once, whatever retries or callbacks arrive:
 * - creating: `(account, Idempotency-Key)` is unique; a repeat waits on the index for the
 *   first to commit and returns its payment (another body with the same key is a 422);
 * - settling: `UPDATE payments ... WHERE status = 'pending'` and the wallet credit run in one
 *   transaction, so whoever settles first (the request, the worker in any process, the
 *   operator) wins and the rest match no row; a unique index on the ledger's `payment_id` is
 *   the second guard. The credit's ledger entry names the payment.
 */
import { Account, ApiError, Page as PageContract, Payment } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect, Option, Schema } from "effect"
import { Int8, isUniqueViolation, orDie, rowsOf } from "./Database.js"
import * as Page from "./Page.js"
import { type CollectionOutcome, PaymentProvider } from "./PaymentProvider.js"
import { Settings } from "./Settings.js"
import * as Tokens from "./Tokens.js"
import { Wallet } from "./Wallet.js"
import * as Worker from "./Worker.js"

/** How people call each method. */
export const METHOD_LABELS: Record<Payment.PaymentMethod, string> = {
  mtn_momo: "MTN MoMo",
  telecel_cash: "Telecel Cash",
  airteltigo_money: "AirtelTigo Money",
  manual_transfer: "Manual transfer"
}

/** A mobile money payment the payer has not approved after this long fails as expired. */
const EXPIRE_AFTER = Duration.minutes(30)
/** Shown with a request for the payer's one-time code when the gateway said nothing. */
const DEFAULT_CODE_PROMPT = "Enter the one-time code sent to the payer's phone"
/** How long one provider call may take before the payment is left pending for the worker. */
const PROVIDER_TIMEOUT = Duration.seconds(20)
/** When the worker first checks a payment whose collection was never recorded (a crash). */
const RECOVERY_DELAY_SECONDS = 30
/** How far ahead a claim moves a payment's next check, so no other process takes it meanwhile. */
const CLAIM_LEASE_SECONDS = 60

/** A payment's row as `COLUMNS` read it. */
const PaymentRow = Schema.Struct({
  id: Schema.String,
  payment_number: Payment.PaymentNumber,
  account_id: Account.AccountId,
  method: Payment.PaymentMethod,
  amount: Int8,
  status: Payment.PaymentStatus,
  payer_number: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  failure_reason: Schema.NullOr(Schema.String),
  code_prompt: Schema.NullOr(Schema.String),
  fingerprint: Schema.String,
  account_name: Schema.String,
  created_at: Schema.DateFromSelf,
  settled_at: Schema.NullOr(Schema.DateFromSelf),
  reversed_at: Schema.NullOr(Schema.DateFromSelf),
  reversal_reason: Schema.NullOr(Schema.String)
})

type PaymentRow = typeof PaymentRow.Type

/** A payment just settled, and whether its account has a webhook URL to announce the credit to. */
const SettledPaymentRow = Schema.Struct({ ...PaymentRow.fields, has_webhook: Schema.Boolean })

const COLUMNS = "p.id, p.payment_number, p.account_id, p.method, p.amount, p.status, p.payer_number, p.note, " +
  "p.failure_reason, p.code_prompt, p.fingerprint, p.created_at, p.settled_at, p.reversed_at, p.reversal_reason, " +
  "(SELECT a.name FROM accounts a WHERE a.id = p.account_id) AS account_name"

const isPaymentNumber = Schema.is(Payment.PaymentNumber)

const isMobileMoney = (method: Payment.PaymentMethod) => Payment.MOBILE_MONEY_METHODS.includes(method)

/** Creating, settling and listing payments. */
export class Payments extends Effect.Service<Payments>()("core/Payments", {
  dependencies: [Wallet.Default, Settings.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wallet = yield* Wallet
    const settings = yield* Settings
    const provider = yield* PaymentProvider

    const instructions = (row: PaymentRow) =>
      row.status !== "pending"
        ? null
        : row.code_prompt !== null
        ? "Enter the one-time code the wallet sent to the payer's phone."
        : row.method === "manual_transfer"
        ? settings.manualTransferInstructions
        : "Approve the payment prompt on the payer's phone (dial the wallet's menu if no prompt appears)."

    const toPayment = (row: PaymentRow): Payment.Payment => ({
      payment_number: row.payment_number,
      method: row.method,
      amount: row.amount,
      status: row.status,
      payer_number: row.payer_number,
      note: row.note,
      failure_reason: row.failure_reason,
      instructions: instructions(row),
      awaiting_code: row.status === "pending" && row.code_prompt !== null,
      code_prompt: row.status === "pending" ? row.code_prompt : null,
      created_at: row.created_at,
      settled_at: row.settled_at
    })

    const toAdmin = (row: PaymentRow): Payment.AdminPayment => ({
      ...toPayment(row),
      account_id: row.account_id,
      account_name: row.account_name,
      reversed_at: row.reversed_at,
      reversal_reason: row.reversal_reason
    })

    /** The methods the funding page offers. */
    const methods: ReadonlyArray<Payment.PaymentMethodInfo> = Payment.PAYMENT_METHODS.map((method) => ({
      method,
      label: METHOD_LABELS[method],
      needs_payer_number: isMobileMoney(method),
      min_amount: Payment.MIN_PAYMENT_PESEWAS,
      max_amount: Payment.MAX_PAYMENT_PESEWAS,
      instructions: method === "manual_transfer" ? settings.manualTransferInstructions : null
    }))

    /**
     * Settles a pending payment; success credits the main wallet in the same transaction,
     * with a ledger entry that names the payment. `None` when it was no longer pending.
     */
    const settle = (paymentId: string, outcome: { readonly approved: boolean; readonly reason: string | null }) =>
      sql.withTransaction(Effect.gen(function*() {
        const [row] = yield* rowsOf(
          SettledPaymentRow,
          sql`
          UPDATE payments p SET status = ${outcome.approved ? "successful" : "failed"}, settled_at = now(),
            next_check_at = NULL, code_prompt = NULL, failure_reason = ${outcome.approved ? null : outcome.reason}
          FROM accounts a
          WHERE p.id = ${paymentId} AND p.status = 'pending' AND a.id = p.account_id
          RETURNING ${sql.literal(COLUMNS)}, a.webhook_url IS NOT NULL AS has_webhook
        `
        )
        if (row === undefined) return Option.none<PaymentRow>()
        if (outcome.approved) {
          const from = row.payer_number === null ? "" : ` from ${row.payer_number}`
          const movement = {
            accountId: row.account_id,
            wallet: "main" as const,
            amount: row.amount,
            reason: "funding" as const,
            paymentId: row.id,
            note: `${METHOD_LABELS[row.method]} payment ${row.payment_number}${from}`
          }
          const moved = Option.getOrThrowWith(yield* wallet.move(movement), () => new Error("credit found no wallet"))
          if (row.has_webhook) yield* wallet.announce(movement, moved)
        }
        return Option.some(row)
      })).pipe(orDie)

    /** What the provider is told about a payment. */
    const requestOf = (row: PaymentRow) =>
      Effect.gen(function*() {
        const [user] = yield* orDie(
          sql<{ email: string }>`SELECT email FROM users WHERE account_id = ${row.account_id}`
        )
        return {
          paymentNumber: row.payment_number,
          method: row.method,
          amount: row.amount,
          payerNumber: row.payer_number ?? "",
          createdAt: row.created_at,
          email: user?.email ?? null
        }
      })

    /** Records what the provider said: settles the payment, or schedules its next check. */
    const record = (row: PaymentRow, outcome: CollectionOutcome) =>
      Effect.gen(function*() {
        switch (outcome._tag) {
          case "Approved":
            return yield* settle(row.id, { approved: true, reason: null })
          case "Declined":
          case "Reversed":
            return yield* settle(row.id, { approved: false, reason: outcome.reason })
          case "Pending":
          case "AwaitingCode": {
            const age = (yield* Clock.currentTimeMillis) - row.created_at.getTime()
            if (age > Duration.toMillis(EXPIRE_AFTER)) {
              return yield* settle(row.id, {
                approved: false,
                reason: outcome._tag === "AwaitingCode"
                  ? "Expired: the payer's one-time code did not come in time"
                  : "Expired: the payer did not approve in time"
              })
            }
            const prompt = outcome._tag === "AwaitingCode"
              ? sql`COALESCE(${outcome.prompt?.trim().slice(0, 500) || null}, code_prompt, ${DEFAULT_CODE_PROMPT})`
              : sql`NULL`
            yield* orDie(sql`
              UPDATE payments SET next_check_at = now() + make_interval(secs => ${
              Duration.toSeconds(outcome.checkAfter)
            }), code_prompt = ${prompt}
              WHERE id = ${row.id} AND status = 'pending'
            `)
            return Option.none<PaymentRow>()
          }
        }
      })

    /** What the provider says about a mobile money payment; `Pending` when it cannot be asked. */
    const ask = (row: PaymentRow) =>
      Effect.flatMap(requestOf(row), (request) =>
        provider.collect(request).pipe(
          Effect.timeoutFail({ duration: PROVIDER_TIMEOUT, onTimeout: () => new Error("payment provider timed out") }),
          Effect.catchAllCause((cause) =>
            Effect.logWarning("payment provider failed; the payment stays as it is", Cause.pretty(cause)).pipe(
              Effect.as<CollectionOutcome>({
                _tag: "Pending",
                checkAfter: Duration.seconds(RECOVERY_DELAY_SECONDS)
              })
            )
          )
        ))

    /** Asks the provider about a mobile money payment and records the answer. */
    const collect = (row: PaymentRow) => Effect.flatMap(ask(row), (outcome) => record(row, outcome))

    const findByKey = (accountId: number, key: string) =>
      orDie(rowsOf(
        PaymentRow,
        sql`
        SELECT ${sql.literal(COLUMNS)} FROM payments p WHERE p.account_id = ${accountId} AND p.idempotency_key = ${key}
      `
      )).pipe(Effect.map((rows) => rows[0]))

    const byId = (id: string) =>
      orDie(rowsOf(PaymentRow, sql`SELECT ${sql.literal(COLUMNS)} FROM payments p WHERE p.id = ${id}`)).pipe(
        Effect.map((rows) => rows[0]!)
      )

    /**
     * Starts a payment under the caller's idempotency key: the same key returns the same
     * payment (`replayed`), and with another body is a 422. Mobile money is then collected
     * through the provider; a manual transfer waits for the operator.
     */
    const create = Effect.fn("Payments.create")(function*(
      accountId: number,
      key: string,
      input: Payment.CreatePaymentPayload
    ) {
      const mobile = isMobileMoney(input.method)
      if (mobile && input.payer_number === undefined) {
        return yield* ApiError.ValidationError.field("payer_number", "is required for mobile money")
      }
      const payer = mobile ? input.payer_number! : null
      const note = input.note ?? null
      const fingerprint = JSON.stringify([input.method, String(input.amount), payer, note])
      const inserted = yield* orDie(
        rowsOf(
          PaymentRow,
          sql`
          INSERT INTO payments AS p (payment_number, account_id, idempotency_key, fingerprint, method, amount,
            payer_number, note, next_check_at)
          VALUES (${Tokens.paymentNumber()}, ${accountId}, ${key}, ${fingerprint}, ${input.method}, ${input.amount},
            ${payer}, ${note}, ${mobile ? sql`now() + make_interval(secs => ${RECOVERY_DELAY_SECONDS})` : null})
          ON CONFLICT (account_id, idempotency_key) DO NOTHING
          RETURNING ${sql.literal(COLUMNS)}
        `
        ).pipe(Effect.retry({ times: 3, while: (error) => isUniqueViolation(error) }))
      )
      const row = inserted[0]
      if (row === undefined) {
        // The insert waited for the first request with this key to commit; it is visible now.
        const existing = (yield* findByKey(accountId, key))!
        if (existing.fingerprint !== fingerprint) {
          return yield* ApiError.ValidationError.field(
            "idempotency-key",
            `was already used for payment ${existing.payment_number} with another method, amount, number or note`
          )
        }
        return { payment: toPayment(existing), replayed: true }
      }
      if (!mobile) return { payment: toPayment(row), replayed: false }
      // The payment is committed: record the provider's answer even if the caller goes away.
      yield* Effect.uninterruptible(collect(row))
      return { payment: toPayment(yield* byId(row.id)), replayed: false }
    })

    const notFound = (paymentNumber: string) =>
      new Payment.PaymentNotFound({ message: `Payment ${paymentNumber} not found` })

    /** One payment of an account; another account's is not found, like an unknown one. */
    const get = Effect.fn("Payments.get")(function*(accountId: number, paymentNumber: string) {
      const [row] = !isPaymentNumber(paymentNumber) ? [] : yield* orDie(rowsOf(
        PaymentRow,
        sql`
        SELECT ${sql.literal(COLUMNS)} FROM payments p
        WHERE p.payment_number = ${paymentNumber} AND p.account_id = ${accountId}
      `
      ))
      if (row === undefined) return yield* notFound(paymentNumber)
      return toPayment(row)
    })

    const listWhere = (
      query: Payment.ListPaymentsParams & {
        readonly account_id?: number | undefined
        readonly reversed?: "true" | undefined
      },
      sizes: PageContract.Sizes
    ) => {
      const conditions = [sql`true`]
      if (query.account_id !== undefined) conditions.push(sql`p.account_id = ${query.account_id}`)
      if (query.reversed !== undefined) conditions.push(sql`p.reversed_at IS NOT NULL`)
      if (query.status !== undefined) conditions.push(sql`p.status = ${query.status}`)
      if (query.method !== undefined) conditions.push(sql`p.method = ${query.method}`)
      conditions.push(...Page.dateRange(sql, "p.created_at", query))
      return Effect.gen(function*() {
        const where = sql.and(conditions)
        const page = Page.resolve(query, sizes)
        const [count] = yield* sql<{ total: string }>`SELECT count(*) AS total FROM payments p WHERE ${where}`
        const rows = yield* rowsOf(
          PaymentRow,
          sql`
          SELECT ${sql.literal(COLUMNS)} FROM payments p WHERE ${where}
          ORDER BY p.created_at DESC, p.id DESC LIMIT ${page.perPage} OFFSET ${page.offset}
        `
        )
        return { rows, pagination: Page.pagination(page, Number(count!.total)) }
      }).pipe(orDie)
    }

    /** One page of an account's payments, newest first. */
    const list = Effect.fn("Payments.list")(function*(accountId: number, query: Payment.ListPaymentsParams) {
      const result = yield* listWhere({ ...query, account_id: accountId }, PageContract.ACCOUNT_LISTS)
      return { payments: result.rows.map(toPayment), pagination: result.pagination }
    })

    /** Payments of every account (or one; or those reversed after crediting), for the operator. */
    const adminList = Effect.fn("Payments.adminList")(function*(
      query: Payment.ListPaymentsParams & {
        readonly account_id?: number | undefined
        readonly reversed?: "true" | undefined
      }
    ) {
      const result = yield* listWhere(query, PageContract.ADMIN_PAYMENTS)
      return { payments: result.rows.map(toAdmin), pagination: result.pagination }
    })

    const adminFind = (paymentNumber: string) =>
      Effect.gen(function*() {
        const [row] = !isPaymentNumber(paymentNumber) ? [] : yield* orDie(rowsOf(
          PaymentRow,
          sql`
          SELECT ${sql.literal(COLUMNS)} FROM payments p WHERE p.payment_number = ${paymentNumber}
        `
        ))
        if (row === undefined) return yield* notFound(paymentNumber)
        return row
      })

    /** Any payment, for the operator. */
    const adminGet = Effect.fn("Payments.adminGet")(function*(paymentNumber: string) {
      return toAdmin(yield* adminFind(paymentNumber))
    })

    /**
     * The operator's decision on a pending manual transfer. Approving credits the wallet
     * once; a payment already settled, or one the provider settles, is a 409.
     */
    const decide = Effect.fn("Payments.decide")(function*(
      paymentNumber: string,
      decision: { readonly approved: boolean; readonly reason: string | null }
    ) {
      const row = yield* adminFind(paymentNumber)
      if (row.method !== "manual_transfer") {
        return yield* new ApiError.Conflict({
          message: `Payment ${paymentNumber} is ${METHOD_LABELS[row.method]}: its provider settles it`
        })
      }
      const settled = yield* settle(row.id, decision)
      if (Option.isNone(settled)) {
        const current = yield* adminFind(paymentNumber)
        return yield* new ApiError.Conflict({ message: `Payment ${paymentNumber} is already ${current.status}` })
      }
      return toAdmin(yield* byId(row.id))
    })

    // As the order worker: a claim leases the row, SKIP LOCKED gives processes disjoint batches.
    const claimDue = rowsOf(
      PaymentRow,
      sql`
      UPDATE payments p SET next_check_at = now() + make_interval(secs => ${CLAIM_LEASE_SECONDS})
      WHERE p.id IN (
        SELECT id FROM payments
        WHERE status = 'pending' AND next_check_at <= now()
        ORDER BY next_check_at
        LIMIT 20
        FOR UPDATE SKIP LOCKED
      )
      RETURNING ${sql.literal(COLUMNS)}
    `
    )

    /** Checks every pending mobile money payment whose next check is due; returns how many. */
    const processDue = Effect.gen(function*() {
      let total = 0
      while (true) {
        const due = yield* claimDue
        yield* Effect.forEach(due, collect, { concurrency: 5, discard: true })
        total += due.length
        if (due.length < 20) return total
      }
    }).pipe(orDie, Effect.withSpan("Payments.processDue"))

    /** Runs forever: the database-driven collection worker. */
    const runCollection = Worker.supervise("payment worker", processDue, { interval: settings.pollInterval })

    /**
     * Records that the provider reversed a payment already credited: the time and its reason,
     * once. The wallet stays as it is (its money may be spent): the operator decides. `None`
     * when it was recorded before.
     */
    const recordReversal = (row: PaymentRow, reason: string) =>
      Effect.gen(function*() {
        const [reversed] = yield* orDie(sql<PaymentRow>`
          UPDATE payments p SET reversed_at = now(), reversal_reason = ${reason.slice(0, 500)}
          WHERE p.id = ${row.id} AND p.status = 'successful' AND p.reversed_at IS NULL
          RETURNING ${sql.literal(COLUMNS)}
        `)
        if (reversed === undefined) return Option.none<Payment.AdminPayment>()
        yield* Effect.logWarning(
          `payment ${row.payment_number} was reversed by the provider after the wallet was credited: ${reason}`
        ).pipe(Effect.annotateLogs({
          event: "payment.reversed",
          payment: row.payment_number,
          account_id: row.account_id
        }))
        return Option.some(toAdmin(reversed))
      })

    /**
     * A gateway's callback said something about a payment: asks the provider for its state
     * now (a callback is a hint, the provider's answer is the truth) and records it. The
     * same callback twice, or one racing the worker, settles once: `settle` matches only a
     * pending row. A successful payment the provider now reports reversed is recorded as such
     * (`reversal`: the payment, the first time). Unknown numbers and other settled payments
     * are left alone.
     */
    const refresh = Effect.fn("Payments.refresh")(function*(paymentNumber: string) {
      const [row] = !isPaymentNumber(paymentNumber) ? [] : yield* orDie(rowsOf(
        PaymentRow,
        sql`
        SELECT ${sql.literal(COLUMNS)} FROM payments p WHERE p.payment_number = ${paymentNumber}
      `
      ))
      if (row === undefined) return Option.none<{ payment: Payment.AdminPayment; reversal: boolean }>()
      let reversal = false
      if (isMobileMoney(row.method) && row.status === "pending") yield* Effect.uninterruptible(collect(row))
      else if (isMobileMoney(row.method) && row.status === "successful" && row.reversed_at === null) {
        const outcome = yield* ask(row)
        if (outcome._tag === "Reversed") reversal = Option.isSome(yield* recordReversal(row, outcome.reason))
      }
      return Option.some({ payment: toAdmin(yield* byId(row.id)), reversal })
    })

    /**
     * The payer's one-time code for a payment that awaits one, sent to the provider. A wrong
     * code is a 422 on `otp` with the provider's message, and the payment still awaits a code;
     * a payment that awaits none (settled, or never asked) is a 409. Crediting stays once:
     * only a pending row settles, whoever (a repeat, the callback, the worker) comes first.
     */
    const submitCode = Effect.fn("Payments.submitCode")(function*(
      accountId: number,
      paymentNumber: string,
      code: string
    ) {
      const [row] = !isPaymentNumber(paymentNumber) ? [] : yield* orDie(rowsOf(
        PaymentRow,
        sql`
        SELECT ${sql.literal(COLUMNS)} FROM payments p
        WHERE p.payment_number = ${paymentNumber} AND p.account_id = ${accountId}
      `
      ))
      if (row === undefined) return yield* notFound(paymentNumber)
      if (row.status !== "pending") {
        return yield* new ApiError.Conflict({ message: `Payment ${paymentNumber} is already ${row.status}` })
      }
      if (row.code_prompt === null) {
        return yield* new ApiError.Conflict({ message: `Payment ${paymentNumber} is not waiting for a code` })
      }
      const request = yield* requestOf(row)
      // Once sent, the provider's answer is recorded even if the caller goes away.
      const outcome = yield* Effect.uninterruptible(Effect.gen(function*() {
        const outcome = yield* provider.submitCode(request, code).pipe(
          Effect.timeoutFail({ duration: PROVIDER_TIMEOUT, onTimeout: () => new Error("payment provider timed out") }),
          Effect.orDie
        )
        if (outcome._tag !== "WrongCode") yield* record(row, outcome)
        return outcome
      }))
      if (outcome._tag === "WrongCode") {
        // The gateway's own words, as the payer will read them next to the field.
        return yield* new ApiError.ValidationError({ message: outcome.message, errors: { otp: [outcome.message] } })
      }
      return toPayment(yield* byId(row.id))
    })

    /** Counts for the home page. */
    const pendingCount = (accountId: number) =>
      orDie(sql<{ n: string }>`
        SELECT count(*) AS n FROM payments WHERE account_id = ${accountId} AND status = 'pending'
      `).pipe(Effect.map((rows) => Number(rows[0]!.n)))

    return {
      methods,
      create,
      get,
      list,
      adminList,
      adminGet,
      decide,
      refresh,
      submitCode,
      processDue,
      runCollection,
      pendingCount
    }
  })
}) {}
