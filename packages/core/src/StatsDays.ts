/**
 * The rollups behind the console's daily figures (migration 0022): what they hold, the
 * triggers that keep them, and their start from the rows already there; with it, the orders'
 * search indexes put in an order the operator's searches can use too.
 */
// The console's daily figures (GET /stats) read rollups instead of the orders and the ledger of
// the whole range, which grow with the business. Triggers append a row of changes in the
// transaction of every write they count (an order's insert and each change of its status; a
// funding, refund or commission entry), so the rollups are exact whatever writes: the placement
// statement, the worker, an operator's resolution. Appending takes no lock another transaction
// waits for: an upsert of a shared row would, and taken inside transactions that also lock
// wallets and event counters in their own order, it deadlocked them on Postgres. The worker
// folds the appended rows into one row per key (`compactStats`), so reads stay proportional to
// days, not orders. Started from the orders and the ledger as they are.
export const statsDays: ReadonlyArray<string> = [
  `CREATE TABLE stats_order_days (
    day date NOT NULL,
    bundle_id integer NOT NULL,
    network_name text NOT NULL,
    shard smallint NOT NULL,
    orders bigint NOT NULL,
    successful bigint NOT NULL,
    sales bigint NOT NULL,
    compacted boolean NOT NULL DEFAULT false
  )`,
  `CREATE INDEX stats_order_days_day ON stats_order_days (day)`,
  `CREATE INDEX stats_order_days_fresh ON stats_order_days (day) WHERE NOT compacted`,
  `CREATE TABLE stats_ledger_days (
    day date NOT NULL,
    shard smallint NOT NULL,
    refunds bigint NOT NULL,
    funding bigint NOT NULL,
    commissions bigint NOT NULL,
    compacted boolean NOT NULL DEFAULT false
  )`,
  `CREATE INDEX stats_ledger_days_day ON stats_ledger_days (day)`,
  `CREATE INDEX stats_ledger_days_fresh ON stats_ledger_days (day) WHERE NOT compacted`,
  `CREATE FUNCTION bundles_stats_order() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    n_orders bigint := 0;
    n_successful bigint := 0;
    n_sales bigint := 0;
  BEGIN
    IF NEW.mode <> 'live' THEN RETURN NULL; END IF;
    IF TG_OP = 'INSERT' THEN
      n_orders := 1;
    ELSIF OLD.status = NEW.status THEN
      RETURN NULL;
    END IF;
    IF NEW.status = 'successful' THEN n_successful := 1; n_sales := NEW.amount; END IF;
    IF TG_OP = 'UPDATE' AND OLD.status = 'successful' THEN
      n_successful := n_successful - 1;
      n_sales := n_sales - OLD.amount;
    END IF;
    IF n_orders = 0 AND n_successful = 0 AND n_sales = 0 THEN RETURN NULL; END IF;
    INSERT INTO stats_order_days (day, bundle_id, network_name, shard, orders, successful, sales)
    VALUES ((NEW.created_at AT TIME ZONE 'UTC')::date, NEW.bundle_id, NEW.network_name, NEW.account_id % 16,
      n_orders, n_successful, n_sales);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER orders_stats AFTER INSERT OR UPDATE OF status ON orders
    FOR EACH ROW EXECUTE FUNCTION bundles_stats_order()`,
  `CREATE FUNCTION bundles_stats_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    -- Test wallets' play money is no business figure.
    IF EXISTS (SELECT 1 FROM accounts WHERE id = NEW.account_id AND mode = 'test') THEN RETURN NULL; END IF;
    INSERT INTO stats_ledger_days (day, shard, refunds, funding, commissions)
    VALUES ((NEW.created_at AT TIME ZONE 'UTC')::date, NEW.account_id % 16,
      CASE WHEN NEW.reason = 'refund' THEN NEW.amount ELSE 0 END,
      CASE WHEN NEW.reason = 'funding' THEN NEW.amount ELSE 0 END,
      CASE WHEN NEW.reason IN ('commission', 'commission_reversal') THEN NEW.amount ELSE 0 END);
    RETURN NULL;
  END $$`,
  `CREATE TRIGGER ledger_entries_stats AFTER INSERT ON ledger_entries
    FOR EACH ROW WHEN (NEW.reason IN ('funding', 'refund', 'commission', 'commission_reversal'))
    EXECUTE FUNCTION bundles_stats_ledger()`,
  // The operator's search by number (every account) and the reseller's (one account) share one
  // index, led by the number; the operator's search by reference likewise shares the uniqueness of
  // an account's references. The same entries as before, in an order both searches can use.
  `DROP INDEX orders_account_phone`,
  `CREATE INDEX orders_phone_account ON orders (phone_national, account_id)`,
  `ALTER TABLE orders DROP CONSTRAINT orders_account_id_reference_key`,
  `ALTER TABLE orders ADD CONSTRAINT orders_reference_account_key UNIQUE (reference, account_id)`,
  `INSERT INTO stats_order_days (day, bundle_id, network_name, shard, orders, successful, sales, compacted)
    SELECT (created_at AT TIME ZONE 'UTC')::date, bundle_id, network_name, account_id % 16, count(*),
      count(*) FILTER (WHERE status = 'successful'), coalesce(sum(amount) FILTER (WHERE status = 'successful'), 0),
      true
    FROM orders WHERE mode = 'live' GROUP BY 1, 2, 3, 4`,
  `INSERT INTO stats_ledger_days (day, shard, refunds, funding, commissions, compacted)
    SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.account_id % 16,
      coalesce(sum(l.amount) FILTER (WHERE l.reason = 'refund'), 0),
      coalesce(sum(l.amount) FILTER (WHERE l.reason = 'funding'), 0),
      coalesce(sum(l.amount) FILTER (WHERE l.reason IN ('commission', 'commission_reversal')), 0), true
    FROM ledger_entries l JOIN accounts a ON a.id = l.account_id
    WHERE l.reason IN ('funding', 'refund', 'commission', 'commission_reversal') AND a.mode <> 'test'
    GROUP BY 1, 2`
]

/**
 * Folds the rows appended since the last pass into one row per key, for every key that has new
 * rows. One statement per table: the rows it deletes are those its snapshot sees, and it inserts
 * their sums, so a row appended meanwhile stays for the next pass and nothing is counted twice
 * or lost, whichever process runs a pass and however many run at once.
 */
export const compactStats: ReadonlyArray<string> = [
  `WITH keys AS (
    SELECT DISTINCT day, bundle_id, network_name, shard FROM stats_order_days WHERE NOT compacted
  ),
  gone AS (
    DELETE FROM stats_order_days s USING keys k
    WHERE s.day = k.day AND s.bundle_id = k.bundle_id AND s.network_name = k.network_name AND s.shard = k.shard
    RETURNING s.day, s.bundle_id, s.network_name, s.shard, s.orders, s.successful, s.sales
  )
  INSERT INTO stats_order_days (day, bundle_id, network_name, shard, orders, successful, sales, compacted)
  SELECT day, bundle_id, network_name, shard, sum(orders), sum(successful), sum(sales), true
  FROM gone GROUP BY 1, 2, 3, 4`,
  `WITH keys AS (SELECT DISTINCT day, shard FROM stats_ledger_days WHERE NOT compacted),
  gone AS (
    DELETE FROM stats_ledger_days s USING keys k WHERE s.day = k.day AND s.shard = k.shard
    RETURNING s.day, s.shard, s.refunds, s.funding, s.commissions
  )
  INSERT INTO stats_ledger_days (day, shard, refunds, funding, commissions, compacted)
  SELECT day, shard, sum(refunds), sum(funding), sum(commissions), true FROM gone GROUP BY 1, 2`
]
