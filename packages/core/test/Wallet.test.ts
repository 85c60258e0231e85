import { Account, Wallet as WalletContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Wallet } from "../src/Wallet.js"
import { Domain, fundedAccount } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

for (const target of targets) {
  describe(`Wallet on ${target.name}`, () => {
    layer(Domain.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("funding credits a wallet and writes a ledger entry with the balance after", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          const account = yield* fundedAccount(0n)
          const first = yield* wallet.fund(account, { amount: 1050n, note: "MoMo" })
          assert.deepStrictEqual(first.balance, { main: 1050n, referral: 0n, agent: 0n })
          assert.strictEqual(first.entry.amount, 1050n)
          assert.strictEqual(first.entry.balance_after, 1050n)
          assert.strictEqual(first.entry.reason, "funding")
          assert.strictEqual(first.entry.note, "MoMo")
          const agent = yield* wallet.fund(account, { amount: 200n, wallet: "agent" })
          assert.deepStrictEqual(agent.balance, { main: 1050n, referral: 0n, agent: 200n })
        }))

      it.effect("an adjustment may not take a wallet below zero", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          const account = yield* fundedAccount(500n)
          const down = yield* wallet.adjust(account, { amount: -200n, note: "correction" })
          assert.strictEqual(down.balance.main, 300n)
          assert.strictEqual(down.entry.reason, "adjustment")
          const refused = yield* Effect.flip(wallet.adjust(account, { amount: -301n, note: "too much" }))
          assert.instanceOf(refused, WalletContract.InsufficientBalance)
          assert.strictEqual((refused as WalletContract.InsufficientBalance).balance, 300n)
          assert.strictEqual((refused as WalletContract.InsufficientBalance).required, 301n)
          assert.strictEqual(Option.getOrThrow(yield* wallet.balances(account)).main, 300n)
        }))

      it.effect("an unknown account is not found", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          assert.instanceOf(
            yield* Effect.flip(wallet.fund(Account.AccountId.make(999_999), { amount: 1n })),
            Account.AccountNotFound
          )
          assert.instanceOf(yield* Effect.flip(wallet.ledger(999_999, {})), Account.AccountNotFound)
          assert.isTrue(Option.isNone(yield* wallet.balances(999_999)))
        }))

      it.effect("the ledger is newest first, paged, and sums to the balance", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          const account = yield* fundedAccount(0n)
          for (const amount of [100n, 250n, 75n]) yield* wallet.fund(account, { amount })
          yield* wallet.adjust(account, { amount: -25n, note: "fee" })
          const page = yield* wallet.ledger(account, { per_page: 3 })
          assert.deepStrictEqual(page.entries.map((e) => e.amount), [-25n, 75n, 250n])
          assert.deepStrictEqual(page.pagination, { current_page: 1, per_page: 3, total: 4, last_page: 2 })
          const all = yield* wallet.ledger(account, { wallet: "main" })
          assert.strictEqual(all.entries.reduce((sum, e) => sum + e.amount, 0n), 400n)
          assert.strictEqual(all.entries[0]!.balance_after, 400n)
        }))

      it.effect("concurrent funding and adjustments keep the balance equal to the ledger", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          const account = yield* fundedAccount(1000n)
          yield* Effect.all(
            Array.from({ length: 20 }, (_, i) =>
              i % 2 === 0
                ? wallet.fund(account, { amount: 10n })
                : Effect.either(wallet.adjust(account, { amount: -60n, note: "x" }))),
            { concurrency: "unbounded" }
          )
          const report = yield* wallet.audit
          assert.isTrue(report.ok, JSON.stringify(report.mismatches))
        }))

      it.effect("the audit finds a balance that does not match its ledger", () =>
        Effect.gen(function*() {
          const wallet = yield* Wallet
          const account = yield* fundedAccount(100n)
          const sql = yield* SqlClient.SqlClient
          // Tamper with a balance behind the ledger's back.
          yield* sql`UPDATE wallets SET balance = balance + 1 WHERE account_id = ${account} AND kind = 'main'`
          const report = yield* wallet.audit
          assert.isFalse(report.ok)
          assert.deepStrictEqual(report.mismatches.filter((m) => m.account_id === account), [
            { account_id: account, wallet: "main", balance: 101n, ledger_sum: 100n }
          ])
          yield* sql`UPDATE wallets SET balance = balance - 1 WHERE account_id = ${account} AND kind = 'main'`
          assert.isTrue((yield* wallet.audit).ok)
        }))
    })
  })
}
