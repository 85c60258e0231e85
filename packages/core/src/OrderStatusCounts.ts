/**
 * The counts of orders per account and status behind the totals of order lists filtered by
 * status (migration 0023): what they hold, the trigger that keeps them, their fold and their
 * start from the orders already there, and the statement that reads a total from them.
 */
// GET /orders answers every page with its total, and counting an account's successful or failed
// orders costs more the more it has. So each account keeps them, from three parts that move in
// the transactions that move the orders:
//
// - `accounts.order_count`, every order placed (migration 0016), and `accounts.delivered_count`,
//   the orders the placement's statement inserted as successful: both raised by that statement in
//   the update of the account's row it makes anyway (its event counter), so the placement writes
//   no row more. The placement inserts an order pending or successful, never failed, and it is
//   the only place orders are written.
// - `order_status_counts`, a row appended by a trigger for each change of an order's status
//   (the worker's settlement, the operator's resolution, a failure and its refund, a commission's
//   settlement: every writer, whichever it is), holding what the change adds to the account's
//   successful and failed orders. Appending takes no lock another transaction waits for: an
//   update of the account's row there would, taken in the middle of transactions that lock
//   wallets and event counters in their own order (the deadlock of the rollups' first version,
//   docs/benchmarks.md). The worker folds the appended rows into one per account with the
//   rollups (`compactStats`), so a read sums a handful of rows, not orders.
//
// An account's successful orders are its delivered_count and its rows' successful; its failed
// ones, its rows' failed; its pending ones, the rest of its order_count. One statement reads them
// all from one snapshot, so a total is exact whatever commits meanwhile.
import { type Order } from "@databundle/contract"
import type { SqlClient, Statement } from "@effect/sql"

/** Migration 0023: the delivered count, the appended changes, their trigger and their start. */
export const orderStatusCounts: ReadonlyArray<string> = [
  `ALTER TABLE accounts ADD COLUMN delivered_count bigint NOT NULL DEFAULT 0 CHECK (delivered_count >= 0)`,
  `CREATE TABLE order_status_counts (
    account_id integer NOT NULL,
    successful bigint NOT NULL,
    failed bigint NOT NULL,
    compacted boolean NOT NULL DEFAULT false
  )`,
  `CREATE INDEX order_status_counts_account ON order_status_counts (account_id)`,
  `CREATE FUNCTION bundles_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO order_status_counts (account_id, successful, failed)
    VALUES (NEW.account_id,
      (NEW.status = 'successful')::integer - (OLD.status = 'successful')::integer,
      (NEW.status = 'failed')::integer - (OLD.status = 'failed')::integer);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER orders_status_counts AFTER UPDATE OF status ON orders
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION bundles_count_status()`,
  `INSERT INTO order_status_counts (account_id, successful, failed, compacted)
    SELECT account_id, count(*) FILTER (WHERE status = 'successful'), count(*) FILTER (WHERE status = 'failed'), true
    FROM orders GROUP BY account_id`
]

/**
 * Folds the changes appended since the last pass into one row per account, as the rollups'
 * fold does: the rows the statement deletes are those its snapshot sees and it inserts their
 * sums, so a row appended meanwhile waits for the next pass, and nothing is lost or counted twice.
 */
export const compactStatusCounts =
  `WITH keys AS (SELECT DISTINCT account_id FROM order_status_counts WHERE NOT compacted),
  gone AS (
    DELETE FROM order_status_counts s USING keys k WHERE s.account_id = k.account_id
    RETURNING s.account_id, s.successful, s.failed
  )
  INSERT INTO order_status_counts (account_id, successful, failed, compacted)
  SELECT account_id, sum(successful), sum(failed), true FROM gone GROUP BY 1`

/**
 * The number of orders with `status` (every order when it is left out) of the accounts `accounts`
 * selects, a condition on the `accounts` table, read from the kept counts.
 */
export const keptTotal = (
  sql: SqlClient.SqlClient,
  accounts: Statement.Fragment,
  status?: Order.OrderStatus
) => {
  const placed = sql`(SELECT coalesce(sum(order_count), 0) FROM a)`
  const delivered = sql`(SELECT coalesce(sum(delivered_count), 0) FROM a)`
  const total = status === undefined
    ? placed
    : status === "successful"
    ? sql`${delivered} + c.successful`
    : status === "failed"
    ? sql`c.failed`
    : sql`${placed} - ${delivered} - c.successful - c.failed`
  return sql<{ total: string }>`
    WITH a AS (SELECT id, order_count, delivered_count FROM accounts WHERE ${accounts}),
    c AS (
      SELECT coalesce(sum(successful), 0) AS successful, coalesce(sum(failed), 0) AS failed
      FROM order_status_counts WHERE account_id IN (SELECT id FROM a)
    )
    SELECT ${total} AS total FROM c
  `
}
