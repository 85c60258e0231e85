/**
 * Hot statements on Postgres (only when TEST_DATABASE_URL is set), opened as the server and the
 * test databases open it: a statement marked `prepared` is prepared once per connection, an
 * unmarked one is not; a reusable statement is one text, sent with each call's values in its
 * slots.
 */
import { Postgres } from "@databundle/sql-pg"
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { isPrepared, prepared, reusable } from "../src/Prepared.js"
import { freshDatabase } from "./TestDatabase.js"

const url = process.env.TEST_DATABASE_URL

// One connection, so every statement meets the same session's prepared statements.
const connect = Effect.gen(function*() {
  const fresh = yield* freshDatabase(url!)
  return Context.get(
    yield* Layer.build(Postgres.layer({ url: Redacted.make(fresh), maxConnections: 1, prepare: isPrepared })),
    SqlClient.SqlClient
  )
})

const preparedNow = (sql: SqlClient.SqlClient) =>
  sql<{ statement: string; calls: string }>`
    SELECT statement, generic_plans + custom_plans AS calls FROM pg_prepared_statements
  `

describe.skipIf(url === undefined)("hot statements", () => {
  it.scoped("a marked statement is prepared once per connection, an unmarked one is not", () =>
    Effect.gen(function*() {
      const sql = yield* connect
      for (const n of [1, 2, 3]) {
        const [row] = yield* sql<{ doubled: number }>`${prepared(sql)} SELECT ${n}::int * 2 AS doubled`
        assert.strictEqual(row!.doubled, n * 2)
        yield* sql`SELECT ${n}::int * 3 AS tripled`
      }
      const statements = yield* preparedNow(sql)
      assert.strictEqual(statements.length, 1, JSON.stringify(statements))
      assert.match(statements[0]!.statement, /^\/\* prepared \*\/ SELECT \$1::int \* 2 AS doubled/)
      assert.strictEqual(Number(statements[0]!.calls), 3)
    }))

  it.scoped("a reusable statement sends one text, each call's values in its slots and its own values kept", () =>
    Effect.gen(function*() {
      const sql = yield* connect
      const sum = reusable<"a" | "b", { total: number; label: string; again: number }>(
        sql,
        (slot) =>
          sql`${prepared(sql)} SELECT ${slot("a")}::int + ${slot("b")}::int AS total, ${"fixed"}::text AS label,
            ${slot("a")}::int AS again`
      )
      for (const [a, b] of [[1, 2], [40, 2], [-5, 5]] as const) {
        const [row] = yield* sum({ a, b })
        assert.deepStrictEqual(row, { total: a + b, label: "fixed", again: a })
      }
      const statements = yield* preparedNow(sql)
      assert.strictEqual(statements.length, 1, JSON.stringify(statements))
      assert.strictEqual(Number(statements[0]!.calls), 3)
    }))
})
