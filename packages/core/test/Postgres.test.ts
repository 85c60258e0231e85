/**
 * The Postgres client's prepared statements (only when TEST_DATABASE_URL is set): a marked
 * statement is prepared once per connection and reused, an unmarked one is not prepared, and
 * a wrong address stops the opening with its reason; a reusable statement is one text,
 * sent with each call's values in its slots.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Redacted } from "effect"
import * as Postgres from "../src/Postgres.js"
import { freshDatabase } from "./TestDatabase.js"

const url = process.env.TEST_DATABASE_URL

describe.skipIf(url === undefined)("Postgres client", () => {
  it.scoped("prepares a marked statement once per connection and reuses it", () =>
    Effect.gen(function*() {
      const fresh = yield* freshDatabase(url!)
      // One connection, so every statement below meets the same session's prepared statements.
      const sql = Context.get(
        yield* Layer.build(Postgres.layer({ url: Redacted.make(fresh), maxConnections: 1 })),
        SqlClient.SqlClient
      )
      const preparedNow = sql<{ statement: string; calls: string }>`
        SELECT statement, generic_plans + custom_plans AS calls FROM pg_prepared_statements
      `
      for (const n of [1, 2, 3, 4, 5, 6, 7]) {
        const [row] = yield* sql<{ doubled: number }>`${Postgres.prepared(sql)} SELECT ${n}::int * 2 AS doubled`
        assert.strictEqual(row!.doubled, n * 2)
        const [plain] = yield* sql<{ tripled: number }>`SELECT ${n}::int * 3 AS tripled`
        assert.strictEqual(plain!.tripled, n * 3)
      }
      const statements = yield* preparedNow
      assert.strictEqual(statements.length, 1, JSON.stringify(statements))
      assert.match(statements[0]!.statement, /^\/\* prepared \*\/ SELECT \$1::int \* 2 AS doubled/)
      // Executed seven times through the one prepared statement (parsed once).
      assert.strictEqual(Number(statements[0]!.calls), 7)
      // A failing execution does not lose it: the next call uses it again.
      const failed = yield* Effect.exit(sql`${Postgres.prepared(sql)} SELECT ${"x"}::int * 2 AS doubled`)
      assert.isTrue(Exit.isFailure(failed))
      const [again] = yield* sql<{ doubled: number }>`${Postgres.prepared(sql)} SELECT ${21}::int * 2 AS doubled`
      assert.strictEqual(again!.doubled, 42)
      assert.strictEqual((yield* preparedNow).length, 1)
    }))

  it.scoped("a reusable statement sends one text, each call's values in its slots and its own values kept", () =>
    Effect.gen(function*() {
      const fresh = yield* freshDatabase(url!)
      const sql = Context.get(
        yield* Layer.build(Postgres.layer({ url: Redacted.make(fresh), maxConnections: 1 })),
        SqlClient.SqlClient
      )
      const sum = Postgres.reusable<"a" | "b", { total: number; label: string; again: number }>(
        sql,
        (slot) =>
          sql`${Postgres.prepared(sql)} SELECT ${slot("a")}::int + ${
            slot("b")
          }::int AS total, ${"fixed"}::text AS label,
            ${slot("a")}::int AS again`
      )
      for (const [a, b] of [[1, 2], [40, 2], [-5, 5]] as const) {
        const [row] = yield* sum({ a, b })
        assert.deepStrictEqual(row, { total: a + b, label: "fixed", again: a })
      }
      const statements = yield* sql<{ statement: string; calls: string }>`
        SELECT statement, generic_plans + custom_plans AS calls FROM pg_prepared_statements
      `
      assert.strictEqual(statements.length, 1, JSON.stringify(statements))
      assert.strictEqual(Number(statements[0]!.calls), 3)
    }))

  it.scoped("with prepare off, a marked statement is sent unnamed like the others", () =>
    Effect.gen(function*() {
      const fresh = yield* freshDatabase(url!)
      const sql = Context.get(
        yield* Layer.build(Postgres.layer({ url: Redacted.make(fresh), maxConnections: 1, prepare: false })),
        SqlClient.SqlClient
      )
      for (const n of [1, 2, 3]) {
        const [row] = yield* sql<{ doubled: number }>`${Postgres.prepared(sql)} SELECT ${n}::int * 2 AS doubled`
        assert.strictEqual(row!.doubled, n * 2)
      }
      assert.deepStrictEqual(yield* sql`SELECT name FROM pg_prepared_statements`, [])
    }))

  it.effect("an unreachable server stops the opening with its reason", () =>
    Effect.gen(function*() {
      const opened = yield* Effect.exit(Effect.scoped(Layer.build(
        Postgres.layer({ url: Redacted.make("postgres://postgres@127.0.0.1:1/none") })
      )))
      assert.isTrue(Exit.isFailure(opened))
      assert.include(String(Exit.isFailure(opened) ? opened.cause : ""), "Cannot connect to Postgres")
    }))
})
