/**
 * Databases for tests: an in-memory PGlite always, and a fresh Postgres database when
 * `TEST_DATABASE_URL` is set. Each layer build gets its own database, migrated, and a
 * Postgres one is dropped when the layer is released, so runs never collide.
 */
import { Postgres } from "@databundle/sql-pg"
import { PgliteClient } from "@databundle/sql-pglite"
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { migrate } from "../src/Migrations.js"
import { isPrepared } from "../src/Prepared.js"

/** A database to run a suite against. */
export interface Target {
  readonly name: "pglite" | "postgres"
  readonly layer: Layer.Layer<SqlClient.SqlClient>
}

const migrated = <E>(client: Layer.Layer<SqlClient.SqlClient, E>) =>
  Layer.effectDiscard(migrate).pipe(Layer.provideMerge(client), Layer.orDie)

/** A fresh, migrated in-memory PGlite. */
export const pglite: Layer.Layer<SqlClient.SqlClient> = migrated(PgliteClient.layer({}))

/** Runs `f` on a short-lived connection to the server's maintenance database. */
const withAdmin = (url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.scoped(Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), f)).pipe(
    Effect.provide(Reactivity.layer),
    Effect.orDie
  )

/** The URL of a fresh, empty database on the Postgres server at `url`, dropped when the scope closes. */
export const freshDatabase = (url: string) =>
  Effect.gen(function*() {
    const name = `bundles_test_${randomBytes(6).toString("hex")}`
    yield* withAdmin(url, (sql) => sql`CREATE DATABASE ${sql(name)}`)
    yield* Effect.addFinalizer(() => withAdmin(url, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`))
    const target = new URL(url)
    target.pathname = `/${name}`
    return target.toString()
  })

/** A fresh, migrated database on the Postgres server at `url`, dropped on release. */
export const postgres = (url: string): Layer.Layer<SqlClient.SqlClient> =>
  migrated(Layer.unwrapScoped(Effect.map(
    freshDatabase(url),
    (fresh) => Postgres.layer({ url: Redacted.make(fresh), maxConnections: 20, prepare: isPrepared })
  )))

/** Every database the suites run on here. */
export const targets: ReadonlyArray<Target> = [
  { name: "pglite", layer: pglite },
  ...(process.env.TEST_DATABASE_URL
    ? [{ name: "postgres" as const, layer: postgres(process.env.TEST_DATABASE_URL) }]
    : [])
]
