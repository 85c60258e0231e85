/**
 * The Postgres client: `@effect/sql-pg` over a node-postgres pool whose connections send
 * the statements marked with `prepared` as named statements, so that Postgres parses,
 * analyses and plans each of them once per connection instead of at every call. Every other
 * statement goes as before (unnamed: parsed and planned each time).
 *
 * Only marked statements are named, because node-postgres keeps every name a connection has
 * prepared for the connection's lifetime: a few hot statements of fixed shapes, not the
 * statements whose text varies with their filters. (The embedded database prepares every
 * statement with parameters, under a bound of its own: `PgliteClient`.)
 */
import { type SqlClient, SqlError, type Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, type Layer, Redacted } from "effect"
import { createHash } from "node:crypto"
import pg from "pg"

/** What a marked statement's text starts with. */
const MARK = "/* prepared */"

/**
 * Put first in a hot statement of fixed shape (its text the same at every call, only its
 * values differing): it is then prepared once per connection.
 */
export const prepared = (sql: SqlClient.SqlClient): Statement.Fragment => sql.literal(MARK)

/** How a slot's stand-in value starts: no value a statement is built with starts so. */
const SLOT = "\u0000slot:"

/**
 * A statement built and compiled once, its per-call values in named slots: `build` writes it
 * with `slot(name)` wherever a value goes; the result sends its text with a call's values in
 * those places. For a hot statement whose SQL is long or built from many fragments, so that
 * neither is done again at every call (and, marked `prepared`, its one text is named once).
 */
export const reusable = <K extends string, A extends object>(
  sql: SqlClient.SqlClient,
  build: (slot: (name: K) => string) => Statement.Statement<A>
) => {
  const [text, params] = build((name) => SLOT + name).compile()
  const places = params.map((param) =>
    typeof param === "string" && param.startsWith(SLOT) ? param.slice(SLOT.length) as K : undefined
  )
  return (values: Readonly<Record<K, unknown>>) =>
    sql.unsafe<A>(text, places.map((name, i) => name === undefined ? params[i]! : values[name]))
}

// A statement's name, by a hash of its text (one name per text, so a shape of its own is
// another statement); kept, as there are only a few marked texts.
const names = new Map<string, string>()
const nameOf = (text: string) => {
  let name = names.get(text)
  if (name === undefined) {
    name = `bundles_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`
    names.set(text, name)
  }
  return name
}

/** A node-postgres client that sends marked statements as named ones. */
class PreparingClient extends pg.Client {
  override query(...args: Array<any>): any {
    const [text, values, callback] = args
    if (typeof text === "string" && Array.isArray(values) && text.startsWith(MARK)) {
      return super.query({ name: nameOf(text), text, values }, callback)
    }
    return (super.query as (...args: Array<any>) => any)(...args)
  }
}

/** Where and how to connect. */
export interface Options {
  readonly url: Redacted.Redacted<string>
  readonly maxConnections?: number
  readonly applicationName?: string
  /**
   * False sends marked statements unnamed like the others: for a connection pooler between
   * the server and Postgres that hands a session's statements to other connections (PgBouncer
   * in transaction mode before 1.21, or without `max_prepared_statements`). True by default.
   */
  readonly prepare?: boolean
}

/**
 * The `SqlClient` on Postgres at `url`. Opening it checks the connection (within 5 s), so a
 * wrong URL stops the start with its reason.
 */
export const layer = (options: Options): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =>
  PgClient.layerFromPool({
    applicationName: options.applicationName,
    acquire: Effect.acquireRelease(
      Effect.gen(function*() {
        const pool = new pg.Pool({
          connectionString: Redacted.value(options.url),
          max: options.maxConnections,
          application_name: options.applicationName,
          Client: options.prepare === false ? pg.Client : PreparingClient
        })
        // A connection lost while idle is replaced at its next use; it must not end the process.
        pool.on("error", () => {})
        yield* Effect.tryPromise({
          try: () => pool.query("SELECT 1"),
          catch: (cause) => new SqlError.SqlError({ cause, message: "Cannot connect to Postgres" })
        }).pipe(
          Effect.timeoutFail({
            duration: Duration.seconds(5),
            onTimeout: () =>
              new SqlError.SqlError({ cause: new Error("Connection timed out"), message: "Cannot connect to Postgres" })
          }),
          Effect.tapError(() => Effect.promise(() => pool.end()))
        )
        return pool
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(Duration.seconds(1)))
    )
  })
