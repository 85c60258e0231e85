import { type Account, ApiError, Wallet as WalletContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option, TestServices } from "effect"
import { Accounts } from "../src/Accounts.js"
import { ApiKeys } from "../src/ApiKeys.js"
import { Commissions } from "../src/Commissions.js"
import { Orders } from "../src/Orders.js"
import { Wallet } from "../src/Wallet.js"
import { Domain, fundedAccount, placeOrder, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

const config = Layer.setConfigProvider(
  ConfigProvider.fromMap(new Map([["BUNDLES_SIMULATOR_PENDING_SECONDS", "1"]]))
)

const balances = (accountId: number) =>
  Effect.map(Effect.flatMap(Wallet, (w) => w.balances(accountId)), (b) => Option.getOrThrow(b))

const audit = Effect.flatMap(Wallet, (w) => w.audit)

/** An agent in the `agent` price group, a referrer, and a sub-account on base prices under both. */
const programme = (referralPercentBps: number, main = 10_000n) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const agent = yield* fundedAccount(0n, "agent")
    const referrer = yield* fundedAccount(0n)
    const sub = yield* fundedAccount(main)
    yield* accounts.update(sub as Account.AccountId, {
      agent_id: agent as Account.AccountId,
      referred_by: referrer as Account.AccountId
    })
    yield* (yield* Commissions).setRates({ referral_percent: referralPercentBps })
    return { agent, referrer, sub }
  })

const commissionEntries = (orderNumber: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ account_id: number; wallet: string; amount: string; reason: string }>`
      SELECT l.account_id, l.wallet, l.amount::text AS amount, l.reason FROM ledger_entries l
      JOIN orders o ON o.id = l.order_id
      WHERE o.order_number = ${orderNumber} AND l.reason IN ('commission', 'commission_reversal')
      ORDER BY l.id
    `
  )

for (const target of targets) {
  describe(`Commissions on ${target.name}`, () => {
    layer(Domain.pipe(Layer.provideMerge(target.layer), Layer.provide(config)), { timeout: 120_000 })((it) => {
      it.effect("an agent earns the price difference and a referrer its percent, rounded down, on success only", () =>
        Effect.gen(function*() {
          const { mtn1gb, mtn2gb } = yield* seedCatalog
          // 2.5 %: 5.50 gives 13.75 pesewas, paid as 13.
          const { agent, referrer, sub } = yield* programme(250)
          const first = yield* placeOrder(sub, mtn1gb, "0241234567")
          assert.strictEqual(first.order.status, "successful")
          assert.strictEqual(first.walletBalance, 10_000n - 550n)
          assert.deepStrictEqual(yield* balances(agent), { main: 0n, referral: 0n, agent: 50n })
          assert.deepStrictEqual(yield* balances(referrer), { main: 0n, referral: 13n, agent: 0n })
          // No agent price for this bundle: the agent pays the base price too, so earns nothing; the referrer 2.5 % of 10.50.
          yield* placeOrder(sub, mtn2gb, "0241234567")
          assert.strictEqual((yield* balances(agent)).agent, 50n)
          assert.strictEqual((yield* balances(referrer)).referral, 13n + 26n)
          // A failed order (0000) earns nothing.
          const failed = yield* placeOrder(sub, mtn1gb, "0240000000")
          assert.strictEqual(failed.order.status, "failed")
          assert.strictEqual((yield* balances(agent)).agent, 50n)
          assert.strictEqual((yield* balances(referrer)).referral, 39n)
          assert.deepStrictEqual(yield* commissionEntries(failed.order.order_number), [])
          const report = yield* audit
          assert.isTrue(report.ok, JSON.stringify(report))
        }))

      it.effect("a referral rate of 0 pays nothing; an account with no earners is untouched", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const { agent, referrer, sub } = yield* programme(0)
          yield* placeOrder(sub, mtn1gb, "0241234567")
          assert.strictEqual((yield* balances(referrer)).referral, 0n)
          assert.strictEqual((yield* balances(agent)).agent, 50n)
          const alone = yield* fundedAccount(1000n)
          const placed = yield* placeOrder(alone, mtn1gb, "0241234567")
          assert.strictEqual(placed.order.status, "successful")
          assert.deepStrictEqual(yield* balances(alone), { main: 450n, referral: 0n, agent: 0n })
        }))

      it.effect("resolving a successful order as failed refunds it and takes back both commissions", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const { agent, referrer, sub } = yield* programme(200)
          const placed = yield* placeOrder(sub, mtn1gb, "0241234567")
          assert.strictEqual((yield* balances(referrer)).referral, 11n)
          const orders = yield* Orders
          const resolved = yield* orders.resolve(placed.order.order_number, "failed", "never arrived")
          assert.strictEqual(resolved.status, "failed")
          assert.deepStrictEqual(yield* balances(sub), { main: 10_000n, referral: 0n, agent: 0n })
          assert.deepStrictEqual(yield* balances(agent), { main: 0n, referral: 0n, agent: 0n })
          assert.deepStrictEqual(yield* balances(referrer), { main: 0n, referral: 0n, agent: 0n })
          const entries = yield* commissionEntries(placed.order.order_number)
          assert.deepStrictEqual(entries.map((e) => [e.wallet, e.amount, e.reason]), [
            ["agent", "50", "commission"],
            ["referral", "11", "commission"],
            ["agent", "-50", "commission_reversal"],
            ["referral", "-11", "commission_reversal"]
          ])
          // Settled orders stay settled otherwise.
          assert.instanceOf(yield* Effect.flip(orders.resolve(placed.order.order_number, "failed")), ApiError.Conflict)
          assert.instanceOf(
            yield* Effect.flip(orders.resolve(placed.order.order_number, "successful")),
            ApiError.Conflict
          )
          const report = yield* audit
          assert.isTrue(report.ok, JSON.stringify(report))
        }))

      it.effect("a commission moved on refuses its reversal, and nothing changes", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const { agent, sub } = yield* programme(0)
          const placed = yield* placeOrder(sub, mtn1gb, "0241234567")
          const commissions = yield* Commissions
          yield* commissions.transfer(agent as Account.AccountId, { from: "agent", amount: 50n })
          const refused = yield* Effect.flip((yield* Orders).resolve(placed.order.order_number, "failed"))
          assert.instanceOf(refused, ApiError.Conflict)
          assert.match(refused.message, /agent wallet holds GHS 0\.00/)
          assert.deepStrictEqual(yield* balances(sub), { main: 9_450n, referral: 0n, agent: 0n })
          assert.strictEqual((yield* (yield* Orders).adminGet(placed.order.order_number)).status, "successful")
          assert.isTrue((yield* audit).ok)
        }))

      // On the real clock: the simulator compares it with the database's timestamps.
      it.effect("a pending order settled by many workers and the operator at once earns once", () =>
        TestServices.provideLive(Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const { agent, referrer, sub } = yield* programme(200)
          const orders = yield* Orders
          const placed = yield* Effect.all(
            Array.from({ length: 6 }, (_, i) => placeOrder(sub, mtn1gb, `024${String(i).padStart(3, "0")}9999`)),
            { concurrency: "unbounded" }
          )
          for (const p of placed) assert.strictEqual(p.order.status, "pending")
          assert.strictEqual((yield* balances(agent)).agent, 0n)
          yield* Effect.sleep("1500 millis")
          yield* Effect.all(
            [
              ...Array.from({ length: 4 }, () => orders.processDue),
              ...placed.map((p) => Effect.either(orders.resolve(p.order.order_number, "successful")))
            ],
            { concurrency: "unbounded" }
          )
          for (const p of placed) {
            assert.strictEqual((yield* orders.adminGet(p.order.order_number)).status, "successful")
          }
          assert.strictEqual((yield* balances(agent)).agent, 6n * 50n)
          assert.strictEqual((yield* balances(referrer)).referral, 6n * 11n)
          const report = yield* audit
          assert.isTrue(report.ok, JSON.stringify(report))
        })))

      it.effect("ten concurrent transfers of 0.10 from 0.50 give exactly five", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          const commissions = yield* Commissions
          const holder = (yield* fundedAccount(0n)) as Account.AccountId
          yield* wallet.fund(holder, { amount: 50n, wallet: "agent" })
          const results = yield* Effect.all(
            Array.from(
              { length: 10 },
              () => Effect.either(commissions.transfer(holder, { from: "agent", amount: 10n }))
            ),
            { concurrency: "unbounded" }
          )
          const ok = results.filter(Either.isRight)
          const refused = results.filter(Either.isLeft).map((r) => r.left)
          assert.strictEqual(ok.length, 5)
          assert.strictEqual(refused.length, 5)
          for (const error of refused) {
            assert.instanceOf(error, WalletContract.InsufficientBalance)
            assert.strictEqual((error as WalletContract.InsufficientBalance).balance, 0n)
            assert.strictEqual((error as WalletContract.InsufficientBalance).required, 10n)
          }
          assert.deepStrictEqual(yield* balances(holder), { main: 50n, referral: 0n, agent: 0n })
          const report = yield* audit
          assert.isTrue(report.ok, JSON.stringify(report))
          assert.strictEqual(report.unbalanced_transfers, 0)
        }))

      it.effect("a transfer with a key is made once; the same key with another body is a 422", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          const commissions = yield* Commissions
          const holder = (yield* fundedAccount(0n)) as Account.AccountId
          yield* wallet.fund(holder, { amount: 100n, wallet: "referral" })
          const runs = yield* Effect.all(
            Array.from({ length: 5 }, () => commissions.transfer(holder, { from: "referral", amount: 30n }, "k-1")),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(runs.filter((r) => !r.replayed).length, 1)
          for (const run of runs) assert.deepStrictEqual(run.value.balance, { main: 30n, referral: 70n, agent: 0n })
          assert.deepStrictEqual(yield* balances(holder), { main: 30n, referral: 70n, agent: 0n })
          const other = yield* Effect.flip(commissions.transfer(holder, { from: "referral", amount: 31n }, "k-1"))
          assert.instanceOf(other, ApiError.ValidationError)
          // Another account's identical key is its own.
          const second = (yield* fundedAccount(0n)) as Account.AccountId
          yield* wallet.fund(second, { amount: 30n, wallet: "referral" })
          const theirs = yield* commissions.transfer(second, { from: "referral", amount: 30n }, "k-1")
          assert.isFalse(theirs.replayed)
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("a test order earns test commissions in the earner's test account only", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const { agent, referrer, sub } = yield* programme(200)
          const apiKeys = yield* ApiKeys
          const testOf = (id: number) =>
            Effect.map(apiKeys.accountFor(id as Account.AccountId, "test"), Option.getOrThrow)
          const subTest = yield* testOf(sub)
          const agentTest = yield* testOf(agent)
          yield* (yield* Wallet).fund(subTest, { amount: 1000n })
          const placed = yield* placeOrder(subTest, mtn1gb, "0241234567")
          assert.strictEqual(placed.order.status, "successful")
          // The agent's test account earns; the referrer has no test account, so its test commission is not paid.
          // (A test account starts with play money in main.)
          assert.strictEqual((yield* balances(agentTest)).agent, 50n)
          assert.deepStrictEqual(yield* balances(agent), { main: 0n, referral: 0n, agent: 0n })
          assert.deepStrictEqual(yield* balances(referrer), { main: 0n, referral: 0n, agent: 0n })
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("two accounts that earn for each other settle concurrent orders, each commission once", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const accounts = yield* Accounts
          const a = (yield* fundedAccount(100_000n, "agent")) as Account.AccountId
          const b = (yield* fundedAccount(100_000n)) as Account.AccountId
          yield* accounts.update(a, { agent_id: b, referred_by: b })
          yield* accounts.update(b, { agent_id: a, referred_by: a })
          yield* (yield* Commissions).setRates({ referral_percent: 200 })
          const placed = yield* Effect.all(
            Array.from({ length: 16 }, (_, i) => placeOrder(i % 2 === 0 ? a : b, mtn1gb, "0241234567")),
            { concurrency: "unbounded" }
          )
          for (const p of placed) assert.strictEqual(p.order.status, "successful")
          // b's 8 orders at 5.50 earn a (agent price 5.00) 0.50 and 0.11 each; a's 8 at 5.00 earn b 0.10 each
          // (b pays base prices: no agent margin).
          assert.deepStrictEqual(yield* balances(a), { main: 100_000n - 8n * 500n, referral: 88n, agent: 400n })
          assert.deepStrictEqual(yield* balances(b), { main: 100_000n - 8n * 550n, referral: 80n, agent: 0n })
          const report = yield* audit
          assert.isTrue(report.ok, JSON.stringify(report))
        }))

      it.effect("an agent or referrer must be another existing account", () =>
        Effect.gen(function*() {
          const accounts = yield* Accounts
          const sub = (yield* fundedAccount(0n)) as Account.AccountId
          const self = yield* Effect.flip(accounts.update(sub, { agent_id: sub }))
          assert.instanceOf(self, ApiError.ValidationError)
          const missing = yield* Effect.flip(accounts.update(sub, { referred_by: 999_999 as Account.AccountId }))
          assert.instanceOf(missing, ApiError.ValidationError)
          const agent = (yield* fundedAccount(0n)) as Account.AccountId
          const shown = yield* accounts.update(sub, { agent_id: agent })
          assert.strictEqual(shown.agent_id, agent)
          assert.strictEqual(shown.referred_by, null)
          assert.match(shown.referral_code, /^[0-9A-F]{10}$/)
          assert.strictEqual((yield* accounts.update(sub, { agent_id: null })).agent_id, null)
        }))
    })
  })
}
