/**
 * Small pieces every SQL-backed service shares: turning infrastructure failures into
 * defects at the service edge, reading Postgres error codes, reading int8 columns, and work
 * to do once a transaction has committed.
 */
import { type SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, FiberRef, ParseResult, Schema } from "effect"

/**
 * Lets domain errors through and turns infrastructure failures into defects (the server
 * answers those with a 500): an `SqlError`, a row its schema cannot read (a `ParseError` of
 * `SqlSchema`), no row where one must be (`SqlSchema.single`).
 */
export const orDie = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError | ParseResult.ParseError | Cause.NoSuchElementException>, R> =>
  Effect.catchIf(
    self,
    (error) => isSqlError(error) || ParseResult.isParseError(error) || Cause.isNoSuchElementException(error),
    (error) => Effect.die(error)
  ) as any

/**
 * The rows of a statement made for one call (its text built from a list's filters, say),
 * decoded with `Result`: `SqlSchema.findAll` of a statement that takes no request.
 */
export const rowsOf = <A, I, R, E, R2>(
  Result: Schema.Schema<A, I, R>,
  statement: Effect.Effect<ReadonlyArray<unknown>, E, R2>
) => SqlSchema.findAll({ Request: Schema.Void, Result, execute: () => statement })(undefined)

const isSqlError = (error: unknown): error is SqlError =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError"

/** The Postgres SQLSTATE of a failed statement, when the driver reported one. */
export const sqlState = (error: unknown): string | undefined => {
  const cause = isSqlError(error) ? error.cause : error
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
}

/** True for a unique-constraint violation (23505). */
export const isUniqueViolation = (error: unknown): boolean => sqlState(error) === "23505"

/** Reads an int8 or numeric column, which drivers return as a string, as a bigint. */
export const int8 = (value: string | number | bigint): bigint => BigInt(value)

/** An int8 or numeric column (a string, or a number on some drivers) decoded as a bigint. */
export const Int8 = Schema.transform(
  Schema.Union(Schema.String, Schema.Number, Schema.BigIntFromSelf),
  Schema.BigIntFromSelf,
  { strict: true, decode: (value) => BigInt(value), encode: (value) => value }
)

/** An int8 column that stays far below 2^53 (a `bigserial` id, a count) decoded as a number. */
export const Int8Number = Schema.Union(Schema.Number, Schema.NumberFromString)

// What the current `transaction` will run once it commits; undefined outside one.
const committed = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)

/**
 * Runs `action` once the changes made so far are committed: when the outermost `transaction`
 * around it commits (not at all if it rolls back), or at once outside one. For forgetting a
 * cache of what a change changed: forgotten before the commit, a read in between would read
 * the old rows and keep them.
 */
export const afterCommit = (action: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(committed), (queue) =>
    queue === undefined ? action : Effect.sync(() => {
      queue.push(action)
    }))

/**
 * `sql.withTransaction`, which also runs the `afterCommit` actions of what it ran once it
 * has committed. Nested in another, it is a savepoint and leaves them to the outer one.
 */
export const transaction = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  Effect.flatMap(FiberRef.get(committed), (queue) => {
    if (queue !== undefined) return sql.withTransaction(effect)
    const actions: Array<Effect.Effect<void>> = []
    return Effect.locally(sql.withTransaction(effect), committed, actions).pipe(
      Effect.tap(() => Effect.forEach(actions, (action) => action, { discard: true }))
    )
  })
