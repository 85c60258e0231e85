import { ApiError, Bundle, Order, Wallet as WalletContract, Webhook } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option, Schema, TestServices } from "effect"
import { Orders } from "../src/Orders.js"
import { Wallet } from "../src/Wallet.js"
import { Domain, fundedAccount, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

const config = Layer.setConfigProvider(
  ConfigProvider.fromMap(new Map([["BUNDLES_SIMULATOR_PENDING_SECONDS", "1"]]))
)

const place = (accountId: number, input: { bundle_id: number; phone_number: string; reference?: string }) =>
  Effect.flatMap(Orders, (orders) =>
    orders.place(accountId, {
      bundle_id: input.bundle_id as Bundle.BundleId,
      phone_number: input.phone_number,
      ...(input.reference === undefined ? {} : { reference: input.reference })
    }))

const mainBalance = (accountId: number) =>
  Effect.map(Effect.flatMap(Wallet, (w) => w.balances(accountId)), (b) => Option.getOrThrow(b).main)

const audit = Effect.flatMap(Wallet, (w) => w.audit)

for (const target of targets) {
  describe(`Orders on ${target.name}`, () => {
    layer(Domain.pipe(Layer.provideMerge(target.layer), Layer.provide(config)), { timeout: 60_000 })((it) => {
      it.effect("a placement debits the price and succeeds at once", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(2000n)
          const placed = yield* place(account, { bundle_id: mtn1gb, phone_number: "0241234567", reference: "r-1" })
          assert.strictEqual(placed.order.status, "successful")
          assert.strictEqual(placed.order.amount_paid, 550n)
          assert.strictEqual(placed.order.bundle, "MTN 1GB")
          assert.strictEqual(placed.order.network, "MTN")
          assert.strictEqual(placed.order.reference, "r-1")
          assert.match(placed.order.order_number, /^ORD-[0-9A-Z]{12}$/)
          assert.strictEqual(placed.walletBalance, 1450n)
          assert.strictEqual(placed.replayed, false)
          assert.strictEqual(yield* mainBalance(account), 1450n)
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("an account pays its price group's price, else the base price", () =>
        Effect.gen(function*() {
          const { mtn1gb, mtn2gb } = yield* seedCatalog
          const agent = yield* fundedAccount(5000n, "agent")
          assert.strictEqual(
            (yield* place(agent, { bundle_id: mtn1gb, phone_number: "0241234567" })).order.amount_paid,
            500n
          )
          assert.strictEqual(
            (yield* place(agent, { bundle_id: mtn2gb, phone_number: "0241234567" })).order.amount_paid,
            1050n
          )
        }))

      it.effect("insufficient balance fails with balance and required, and changes nothing", () =>
        Effect.gen(function*() {
          const { mtn2gb } = yield* seedCatalog
          const account = yield* fundedAccount(1000n)
          const error = yield* Effect.flip(
            place(account, { bundle_id: mtn2gb, phone_number: "0241234567", reference: "x" })
          )
          assert.instanceOf(error, WalletContract.InsufficientBalance)
          assert.strictEqual((error as WalletContract.InsufficientBalance).balance, 1000n)
          assert.strictEqual((error as WalletContract.InsufficientBalance).required, 1050n)
          assert.strictEqual(yield* mainBalance(account), 1000n)
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql`SELECT 1 FROM orders WHERE account_id = ${account}`
          assert.strictEqual(rows.length, 0)
        }))

      it.effect("unknown and inactive bundles are refused", () =>
        Effect.gen(function*() {
          const { mtnOld } = yield* seedCatalog
          const account = yield* fundedAccount(1000n)
          const unknown = yield* Effect.flip(place(account, { bundle_id: 999_999, phone_number: "0241234567" }))
          assert.instanceOf(unknown, ApiError.ValidationError)
          assert.deepStrictEqual(Object.keys((unknown as ApiError.ValidationError).errors), ["bundle_id"])
          const inactive = yield* Effect.flip(place(account, { bundle_id: mtnOld, phone_number: "0241234567" }))
          assert.instanceOf(inactive, Bundle.BundleUnavailable)
          assert.strictEqual(yield* mainBalance(account), 1000n)
        }))

      it.effect("a replay still answers after its bundle was retired; a new order for it is refused", () =>
        Effect.gen(function*() {
          const { telecel1gb } = yield* seedCatalog
          const sql = yield* SqlClient.SqlClient
          const account = yield* fundedAccount(2000n)
          const first = yield* place(account, { bundle_id: telecel1gb, phone_number: "0201234567", reference: "ret-1" })
          yield* sql`UPDATE bundles SET active = false WHERE id = ${telecel1gb}`
          const outcome = yield* Effect.all([
            Effect.either(place(account, { bundle_id: telecel1gb, phone_number: "0201234567", reference: "ret-1" })),
            Effect.either(place(account, { bundle_id: telecel1gb, phone_number: "0209999999", reference: "ret-1" })),
            Effect.either(place(account, { bundle_id: telecel1gb, phone_number: "0201234567", reference: "ret-2" }))
          ]).pipe(Effect.ensuring(sql`UPDATE bundles SET active = true WHERE id = ${telecel1gb}`.pipe(Effect.orDie)))
          const [replay, conflict, fresh] = outcome
          assert.isTrue(Either.isRight(replay) && replay.right.replayed)
          assert.strictEqual(Either.getOrThrow(replay).order.order_number, first.order.order_number)
          assert.isTrue(Either.isLeft(conflict) && conflict.left instanceof ApiError.ValidationError)
          assert.isTrue(Either.isLeft(fresh) && fresh.left instanceof Bundle.BundleUnavailable)
          assert.strictEqual(yield* mainBalance(account), 2000n - first.order.amount_paid)
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("ten concurrent orders on a wallet that pays for five: five succeed, the balance is exact", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(5n * 550n + 100n)
          const results = yield* Effect.all(
            Array.from(
              { length: 10 },
              () => Effect.either(place(account, { bundle_id: mtn1gb, phone_number: "0241234567" }))
            ),
            { concurrency: "unbounded" }
          )
          const succeeded = results.filter(Either.isRight)
          const refused = results.filter(Either.isLeft)
          assert.strictEqual(succeeded.length, 5)
          assert.strictEqual(refused.length, 5)
          for (const r of refused) assert.instanceOf(r.left, WalletContract.InsufficientBalance)
          assert.strictEqual(yield* mainBalance(account), 100n)
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("a replay with the same reference returns the original order and debits nothing", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(2000n)
          const first = yield* place(account, { bundle_id: mtn1gb, phone_number: "0241234567", reference: "same" })
          // The other accepted form of the same number is the same recipient.
          const again = yield* place(account, { bundle_id: mtn1gb, phone_number: "233241234567", reference: "same" })
          assert.isTrue(again.replayed)
          assert.strictEqual(again.order.order_number, first.order.order_number)
          assert.strictEqual(again.order.phone_number, "0241234567")
          assert.strictEqual(again.walletBalance, 1450n)
          assert.strictEqual(yield* mainBalance(account), 1450n)
        }))

      it.effect("a reused reference with another bundle or phone is a 422 on reference", () =>
        Effect.gen(function*() {
          const { mtn1gb, mtn2gb } = yield* seedCatalog
          const account = yield* fundedAccount(5000n)
          yield* place(account, { bundle_id: mtn1gb, phone_number: "0241234567", reference: "ref-a" })
          for (
            const input of [
              { bundle_id: mtn2gb, phone_number: "0241234567", reference: "ref-a" },
              { bundle_id: mtn1gb, phone_number: "0201234567", reference: "ref-a" }
            ]
          ) {
            const error = yield* Effect.flip(place(account, input))
            assert.instanceOf(error, ApiError.ValidationError)
            assert.deepStrictEqual(Object.keys((error as ApiError.ValidationError).errors), ["reference"])
          }
          assert.strictEqual(yield* mainBalance(account), 4450n)
        }))

      it.effect("references are per account", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const a = yield* fundedAccount(1000n)
          const b = yield* fundedAccount(1000n)
          const first = yield* place(a, { bundle_id: mtn1gb, phone_number: "0241234567", reference: "shared" })
          const second = yield* place(b, { bundle_id: mtn1gb, phone_number: "0241234567", reference: "shared" })
          assert.notStrictEqual(first.order.order_number, second.order.order_number)
          assert.isFalse(second.replayed)
        }))

      it.effect("concurrent duplicates of one reference create exactly one order", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(5000n)
          const results = yield* Effect.all(
            Array.from({ length: 8 }, () =>
              place(account, { bundle_id: mtn1gb, phone_number: "0241234567", reference: "dup" })),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(
            new Set(results.map((r) =>
              r.order.order_number
            )).size,
            1
          )
          assert.strictEqual(results.filter((r) => !r.replayed).length, 1)
          assert.strictEqual(yield* mainBalance(account), 5000n - 550n)
        }))

      it.effect("a simulated failure is refunded exactly once", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(1000n)
          const placed = yield* place(account, { bundle_id: mtn1gb, phone_number: "0240000000" })
          assert.strictEqual(placed.order.status, "failed")
          assert.strictEqual(placed.walletBalance, 1000n)
          assert.strictEqual(yield* mainBalance(account), 1000n)
          // Settling it again, by hand or by the worker, is refused and refunds nothing.
          const orders = yield* Orders
          const conflict = yield* Effect.flip(orders.resolve(placed.order.order_number, "failed"))
          assert.instanceOf(conflict, ApiError.Conflict)
          yield* orders.processDue
          assert.strictEqual(yield* mainBalance(account), 1000n)
          const sql = yield* SqlClient.SqlClient
          const refunds = yield* sql`
            SELECT 1 FROM ledger_entries l JOIN orders o ON o.id = l.order_id
            WHERE o.order_number = ${placed.order.order_number} AND l.reason = 'refund'
          `
          assert.strictEqual(refunds.length, 1)
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("a placement writes its events with it, each body exactly as eventBody writes it", () =>
        Effect.gen(function*() {
          const { networks } = yield* seedCatalog
          const sql = yield* SqlClient.SqlClient
          // A label that JSON must escape, and a price and a balance with pesewas.
          const label = "MTN \"1GB\" \\ ✓ – \u0001 é"
          const [bundle] = yield* sql<{ id: number }>`
            INSERT INTO bundles (network_id, key, size, name, base_price, sort_order)
            VALUES (${networks[0]!.id}, ${`events-${Date.now()}`}, '1GB', ${label}, 1205, 99)
            RETURNING id
          `
          const account = yield* fundedAccount(100_005n)
          const delivered = yield* place(account, {
            bundle_id: bundle!.id,
            phone_number: "0241234567",
            reference: "ev.1"
          })
          const pending = yield* place(account, { bundle_id: bundle!.id, phone_number: "0249999999" })
          // Delivered without a reference, to a number written the international way.
          const unreferenced = yield* place(account, { bundle_id: bundle!.id, phone_number: "233241234567" })
          const rows = yield* sql<{ id: string; seq: string; type: string; body: string; created_at: Date }>`
            SELECT id, seq::text AS seq, type, body, created_at FROM webhook_events
            WHERE account_id = ${account} ORDER BY seq
          `
          // The funding, then the first order's debit and delivery, the second's debit, the third's debit and delivery.
          assert.deepStrictEqual(rows.map((row) => [row.seq, row.type]), [
            ["1", "wallet.funded"],
            ["2", "wallet.debited"],
            ["3", "order.successful"],
            ["4", "wallet.debited"],
            ["5", "wallet.debited"],
            ["6", "order.successful"]
          ])
          const decode = Schema.decodeUnknownSync(Schema.parseJson(Webhook.WebhookEvent))
          for (const row of rows) {
            const event = decode(row.body)
            assert.strictEqual(Webhook.eventBody(event), row.body)
            // Each body names its own event.
            assert.strictEqual(event.id, row.id)
          }
          assert.strictEqual(new Set(rows.map((row) => row.id)).size, rows.length)
          const [, debit, success, secondDebit, , thirdSuccess] = rows.map((row) => decode(row.body))
          assert.deepInclude(debit!.data, {
            account_id: account,
            wallet: "main",
            amount: 1205n,
            balance: 98_800n,
            reason: "order",
            order_number: delivered.order.order_number,
            note: null
          })
          assert.deepStrictEqual(success!.data, { ...delivered.order, bundle: label, network: "MTN" })
          assert.strictEqual((success!.data as Order.Order).created_at.getTime(), delivered.order.created_at.getTime())
          assert.deepInclude(secondDebit!.data, { balance: 97_595n, order_number: pending.order.order_number })
          assert.deepStrictEqual(thirdSuccess!.data, { ...unreferenced.order, bundle: label, network: "MTN" })
          assert.strictEqual((thirdSuccess!.data as Order.Order).reference, null)
          assert.strictEqual((thirdSuccess!.data as Order.Order).phone_number, "233241234567")
          assert.isTrue((yield* audit).ok)
        }))

      // On the real clock: the simulator compares it with the database's timestamps.
      it.effect("a 9999 number stays pending until the worker finds it due", () =>
        TestServices.provideLive(Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(1000n)
          const orders = yield* Orders
          const placed = yield* place(account, { bundle_id: mtn1gb, phone_number: "0249999999" })
          assert.strictEqual(placed.order.status, "pending")
          assert.strictEqual((yield* orders.get(account, placed.order.order_number)).status, "pending")
          // Pending for 1 s in this suite; the worker picks it up once its next check is due.
          yield* Effect.sleep("1500 millis")
          yield* orders.processDue
          assert.strictEqual((yield* orders.get(account, placed.order.order_number)).status, "successful")
          assert.strictEqual(yield* mainBalance(account), 450n)
        })))

      it.effect("the operator can fail a pending order, which refunds it", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(1000n)
          const orders = yield* Orders
          const placed = yield* place(account, { bundle_id: mtn1gb, phone_number: "0249999999" })
          const resolved = yield* orders.resolve(placed.order.order_number, "failed")
          assert.strictEqual(resolved.status, "failed")
          assert.strictEqual(yield* mainBalance(account), 1000n)
          assert.isTrue((yield* audit).ok)
        }))

      it.effect("another account's order is not found", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const owner = yield* fundedAccount(1000n)
          const other = yield* fundedAccount(0n)
          const placed = yield* place(owner, { bundle_id: mtn1gb, phone_number: "0241234567" })
          const orders = yield* Orders
          const error = yield* Effect.flip(orders.get(other, placed.order.order_number))
          assert.instanceOf(error, Order.OrderNotFound)
        }))

      it.effect("lists are newest first with filters and pagination", () =>
        Effect.gen(function*() {
          const { mtn1gb } = yield* seedCatalog
          const account = yield* fundedAccount(10_000n)
          const orders = yield* Orders
          const numbers: Array<string> = []
          for (const [i, phone] of ["0241111111", "233241111111", "0240000000", "0242222222", "0243333333"].entries()) {
            numbers.push(
              (yield* place(account, { bundle_id: mtn1gb, phone_number: phone, reference: `L${i}` })).order.order_number
            )
          }
          const query = (q: Partial<Order.ListOrdersParams>) => orders.list(account, { page: 1, per_page: 20, ...q })
          const all = yield* query({})
          assert.deepStrictEqual(all.orders.map((o) => o.order_number), [...numbers].reverse())
          assert.deepStrictEqual(all.pagination, { current_page: 1, per_page: 20, total: 5, last_page: 1 })
          const page2 = yield* query({ page: 2, per_page: 2 })
          assert.deepStrictEqual(page2.orders.map((o) => o.order_number), [numbers[2], numbers[1]])
          assert.deepStrictEqual(page2.pagination, { current_page: 2, per_page: 2, total: 5, last_page: 3 })
          assert.strictEqual((yield* query({ page: 9, per_page: 2 })).orders.length, 0)
          assert.deepStrictEqual((yield* query({ status: "failed" })).orders.map((o) => o.order_number), [numbers[2]])
          assert.deepStrictEqual((yield* query({ reference: "L3" })).orders.map((o) => o.order_number), [numbers[3]])
          // A prefix finds a batch: L0..L4 here, and nothing of another prefix.
          assert.strictEqual((yield* query({ reference_prefix: "L" })).pagination.total, 5)
          assert.strictEqual((yield* query({ reference_prefix: "L1" })).pagination.total, 1)
          assert.strictEqual((yield* query({ reference_prefix: "M" })).pagination.total, 0)
          // Either form of a number finds orders placed with either form.
          const byPhone = yield* query({ phone_number: "0241111111" })
          assert.deepStrictEqual(byPhone.orders.map((o) => o.order_number), [numbers[1], numbers[0]])
          const today = new Date().toISOString().slice(0, 10)
          assert.strictEqual((yield* query({ from: today, to: today })).pagination.total, 5)
          assert.strictEqual((yield* query({ to: "2000-01-01" })).pagination.total, 0)
          assert.strictEqual((yield* query({ from: new Date(Date.now() + 60_000).toISOString() })).pagination.total, 0)
        }))
    })
  })
}
