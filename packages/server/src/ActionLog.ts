/**
 * Writes the action log around the admin API's changes: the change and its line run in one
 * transaction (a savepoint when the change opens its own, or runs under an `Idempotency-Key`),
 * so a change never commits without its line, and a refused, failed or replayed request,
 * which commits no change, writes none. The actor is who the gateway found: the admin token,
 * or a signed-in operator.
 */
import { Database, OperatorActions } from "@databundle/core"
import { SqlClient } from "@effect/sql"
import { Effect, FiberRef } from "effect"
import * as RequestContext from "./RequestContext.js"

/** What to write about a change, from its result. */
export type Describe<A> = (value: A) => Omit<OperatorActions.Entry, "actor" | "requestId">

/** The actor of the current request. */
export const actor: Effect.Effect<OperatorActions.Actor> = Effect.map(
  FiberRef.get(RequestContext.caller),
  (caller): OperatorActions.Actor =>
    caller._tag === "OperatorSession" ? { kind: "operator", operatorId: caller.session.operatorId } : { kind: "token" }
)

/** `logged(effect, describe)`: runs the change and writes its line in one transaction. */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const log = yield* OperatorActions.OperatorActions
  const write = <A>(value: A, describe: Describe<A>) =>
    Effect.gen(function*() {
      const info = yield* FiberRef.get(RequestContext.current)
      yield* log.record({ ...describe(value), actor: yield* actor, requestId: info.id })
    })
  return {
    logged: <A, E, R>(effect: Effect.Effect<A, E, R>, describe: Describe<A>): Effect.Effect<A, E, R> =>
      Database.orDie(Database.transaction(sql, Effect.tap(effect, (value) => write(value, describe)))) as Effect.Effect<
        A,
        E,
        R
      >,
    /** Writes a line inside a transaction the caller already runs. */
    write
  }
})
