/**
 * The server's Postgres (only when TEST_DATABASE_URL is set), opened as `serve` opens it from
 * `DATABASE_URL`: the domain's hot statements are prepared once per connection, and with
 * `BUNDLES_PG_PREPARED=0` none is.
 */
import { Prepared } from "@databundle/core"
import { freshDatabase } from "@databundle/core/testing"
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import * as Database from "../src/Database.js"

const url = process.env.TEST_DATABASE_URL

/** The names of the statements prepared on the connection of one transaction, after a marked statement ran there thrice. */
const preparedAfterHotStatements = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const fresh = yield* freshDatabase(url!)
    const context = yield* Layer.build(Database.layer.pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({ DATABASE_URL: fresh, ...env })))
    ))
    const sql = Context.get(context, SqlClient.SqlClient)
    // One transaction, so one connection: its own prepared statements are the ones listed.
    return yield* sql.withTransaction(Effect.gen(function*() {
      for (const n of [1, 2, 3]) yield* sql`${Prepared.prepared(sql)} SELECT ${n}::int AS n`
      return yield* sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`
    }))
  })

describe.skipIf(url === undefined)("the server's Postgres", () => {
  it.scoped("prepares a marked statement once per connection", () =>
    Effect.gen(function*() {
      const statements = yield* preparedAfterHotStatements({})
      assert.deepStrictEqual(statements.map((row) => row.statement), ["/* prepared */ SELECT $1::int AS n"])
    }))

  it.scoped("prepares none with BUNDLES_PG_PREPARED=0", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* preparedAfterHotStatements({ BUNDLES_PG_PREPARED: "0" }), [])
    }))
})
