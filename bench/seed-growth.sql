-- A year of history for `pnpm bench:growth` (bench/growth.mjs), by SQL, on Postgres.
--
-- Run after the server has migrated the database, imported the catalogue and created the live
-- accounts named by {{ACCOUNTS}} (the first gets {{SHARE}} of the orders, the rest share what is
-- left). Writes {{ORDERS}} orders over the last 365 days (one in 50 failed and refunded, one in
-- four with a reference), a funding entry per account, each order's debit and each failure's
-- refund with the running balance, the wallets' balances, the accounts' kept order counts (all
-- and by status), the refund counter and the console's daily rollups, so the ledger audit is
-- clean and every kept figure equals the rows. Triggers and foreign-key checks are off while it
-- writes (session_replication_role), the kept figures being computed here the way the
-- migrations start them. Webhook events are not written: the seeded orders have none in the event feed.
BEGIN;
SET LOCAL session_replication_role = replica;

CREATE TEMP TABLE seed_accounts ON COMMIT DROP AS
  SELECT id, row_number() OVER (ORDER BY id) - 1 AS k, count(*) OVER () AS n
  FROM accounts WHERE id = ANY ('{{ACCOUNTS}}'::int[]);

CREATE TEMP TABLE seed_bundles ON COMMIT DROP AS
  SELECT b.id, b.name, n.name AS network_name, b.base_price, row_number() OVER (ORDER BY b.id) - 1 AS k,
    count(*) OVER () AS n
  FROM bundles b JOIN networks n ON n.id = b.network_id WHERE b.active AND n.active;

INSERT INTO orders (order_number, account_id, bundle_id, bundle_label, network_name, phone_number, phone_national,
  amount, status, reference, failure_reason, created_at, settled_at, mode)
SELECT 'ORD-S' || lpad(i::text, 11, '0'), a.id, b.id, b.name, b.network_name,
  '024' || lpad((i % 10000000)::text, 7, '0'), '24' || lpad((i % 10000000)::text, 7, '0'), b.base_price,
  CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'successful' END,
  CASE WHEN i % 4 = 0 THEN 'seed-' || i END,
  CASE WHEN i % 50 = 0 THEN 'Seeded failure' END,
  t, t + interval '2 seconds', 'live'
FROM generate_series(1, {{ORDERS}}) AS i
CROSS JOIN LATERAL (SELECT now() - interval '365 days' * (1 - i::float8 / {{ORDERS}}) AS t) AS at
JOIN seed_accounts a ON a.k = CASE
  WHEN (i % 1000) < {{SHARE}} * 1000 OR (SELECT max(n) FROM seed_accounts) = 1 THEN 0
  ELSE 1 + i % ((SELECT max(n) FROM seed_accounts) - 1) END
JOIN seed_bundles b ON b.k = (i * 7) % b.n;

-- Each account is funded first with what its orders cost, plus 10,000 cedis left over.
CREATE TEMP TABLE seed_funding ON COMMIT DROP AS
  SELECT a.id AS account_id,
    coalesce(sum(o.amount) FILTER (WHERE o.status <> 'failed'), 0) + 1000000 AS amount
  FROM seed_accounts a LEFT JOIN orders o ON o.account_id = a.id AND o.order_number LIKE 'ORD-S%'
  GROUP BY a.id;

INSERT INTO ledger_entries (account_id, wallet, amount, balance_after, reason, note, created_at)
SELECT account_id, 'main', amount, amount, 'funding', 'seeded', now() - interval '366 days' FROM seed_funding;

INSERT INTO ledger_entries (account_id, wallet, amount, balance_after, reason, order_id, created_at)
SELECT e.account_id, 'main', e.amount,
  f.amount + sum(e.amount) OVER (PARTITION BY e.account_id ORDER BY e.created_at, e.order_id, e.reason),
  e.reason, e.order_id, e.created_at
FROM (
  SELECT account_id, -amount AS amount, 'order' AS reason, id AS order_id, created_at
  FROM orders WHERE order_number LIKE 'ORD-S%'
  UNION ALL
  SELECT account_id, amount, 'refund', id, settled_at
  FROM orders WHERE order_number LIKE 'ORD-S%' AND status = 'failed'
) AS e
JOIN seed_funding f USING (account_id);

UPDATE wallets w SET balance = l.total
FROM (SELECT account_id, sum(amount) AS total FROM ledger_entries WHERE wallet = 'main' GROUP BY account_id) AS l
WHERE w.account_id = l.account_id AND w.kind = 'main' AND w.account_id IN (SELECT id FROM seed_accounts);

UPDATE accounts a SET order_count = c.n
FROM (SELECT account_id, count(*) AS n FROM orders GROUP BY account_id) AS c
WHERE c.account_id = a.id;

-- The kept counts by status, started again from the rows (as migration 0023 does).
DELETE FROM order_status_counts;
UPDATE accounts SET delivered_count = 0;
INSERT INTO order_status_counts (account_id, successful, failed, compacted)
  SELECT account_id, count(*) FILTER (WHERE status = 'successful'), count(*) FILTER (WHERE status = 'failed'), true
  FROM orders GROUP BY account_id;

UPDATE figures SET value = (
  SELECT count(*) FROM ledger_entries l JOIN orders o ON o.id = l.order_id WHERE l.reason = 'refund' AND o.mode = 'live'
) WHERE name = 'refunded_live_orders';

-- The console's rollups, started again from the rows (as migration 0022 does).
DELETE FROM stats_order_days;
DELETE FROM stats_ledger_days;
INSERT INTO stats_order_days (day, bundle_id, network_name, shard, orders, successful, sales, compacted)
  SELECT (created_at AT TIME ZONE 'UTC')::date, bundle_id, network_name, account_id % 16, count(*),
    count(*) FILTER (WHERE status = 'successful'), coalesce(sum(amount) FILTER (WHERE status = 'successful'), 0),
    true
  FROM orders WHERE mode = 'live' GROUP BY 1, 2, 3, 4;
INSERT INTO stats_ledger_days (day, shard, refunds, funding, commissions, compacted)
  SELECT (l.created_at AT TIME ZONE 'UTC')::date, l.account_id % 16,
    coalesce(sum(l.amount) FILTER (WHERE l.reason = 'refund'), 0),
    coalesce(sum(l.amount) FILTER (WHERE l.reason = 'funding'), 0),
    coalesce(sum(l.amount) FILTER (WHERE l.reason IN ('commission', 'commission_reversal')), 0), true
  FROM ledger_entries l JOIN accounts a ON a.id = l.account_id
  WHERE l.reason IN ('funding', 'refund', 'commission', 'commission_reversal') AND a.mode <> 'test'
  GROUP BY 1, 2;

COMMIT;
