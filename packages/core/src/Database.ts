/**
 * Small pieces every SQL-backed service shares: turning infrastructure failures into
 * defects at the service edge, reading Postgres error codes, reading int8 columns.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, ParseResult, Schema } from "effect"

/** Lets domain errors through and turns `SqlError` into a defect (the server answers those with a 500). */
export const orDie = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
  Effect.catchIf(self, isSqlError, (error) => Effect.die(error)) as any

/** Like `orDie`, and a row the schema cannot read (a `ParseError` of `SqlSchema`) is a defect too. */
export const rowsOrDie = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError | ParseResult.ParseError>, R> =>
  Effect.catchIf(
    self,
    (error) => isSqlError(error) || ParseResult.isParseError(error),
    (error) => Effect.die(error)
  ) as any

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
