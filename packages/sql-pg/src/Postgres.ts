/**
 * The Postgres client: `@effect/sql-pg` over a node-postgres pool whose connections send the
 * statements that `Options.prepare` picks as named statements, so that Postgres parses,
 * analyses and plans each of them once per connection instead of at every call. Every other
 * statement goes as before (unnamed: parsed and planned each time).
 *
 * Only the picked statements are named, because node-postgres keeps every name a connection
 * has prepared for the connection's lifetime: a few hot statements of fixed shapes, not the
 * statements whose text varies with their filters.
 */
import { type SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, type Layer, Redacted } from "effect"
import { createHash } from "node:crypto"
import pg from "pg"

// A statement's name, by a hash of its text (one name per text, so a shape of its own is
// another statement); kept, as there are only a few picked texts.
const names = new Map<string, string>()
const nameOf = (text: string) => {
  let name = names.get(text)
  if (name === undefined) {
    name = `bundles_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`
    names.set(text, name)
  }
  return name
}

/** A node-postgres client that sends the statements `prepare` picks as named ones. */
const preparingClient = (prepare: (text: string) => boolean) =>
  class PreparingClient extends pg.Client {
    override query(...args: Array<any>): any {
      const [text, values, callback] = args
      if (typeof text === "string" && Array.isArray(values) && prepare(text)) {
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
   * Which statements to prepare once per connection: those whose text this answers true for
   * (the domain's are marked, `Prepared.isPrepared` of `@databundle/core`). Left out, every
   * statement is sent unnamed: for a connection pooler between the server and Postgres that
   * hands a session's statements to other connections (PgBouncer in transaction mode before
   * 1.21, or without `max_prepared_statements`).
   */
  readonly prepare?: ((text: string) => boolean) | undefined
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
          Client: options.prepare === undefined ? pg.Client : preparingClient(options.prepare)
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
