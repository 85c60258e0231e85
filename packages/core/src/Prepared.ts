/**
 * Hot statements: marked, so that the Postgres client prepares each once per connection (the
 * server opens it with `isPrepared` as the test of which to prepare), and built once
 * (`reusable`). Only statements of fixed shapes are marked: a connection keeps every statement
 * it has prepared for its lifetime, so one whose text varies with its filters must not be.
 * (The embedded database prepares every statement with parameters, under a bound of its own.)
 */
import type { SqlClient, Statement } from "@effect/sql"

/** What a marked statement's text starts with. */
const MARK = "/* prepared */"

/**
 * Put first in a hot statement of fixed shape (its text the same at every call, only its
 * values differing): it is then prepared once per connection.
 */
export const prepared = (sql: SqlClient.SqlClient): Statement.Fragment => sql.literal(MARK)

/** Whether a statement's text was marked with `prepared`. */
export const isPrepared = (text: string): boolean => text.startsWith(MARK)

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
