import { Account, ApiKey } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Redacted, TestServices } from "effect"
import { Accounts } from "../src/Accounts.js"
import { ApiKeys } from "../src/ApiKeys.js"
import * as Tokens from "../src/Tokens.js"
import { Domain, fundedAccount, seedCatalog } from "./fixtures.js"
import { targets } from "./TestDatabase.js"

const authenticate = (key: string) => Effect.flatMap(ApiKeys, (keys) => keys.authenticate(Redacted.make(key)))

for (const target of targets) {
  describe(`ApiKeys on ${target.name}`, () => {
    layer(Domain.pipe(Layer.provideMerge(target.layer)), { timeout: 60_000 })((it) => {
      it.effect("a key is random, prefixed, stored only as its SHA-256 hash, and authenticates", () =>
        Effect.gen(function*() {
          const account = yield* fundedAccount(0n)
          const created = yield* (yield* ApiKeys).create(account)
          assert.match(created.api_key, /^dbk_live_[0-9A-Za-z]{40}$/)
          assert.strictEqual(created.prefix, created.api_key.slice(0, 17))
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{ key_hash: string }>`SELECT key_hash FROM api_keys WHERE id = ${created.id}`
          assert.strictEqual(row!.key_hash, Tokens.sha256Hex(created.api_key))
          const stored =
            yield* sql`SELECT 1 FROM api_keys WHERE key_hash = ${created.api_key} OR prefix = ${created.api_key}`
          assert.strictEqual(stored.length, 0)
          const principal = Option.getOrThrow(yield* authenticate(created.api_key))
          assert.strictEqual(principal.accountId, account)
          assert.strictEqual(principal.keyId, created.id)
          const [used] = yield* sql<
            { last_used_at: Date | null }
          >`SELECT last_used_at FROM api_keys WHERE id = ${created.id}`
          assert.isNotNull(used!.last_used_at)
        }))

      it.effect("malformed and unknown keys are refused", () =>
        Effect.gen(function*() {
          for (const key of ["", "nope", `dbk_${"x".repeat(39)}`, Tokens.apiKey()]) {
            assert.isTrue(Option.isNone(yield* authenticate(key)), key)
          }
        }))

      it.effect("a revoked key and a suspended account are refused at once in this process", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeys
          const account = yield* fundedAccount(0n)
          const a = yield* keys.create(account)
          const b = yield* keys.create(account)
          assert.isTrue(Option.isSome(yield* authenticate(a.api_key)))
          const revoked = yield* keys.revoke(account, a.id)
          assert.isNotNull(revoked.revoked_at)
          assert.isTrue(Option.isNone(yield* authenticate(a.api_key)))
          // Revoking twice keeps the first revocation time.
          assert.deepStrictEqual((yield* keys.revoke(account, a.id)).revoked_at, revoked.revoked_at)
          assert.isTrue(Option.isSome(yield* authenticate(b.api_key)))
          const accounts = yield* Accounts
          yield* accounts.update(account, { status: "suspended" })
          assert.isTrue(Option.isNone(yield* authenticate(b.api_key)))
          yield* accounts.update(account, { status: "active" })
          assert.isTrue(Option.isSome(yield* authenticate(b.api_key)))
        }))

      it.effect("concurrent first uses share one answer; an interrupted lookup leaves no one waiting", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeys
          const account = yield* fundedAccount(0n)
          const a = yield* keys.create(account)
          const answers = yield* Effect.all(Array.from({ length: 20 }, () => authenticate(a.api_key)), {
            concurrency: "unbounded"
          })
          for (const answer of answers) assert.strictEqual(Option.getOrThrow(answer).keyId, a.id)
          // A request cut while its key is being looked up: the next use of the key still gets an answer.
          const b = yield* keys.create(account)
          const cut = yield* Effect.fork(authenticate(b.api_key))
          yield* Effect.yieldNow()
          yield* Fiber.interrupt(cut)
          const again = yield* authenticate(b.api_key).pipe(Effect.timeout("10 seconds"), TestServices.provideLive)
          assert.strictEqual(Option.getOrThrow(again).keyId, b.id)
          // Revoked while a lookup may be under way: refused once the revoke has answered.
          const c = yield* keys.create(account)
          const racing = yield* Effect.fork(authenticate(c.api_key))
          yield* keys.revoke(account, c.id)
          yield* Fiber.join(racing)
          assert.isTrue(Option.isNone(yield* authenticate(c.api_key)))
        }))

      it.effect("keys of another account or unknown ids are not found", () =>
        Effect.gen(function*() {
          const keys = yield* ApiKeys
          const owner = yield* fundedAccount(0n)
          const other = yield* fundedAccount(0n)
          const key = yield* keys.create(owner)
          assert.instanceOf(yield* Effect.flip(keys.revoke(other, key.id)), ApiKey.ApiKeyNotFound)
          assert.instanceOf(yield* Effect.flip(keys.create(Account.AccountId.make(999_999))), Account.AccountNotFound)
        }))

      it.effect("the principal carries price group and limit overrides", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const accounts = yield* Accounts
          const account = yield* fundedAccount(0n, "agent")
          yield* accounts.update(account, { limits: { orders: 120, all: null } })
          const key = yield* (yield* ApiKeys).create(account)
          const principal = Option.getOrThrow(yield* authenticate(key.api_key))
          assert.isNotNull(principal.priceGroupId)
          assert.deepStrictEqual(principal.limits, { orders: 120 })
          const detail = yield* accounts.update(account, { limits: { orders: null, balance: 300 } })
          assert.deepStrictEqual(detail.limits, { balance: 300 })
        }))
    })
  })
}
