/** An `@effect/sql` client (`SqlClient`) over PGlite, the embedded WASM Postgres. */
export * as PgliteClient from "./PgliteClient.js"
