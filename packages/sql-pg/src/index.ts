/** An `@effect/sql` client (`SqlClient`) on Postgres that prepares the statements marked as hot once per connection. */
export * as Postgres from "./Postgres.js"
