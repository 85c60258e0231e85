/**
 * Migration 0018 gives existing operators roles: the earliest operator still enabled becomes
 * the owner (whoever set the console up), every other one an operator. On PGlite and Postgres.
 */
import { Postgres } from "@databundle/sql-pg"
import { PgliteClient } from "@databundle/sql-pglite"
import { Migrator, SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { migrate, migrations, MIGRATIONS_TABLE } from "../src/Migrations.js"
import { freshDatabase } from "./TestDatabase.js"

/** The migrations before 0018, as a database made by the build before it has them. */
const before = Migrator.make({})({
  loader: Migrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0018"))),
  table: MIGRATIONS_TABLE
})

const databases: ReadonlyArray<{ readonly name: string; readonly layer: Layer.Layer<SqlClient.SqlClient> }> = [
  { name: "pglite", layer: PgliteClient.layer({}).pipe(Layer.orDie) },
  ...(process.env.TEST_DATABASE_URL
    ? [{
      name: "postgres",
      layer: Layer.unwrapScoped(Effect.map(
        freshDatabase(process.env.TEST_DATABASE_URL),
        (url) => Postgres.layer({ url: Redacted.make(url), maxConnections: 2 })
      )).pipe(Layer.orDie)
    }]
    : [])
]

for (const database of databases) {
  describe(`operator roles on ${database.name}`, () => {
    it.effect("make the earliest enabled operator the owner and every other an operator", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* before
        const existing: ReadonlyArray<readonly [string, boolean]> = [
          ["first@example.com", true],
          ["second@example.com", false],
          ["third@example.com", false]
        ]
        for (const [email, disabled] of existing) {
          yield* sql`
            INSERT INTO operators (email, name, password_hash, disabled_at)
            VALUES (${email}, ${email}, 'x', ${disabled ? sql`now()` : null})
          `
        }
        yield* migrate
        const rows = yield* sql<{ email: string; role: string }>`SELECT email, role FROM operators ORDER BY id`
        assert.deepStrictEqual(rows.map((r) => [r.email, r.role]), [
          ["first@example.com", "operator"],
          ["second@example.com", "owner"],
          ["third@example.com", "operator"]
        ])
        // New operators are operators unless made owners.
        yield* sql`INSERT INTO operators (email, name, password_hash) VALUES ('fourth@example.com', 'x', 'x')`
        const [fourth] = yield* sql<{ role: string }>`SELECT role FROM operators WHERE email = 'fourth@example.com'`
        assert.strictEqual(fourth!.role, "operator")
      }).pipe(Effect.provide(database.layer), Effect.scoped), { timeout: 60_000 })
  })
}
