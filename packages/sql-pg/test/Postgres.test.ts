/**
 * The Postgres client's prepared statements (only when TEST_DATABASE_URL is set): a statement
 * the `prepare` test picks is prepared once per connection and reused, any other is not
 * prepared, none is without the test, and a wrong address stops the opening with its reason.
 */
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Redacted } from "effect"
import * as Postgres from "../src/Postgres.js"

const url = process.env.TEST_DATABASE_URL

/** The test's mark of a hot statement. */
const HOT = "/* hot */"
const isHot = (text: string) => text.startsWith(HOT)

// One connection, so every statement meets the same session's prepared statements.
const connect = (prepare: ((text: string) => boolean) | undefined) =>
  Effect.map(
    Layer.build(Postgres.layer({ url: Redacted.make(url!), maxConnections: 1, prepare })),
    Context.get(SqlClient.SqlClient)
  )

describe.skipIf(url === undefined)("Postgres client", () => {
  it.scoped("prepares a picked statement once per connection and reuses it", () =>
    Effect.gen(function*() {
      const sql = yield* connect(isHot)
      const preparedNow = sql<{ statement: string; calls: string }>`
        SELECT statement, generic_plans + custom_plans AS calls FROM pg_prepared_statements
      `
      for (const n of [1, 2, 3, 4, 5, 6, 7]) {
        const [row] = yield* sql<{ doubled: number }>`${sql.literal(HOT)} SELECT ${n}::int * 2 AS doubled`
        assert.strictEqual(row!.doubled, n * 2)
        const [plain] = yield* sql<{ tripled: number }>`SELECT ${n}::int * 3 AS tripled`
        assert.strictEqual(plain!.tripled, n * 3)
      }
      const statements = yield* preparedNow
      assert.strictEqual(statements.length, 1, JSON.stringify(statements))
      assert.match(statements[0]!.statement, /^\/\* hot \*\/ SELECT \$1::int \* 2 AS doubled/)
      // Executed seven times through the one prepared statement (parsed once).
      assert.strictEqual(Number(statements[0]!.calls), 7)
      // A failing execution does not lose it: the next call uses it again.
      const failed = yield* Effect.exit(sql`${sql.literal(HOT)} SELECT ${"x"}::int * 2 AS doubled`)
      assert.isTrue(Exit.isFailure(failed))
      const [again] = yield* sql<{ doubled: number }>`${sql.literal(HOT)} SELECT ${21}::int * 2 AS doubled`
      assert.strictEqual(again!.doubled, 42)
      assert.strictEqual((yield* preparedNow).length, 1)
    }))

  it.scoped("without a prepare test, a marked statement is sent unnamed like the others", () =>
    Effect.gen(function*() {
      const sql = yield* connect(undefined)
      for (const n of [1, 2, 3]) {
        const [row] = yield* sql<{ doubled: number }>`${sql.literal(HOT)} SELECT ${n}::int * 2 AS doubled`
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
