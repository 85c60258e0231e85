/**
 * The database schema, as ordered migrations applied at start.
 *
 * Timestamps keep milliseconds, the precision the API shows, so a timestamp read from a
 * response and sent back as a list bound matches the row exactly.
 *
 * Each migration is a list of single statements (not one multi-statement text), so it
 * runs the same on every driver. The migrator runs them in one transaction under a
 * table lock, so several server processes starting together apply each migration once.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { orderStatusCounts } from "./OrderStatusCounts.js"
import { statsDays } from "./StatsDays.js"

const initial = [
  `CREATE TABLE price_groups (
    id serial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    created_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE accounts (
    id serial PRIMARY KEY,
    name text NOT NULL,
    price_group_id integer REFERENCES price_groups (id),
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    webhook_url text,
    webhook_secret text,
    limit_all integer CHECK (limit_all > 0),
    limit_orders integer CHECK (limit_orders > 0),
    limit_balance integer CHECK (limit_balance > 0),
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    updated_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE api_keys (
    id serial PRIMARY KEY,
    account_id integer NOT NULL REFERENCES accounts (id),
    key_hash text NOT NULL UNIQUE,
    prefix text NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    last_used_at timestamptz(3),
    revoked_at timestamptz(3)
  )`,
  `CREATE INDEX api_keys_account ON api_keys (account_id)`,
  // A CHECK keeps every balance non-negative even if application code were wrong.
  `CREATE TABLE wallets (
    account_id integer NOT NULL REFERENCES accounts (id),
    kind text NOT NULL CHECK (kind IN ('main', 'referral', 'agent')),
    balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
    PRIMARY KEY (account_id, kind)
  )`,
  `CREATE TABLE networks (
    id serial PRIMARY KEY,
    slug text NOT NULL UNIQUE,
    name text NOT NULL,
    color text NOT NULL,
    delivery text NOT NULL,
    active boolean NOT NULL DEFAULT true,
    sort_order integer NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    updated_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE bundles (
    id serial PRIMARY KEY,
    network_id integer NOT NULL REFERENCES networks (id),
    key text NOT NULL UNIQUE,
    size text NOT NULL,
    name text NOT NULL,
    badge text NOT NULL DEFAULT '',
    base_price bigint NOT NULL CHECK (base_price > 0),
    active boolean NOT NULL DEFAULT true,
    sort_order integer NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    updated_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX bundles_network ON bundles (network_id, sort_order)`,
  `CREATE TABLE bundle_prices (
    bundle_id integer NOT NULL REFERENCES bundles (id),
    price_group_id integer NOT NULL REFERENCES price_groups (id),
    price bigint NOT NULL CHECK (price > 0),
    PRIMARY KEY (bundle_id, price_group_id)
  )`,
  // Labels are copied onto the order so that later catalogue edits never rewrite history.
  // A unique (account_id, reference) makes concurrent duplicates wait for, then find, the first.
  `CREATE TABLE orders (
    id bigserial PRIMARY KEY,
    order_number text NOT NULL UNIQUE,
    account_id integer NOT NULL REFERENCES accounts (id),
    bundle_id integer NOT NULL REFERENCES bundles (id),
    bundle_label text NOT NULL,
    network_name text NOT NULL,
    phone_number text NOT NULL,
    phone_national text NOT NULL,
    amount bigint NOT NULL CHECK (amount > 0),
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'successful', 'failed')),
    reference text,
    failure_reason text,
    next_check_at timestamptz(3),
    checks integer NOT NULL DEFAULT 0,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    settled_at timestamptz(3),
    UNIQUE (account_id, reference),
    CHECK ((status = 'pending') = (settled_at IS NULL))
  )`,
  `CREATE INDEX orders_account_created ON orders (account_id, created_at DESC, id DESC)`,
  `CREATE INDEX orders_account_phone ON orders (account_id, phone_national)`,
  `CREATE INDEX orders_pending_due ON orders (next_check_at) WHERE status = 'pending'`,
  `CREATE TABLE ledger_entries (
    id bigserial PRIMARY KEY,
    account_id integer NOT NULL,
    wallet text NOT NULL,
    amount bigint NOT NULL CHECK (amount <> 0),
    balance_after bigint NOT NULL CHECK (balance_after >= 0),
    reason text NOT NULL CHECK (reason IN ('funding', 'adjustment', 'order', 'refund')),
    order_id bigint REFERENCES orders (id),
    note text,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    FOREIGN KEY (account_id, wallet) REFERENCES wallets (account_id, kind),
    CHECK ((reason IN ('order', 'refund')) = (order_id IS NOT NULL))
  )`,
  `CREATE INDEX ledger_entries_wallet ON ledger_entries (account_id, wallet, id DESC)`,
  // The database itself refuses a second debit or a second refund for one order.
  `CREATE UNIQUE INDEX ledger_entries_one_debit ON ledger_entries (order_id) WHERE reason = 'order'`,
  `CREATE UNIQUE INDEX ledger_entries_one_refund ON ledger_entries (order_id) WHERE reason = 'refund'`,
  `CREATE TABLE webhook_events (
    id text PRIMARY KEY,
    account_id integer NOT NULL REFERENCES accounts (id),
    type text NOT NULL,
    body text NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    next_attempt_at timestamptz(3) NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    delivered_at timestamptz(3),
    abandoned_at timestamptz(3)
  )`,
  `CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at)
    WHERE delivered_at IS NULL AND abandoned_at IS NULL`
]

// Rate-limit counts are scratch data: unlogged (no WAL), so a crash may forget the last
// minute's counts, never anything that matters more.
const rateLimits = [
  `CREATE UNLOGGED TABLE rate_limit_counts (
    subject text NOT NULL,
    scope text NOT NULL,
    bucket bigint NOT NULL,
    count integer NOT NULL,
    PRIMARY KEY (subject, scope, bucket)
  )`,
  // One call decides and counts atomically for every process on the database: a per-subject
  // advisory lock serialises the decisions of one subject, and each query inside the function
  // sees what the previous holder of the lock committed. Returns the counts of the window as
  // they were before this request, by scope: {"orders": [[second, count], ...], ...}.
  `CREATE FUNCTION bundles_rate_limit(p_subject text, p_scopes text[], p_limits integer[], p_count boolean)
  RETURNS TABLE (now_ms bigint, counts jsonb)
  LANGUAGE plpgsql AS $$
  DECLARE
    v_now_ms bigint;
    v_second bigint;
    v_counts jsonb;
    v_admit boolean := true;
  BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_subject, 0));
    v_now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
    v_second := v_now_ms / 1000;
    SELECT coalesce(jsonb_object_agg(per_scope.scope, per_scope.buckets), '{}'::jsonb) INTO v_counts
    FROM (
      SELECT c.scope, jsonb_agg(jsonb_build_array(c.bucket, c.count) ORDER BY c.bucket) AS buckets
      FROM rate_limit_counts c
      WHERE c.subject = p_subject AND c.scope = ANY (p_scopes) AND c.bucket > v_second - 61
      GROUP BY c.scope
    ) per_scope;
    FOR i IN 1 .. coalesce(array_length(p_scopes, 1), 0) LOOP
      IF (
        SELECT coalesce(sum((b ->> 1)::integer), 0) FROM jsonb_array_elements(v_counts -> p_scopes[i]) b
      ) >= p_limits[i] THEN
        v_admit := false;
      END IF;
    END LOOP;
    IF p_count AND v_admit THEN
      INSERT INTO rate_limit_counts AS c (subject, scope, bucket, count)
      SELECT p_subject, s, v_second, 1 FROM unnest(p_scopes) AS s
      ON CONFLICT (subject, scope, bucket) DO UPDATE SET count = c.count + 1;
    END IF;
    RETURN QUERY SELECT v_now_ms, v_counts;
  END
  $$`
]

// Claiming an event leases it: other processes leave it alone until the lease runs out, and the
// leases held per URL bound how many attempts one receiver has in flight.
const webhookLeases = [
  `ALTER TABLE webhook_events ADD COLUMN leased_until timestamptz(3)`
]

// Idempotency keys of admin requests that move money: written in the transaction of the
// movement, with the result to replay; kept for Idempotency.RETENTION_DAYS days.
const adminIdempotencyKeys = [
  `CREATE TABLE admin_idempotency_keys (
    key text PRIMARY KEY,
    endpoint text NOT NULL,
    target text NOT NULL,
    fingerprint text NOT NULL,
    response text,
    created_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX admin_idempotency_keys_created ON admin_idempotency_keys (created_at)`
]

// The event feed and delivery records (GET /events, GET /webhooks/deliveries). Every event is
// kept, also for accounts without a webhook URL (`queued_at` NULL: no delivery). Each account
// numbers its events (`seq`) from a counter on its row, taken in the transaction that writes the
// event: the row lock holds the next writer until this one ends, so an account's events commit
// in their order and a reader's cursor never has an event appear behind it.
const eventFeed = [
  `ALTER TABLE accounts ADD COLUMN event_seq bigint NOT NULL DEFAULT 0`,
  `ALTER TABLE webhook_events ADD COLUMN seq bigint`,
  `UPDATE webhook_events e SET seq = o.n
    FROM (SELECT id, row_number() OVER (PARTITION BY account_id ORDER BY created_at, id) AS n FROM webhook_events) o
    WHERE o.id = e.id`,
  `UPDATE accounts a SET event_seq = m.n FROM (SELECT account_id, max(seq) AS n FROM webhook_events GROUP BY account_id) m
    WHERE m.account_id = a.id`,
  `ALTER TABLE webhook_events ALTER COLUMN seq SET NOT NULL`,
  `CREATE UNIQUE INDEX webhook_events_feed ON webhook_events (account_id, seq)`,
  `ALTER TABLE webhook_events ALTER COLUMN next_attempt_at DROP NOT NULL, ALTER COLUMN next_attempt_at DROP DEFAULT`,
  // The retry window runs from queued_at, which a resend moves; url and last_status are the last attempt's.
  `ALTER TABLE webhook_events ADD COLUMN queued_at timestamptz(3), ADD COLUMN url text,
    ADD COLUMN last_status integer, ADD COLUMN last_attempt_at timestamptz(3)`,
  `UPDATE webhook_events SET queued_at = created_at`,
  // Every account has a signing secret from now on (new ones get one when created), so a receiver
  // can be set up before the URL is: whsec_ and 64 hex characters (valid base64) from two UUIDs.
  `UPDATE accounts SET webhook_secret = 'whsec_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
    WHERE webhook_secret IS NULL`,
  `CREATE INDEX webhook_events_deliveries ON webhook_events (account_id, queued_at DESC, seq DESC)
    WHERE queued_at IS NOT NULL`
]

// Fulfilment through upstreams of this same API. `upstream_bundles` maps our bundles to each
// upstream's bundle ids (written by the catalogue sync); `upstream_orders` records, per order and
// upstream, whether that upstream may hold the order, so a retry, a crash or a failover never
// buys twice: 'placing' (a request may have reached it), 'placed' (it holds the order under
// its own number), 'clear' (it certainly does not), 'successful' / 'failed' (it settled).
const upstreams = [
  `CREATE TABLE upstream_bundles (
    bundle_id integer NOT NULL REFERENCES bundles (id),
    upstream text NOT NULL,
    upstream_bundle_id integer NOT NULL,
    upstream_price bigint NOT NULL CHECK (upstream_price > 0),
    active boolean NOT NULL,
    synced_at timestamptz(3) NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, upstream),
    UNIQUE (upstream, upstream_bundle_id)
  )`,
  `CREATE TABLE upstream_orders (
    order_number text NOT NULL REFERENCES orders (order_number),
    upstream text NOT NULL,
    state text NOT NULL CHECK (state IN ('placing', 'placed', 'clear', 'successful', 'failed')),
    upstream_order_number text,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    updated_at timestamptz(3) NOT NULL DEFAULT now(),
    PRIMARY KEY (order_number, upstream)
  )`
]

// The web dashboard: users (one per account) with their password hashes, one-time email
// tokens and sessions (only SHA-256 hashes of both), the email outbox, payments that fund a
// wallet, and key names. A payment credits its wallet once: a partial unique index on the
// ledger's payment_id refuses a second credit, and (account, idempotency key) is unique.
const dashboard = [
  `ALTER TABLE api_keys ADD COLUMN name text`,
  `CREATE TABLE users (
    id serial PRIMARY KEY,
    account_id integer NOT NULL UNIQUE REFERENCES accounts (id),
    name text NOT NULL,
    email text NOT NULL UNIQUE CHECK (email = lower(email)),
    phone text NOT NULL,
    password_hash text NOT NULL,
    email_verified_at timestamptz(3),
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    updated_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE user_tokens (
    token_hash text PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id),
    purpose text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
    expires_at timestamptz(3) NOT NULL,
    used_at timestamptz(3),
    created_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX user_tokens_user ON user_tokens (user_id, purpose)`,
  `CREATE TABLE sessions (
    id bigserial PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    user_id integer NOT NULL REFERENCES users (id),
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
    expires_at timestamptz(3) NOT NULL,
    ended_at timestamptz(3)
  )`,
  `CREATE INDEX sessions_user ON sessions (user_id) WHERE ended_at IS NULL`,
  `CREATE TABLE mail_outbox (
    id bigserial PRIMARY KEY,
    to_address text NOT NULL,
    kind text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    link text,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    sent_at timestamptz(3)
  )`,
  `CREATE INDEX mail_outbox_to ON mail_outbox (to_address, id DESC)`,
  `CREATE TABLE payments (
    id bigserial PRIMARY KEY,
    payment_number text NOT NULL UNIQUE,
    account_id integer NOT NULL REFERENCES accounts (id),
    idempotency_key text NOT NULL,
    fingerprint text NOT NULL,
    method text NOT NULL CHECK (method IN ('mtn_momo', 'telecel_cash', 'airteltigo_money', 'manual_transfer')),
    amount bigint NOT NULL CHECK (amount > 0),
    payer_number text,
    note text,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'successful', 'failed')),
    provider_reference text,
    failure_reason text,
    next_check_at timestamptz(3),
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    settled_at timestamptz(3),
    UNIQUE (account_id, idempotency_key),
    CHECK ((status = 'pending') = (settled_at IS NULL))
  )`,
  `CREATE INDEX payments_account_created ON payments (account_id, created_at DESC, id DESC)`,
  `CREATE INDEX payments_pending_due ON payments (next_check_at) WHERE status = 'pending'`,
  `ALTER TABLE ledger_entries ADD COLUMN payment_id bigint REFERENCES payments (id)`,
  `CREATE UNIQUE INDEX ledger_entries_one_payment ON ledger_entries (payment_id) WHERE payment_id IS NOT NULL`
]

// Test and live modes. A test key acts on a test account of its own: a hidden account row linked to
// the live one (`live_account_id`), with its own wallets, ledger, orders and events, so every query
// already keyed by account keeps the two modes apart. Keys stay on the live account with their
// mode; orders carry the mode of the account that placed them, which picks the provider.
const modes = [
  `ALTER TABLE accounts ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test')),
    ADD COLUMN live_account_id integer REFERENCES accounts (id),
    ADD CONSTRAINT accounts_test_has_live CHECK ((mode = 'test') = (live_account_id IS NOT NULL))`,
  `CREATE UNIQUE INDEX accounts_one_test ON accounts (live_account_id) WHERE live_account_id IS NOT NULL`,
  `ALTER TABLE api_keys ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'))`,
  `ALTER TABLE orders ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'))`,
  // Where each account's events are delivered and with which secret: a test account's go to its
  // live account's URL, signed with its secret, marked "livemode": false.
  `CREATE VIEW webhook_targets AS
    SELECT a.id, a.mode,
      CASE WHEN a.mode = 'test' THEN l.webhook_url ELSE a.webhook_url END AS webhook_url,
      CASE WHEN a.mode = 'test' THEN l.webhook_secret ELSE a.webhook_secret END AS webhook_secret
    FROM accounts a LEFT JOIN accounts l ON l.id = a.live_account_id`,
  // The last balance read at each upstream with a low-balance threshold. `low` changes under a
  // row lock, so among several server processes exactly one sees each crossing and raises its alert.
  `CREATE TABLE upstream_balances (
    upstream text PRIMARY KEY,
    balance bigint NOT NULL,
    threshold bigint NOT NULL,
    low boolean NOT NULL,
    checked_at timestamptz(3) NOT NULL DEFAULT now(),
    changed_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  // The upstreams' webhook events received, by id: a replay (or the upstream's retry) is
  // recognised and does nothing.
  `CREATE TABLE upstream_webhook_events (
    upstream text NOT NULL,
    event_id text NOT NULL,
    type text NOT NULL,
    order_number text,
    received_at timestamptz(3) NOT NULL DEFAULT now(),
    PRIMARY KEY (upstream, event_id)
  )`
]

// The operator console: operators with their own passwords and sessions (token hashes only),
// and the action log, one row per change made through the admin API, written in the change's
// transaction. The console's charts and webhook health read orders, the ledger and webhook
// events by time: the indexes below keep those reads to the range asked for.
const console = [
  `CREATE TABLE operators (
    id serial PRIMARY KEY,
    email text NOT NULL UNIQUE CHECK (email = lower(email)),
    name text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    updated_at timestamptz(3) NOT NULL DEFAULT now(),
    disabled_at timestamptz(3)
  )`,
  `CREATE TABLE operator_sessions (
    id bigserial PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    operator_id integer NOT NULL REFERENCES operators (id),
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
    expires_at timestamptz(3) NOT NULL,
    ended_at timestamptz(3)
  )`,
  `CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id) WHERE ended_at IS NULL`,
  `CREATE TABLE operator_actions (
    id bigserial PRIMARY KEY,
    at timestamptz(3) NOT NULL DEFAULT now(),
    actor_kind text NOT NULL CHECK (actor_kind IN ('token', 'operator')),
    operator_id integer REFERENCES operators (id),
    action text NOT NULL,
    target_kind text NOT NULL,
    target_id text,
    account_id integer,
    summary text NOT NULL,
    detail jsonb NOT NULL DEFAULT '{}',
    request_id text,
    CHECK ((actor_kind = 'operator') = (operator_id IS NOT NULL))
  )`,
  `CREATE INDEX operator_actions_operator ON operator_actions (operator_id, id DESC)`,
  `CREATE INDEX operator_actions_action ON operator_actions (action, id DESC)`,
  `CREATE INDEX operator_actions_target ON operator_actions (target_kind, target_id, id DESC)`,
  `CREATE INDEX operator_actions_account ON operator_actions (account_id, id DESC) WHERE account_id IS NOT NULL`,
  `CREATE INDEX orders_created ON orders (created_at)`,
  `CREATE INDEX orders_pending_created ON orders (created_at) WHERE status = 'pending'`,
  `CREATE INDEX ledger_entries_created ON ledger_entries (created_at) WHERE reason IN ('funding', 'refund')`,
  `CREATE INDEX webhook_events_abandoned ON webhook_events (account_id) WHERE abandoned_at IS NOT NULL`,
  `CREATE INDEX webhook_events_queued ON webhook_events (account_id, queued_at)
    WHERE queued_at IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL`,
  `CREATE INDEX webhook_events_last_attempt ON webhook_events (account_id, last_attempt_at DESC)
    WHERE last_attempt_at IS NOT NULL`
]

// Email becomes a queue: a message is written unsent in the caller's transaction and a sender
// delivers it after commit, with retries. Rows from before were delivered at once (sent_at set).
const mailQueue = [
  `ALTER TABLE mail_outbox ADD COLUMN attempts integer NOT NULL DEFAULT 0`,
  `ALTER TABLE mail_outbox ADD COLUMN next_attempt_at timestamptz(3)`,
  `ALTER TABLE mail_outbox ADD COLUMN last_error text`,
  `CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND next_attempt_at IS NOT NULL`
]

// Figures the metrics scrape cheaply. The refunded live orders are a counter kept in each refund's
// own transaction (a scrape reads one row, however long the ledger), started from the ledger as it
// is. Failed emails and the emails sent lately get partial indexes; queued ones already have one.
const scrapeFigures = [
  `CREATE TABLE figures (name text PRIMARY KEY, value bigint NOT NULL CHECK (value >= 0))`,
  `INSERT INTO figures (name, value)
    SELECT 'refunded_live_orders', count(*) FROM ledger_entries l JOIN orders o ON o.id = l.order_id
    WHERE l.reason = 'refund' AND o.mode = 'live'`,
  `CREATE INDEX mail_outbox_failed ON mail_outbox (id) WHERE sent_at IS NULL AND next_attempt_at IS NULL AND attempts > 0`,
  `CREATE INDEX mail_outbox_sent ON mail_outbox (sent_at) WHERE sent_at IS NOT NULL`
]

// A mobile money charge can wait for a one-time code the wallet sends the payer (Paystack's
// send_otp): while it does, the payment keeps what the gateway displayed; settling clears it.
const paymentCodes = [
  `ALTER TABLE payments ADD COLUMN code_prompt text`
]

// GET /orders answers every page with the account's total; counting an account's orders costs
// more the more it has, so each account keeps its count, raised by the placement's statement with
// the insert it counts (the only place orders are written; none is ever deleted), started from
// the orders as they are.
const orderCounts = [
  `ALTER TABLE accounts ADD COLUMN order_count bigint NOT NULL DEFAULT 0 CHECK (order_count >= 0)`,
  `UPDATE accounts a SET order_count = c.n FROM (SELECT account_id, count(*) AS n FROM orders GROUP BY account_id) c
    WHERE c.account_id = a.id`
]

// The outbox's due index held every event never delivered, with the events of accounts that
// have no webhook URL, which are never due (no next attempt) and never delivered: it grew with
// every order, and each order wrote two entries to it. It now holds only events with an attempt
// to come, the rows the delivery worker looks for.
const dueEvents = [
  `DROP INDEX webhook_events_due`,
  `CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at)
    WHERE next_attempt_at IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL`
]

// Operators get roles: an owner manages operators, an operator runs the business. The earliest
// operator still enabled becomes the owner (whoever set the console up); the rest are operators.
// Browsers a user or operator signed in with are remembered (token hashes only), so sign-in from
// them is throttled apart from guesses made elsewhere. A payment the gateway reverses after it was
// credited records when and why, for the operator.
const operatorRoles = [
  `ALTER TABLE operators ADD COLUMN role text NOT NULL DEFAULT 'operator' CHECK (role IN ('owner', 'operator'))`,
  `UPDATE operators SET role = 'owner' WHERE id = (SELECT min(id) FROM operators WHERE disabled_at IS NULL)`,
  `CREATE TABLE known_browsers (
    token_hash text PRIMARY KEY,
    user_id integer REFERENCES users (id),
    operator_id integer REFERENCES operators (id),
    created_at timestamptz(3) NOT NULL DEFAULT now(),
    last_used_at timestamptz(3) NOT NULL DEFAULT now(),
    expires_at timestamptz(3) NOT NULL,
    CHECK ((user_id IS NULL) <> (operator_id IS NULL))
  )`,
  `CREATE INDEX known_browsers_user ON known_browsers (user_id) WHERE user_id IS NOT NULL`,
  `CREATE INDEX known_browsers_operator ON known_browsers (operator_id) WHERE operator_id IS NOT NULL`,
  `ALTER TABLE payments ADD COLUMN reversed_at timestamptz(3)`,
  `ALTER TABLE payments ADD COLUMN reversal_reason text`
]

// The referral and agent programmes. An account may sell under an agent (`agent_id`) and may have
// a referrer (`referred_by`); each has a code others register with. The operator's referral rate
// is one row, in basis points. A commission is a ledger entry naming its order, credited to the
// earner's agent or referral wallet, at most once per order and wallet (and reversed at most once);
// a transfer moves earnings to main as two entries naming it.
const commissions = [
  `ALTER TABLE accounts ADD COLUMN agent_id integer REFERENCES accounts (id),
    ADD COLUMN referred_by integer REFERENCES accounts (id),
    ADD COLUMN referral_code text NOT NULL DEFAULT upper(substr(md5(random()::text || clock_timestamp()::text), 1, 10)),
    ADD CONSTRAINT accounts_not_own_agent CHECK (agent_id <> id),
    ADD CONSTRAINT accounts_not_own_referrer CHECK (referred_by <> id)`,
  `CREATE UNIQUE INDEX accounts_referral_code ON accounts (referral_code)`,
  `CREATE INDEX accounts_agent ON accounts (agent_id) WHERE agent_id IS NOT NULL`,
  `CREATE INDEX accounts_referrer ON accounts (referred_by) WHERE referred_by IS NOT NULL`,
  `CREATE TABLE commission_rates (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    referral_bps integer NOT NULL DEFAULT 0 CHECK (referral_bps BETWEEN 0 AND 10000),
    updated_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `INSERT INTO commission_rates (id) VALUES (true)`,
  `CREATE TABLE wallet_transfers (
    id bigserial PRIMARY KEY,
    account_id integer NOT NULL REFERENCES accounts (id),
    from_wallet text NOT NULL CHECK (from_wallet IN ('referral', 'agent')),
    amount bigint NOT NULL CHECK (amount > 0),
    created_at timestamptz(3) NOT NULL DEFAULT now()
  )`,
  `ALTER TABLE ledger_entries ADD COLUMN transfer_id bigint REFERENCES wallet_transfers (id)`,
  `ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_reason_check`,
  `ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_check`,
  `ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_reason_check
    CHECK (reason IN ('funding', 'adjustment', 'order', 'refund', 'commission', 'commission_reversal', 'transfer'))`,
  `ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_order_check
    CHECK ((reason IN ('order', 'refund', 'commission', 'commission_reversal')) = (order_id IS NOT NULL))`,
  `ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_transfer_check
    CHECK ((reason = 'transfer') = (transfer_id IS NOT NULL))`,
  `ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_commission_wallet
    CHECK (reason NOT IN ('commission', 'commission_reversal') OR wallet IN ('referral', 'agent'))`,
  `CREATE UNIQUE INDEX ledger_entries_one_commission ON ledger_entries (order_id, wallet) WHERE reason = 'commission'`,
  `CREATE UNIQUE INDEX ledger_entries_one_reversal ON ledger_entries (order_id, wallet)
    WHERE reason = 'commission_reversal'`,
  `CREATE UNIQUE INDEX ledger_entries_transfer_sides ON ledger_entries (transfer_id, wallet) WHERE transfer_id IS NOT NULL`,
  `CREATE INDEX ledger_entries_commissions ON ledger_entries (created_at) WHERE reason IN ('commission', 'commission_reversal')`,
  `INSERT INTO figures (name, value) VALUES ('live_commissions', 0), ('live_commission_reversals', 0)`
]

const statements = (list: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(list, (text) => sql.unsafe(text), { discard: true }))

/** Every migration, keyed `NNNN_name`. */
export const migrations = {
  "0001_initial": statements(initial),
  "0002_rate_limits": statements(rateLimits),
  "0003_webhook_leases": statements(webhookLeases),
  "0004_admin_idempotency_keys": statements(adminIdempotencyKeys),
  "0005_event_feed": statements(eventFeed),
  "0006_upstreams": statements(upstreams),
  "0008_dashboard": statements(dashboard),
  "0010_console": statements(console),
  "0011_mail_queue": statements(mailQueue),
  "0012_modes": statements(modes),
  "0014_payment_codes": statements(paymentCodes),
  "0015_scrape_figures": statements(scrapeFigures),
  "0016_order_counts": statements(orderCounts),
  "0017_due_events": statements(dueEvents),
  "0018_operator_roles": statements(operatorRoles),
  "0019_commissions": statements(commissions),
  "0022_stats_days": statements(statsDays),
  "0023_order_status_counts": statements(orderStatusCounts)
}

/** The table recording which migrations a database has. */
export const MIGRATIONS_TABLE = "bundles_migrations"

/** The number of the newest migration this build knows, which a ready database has applied. */
export const latest = (): number => Math.max(...Object.keys(migrations).map((key) => Number(key.slice(0, 4))))

/** Applies every pending migration; safe to run from several processes at once. */
export const migrate = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: MIGRATIONS_TABLE
})
