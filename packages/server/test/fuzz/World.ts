/**
 * The world the fuzzing runs in (accounts, keys, catalogue, orders set up before it), and its
 * money-related state, as the database and the admin API show it.
 */
import type { Account, Bundle } from "@databundle/contract"
import type { Target } from "@databundle/core/testing"
import { type HttpClient, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { assert } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import {
  ADMIN_TOKEN,
  adminClient,
  mailed,
  newAccount,
  raw,
  resellerClient,
  seedCatalog,
  serverLayer
} from "../Harness.js"
import { probe, send } from "./Probe.js"

export const PUBLIC = "/api/v1"
export const ADMIN = "/admin/v1"
export const DASHBOARD = "/dashboard/v1"
export const CONSOLE = "/console/v1"
export const WALLETS = ["main", "referral", "agent"] as const
export { EVENT_TYPES } from "@databundle/contract/EventTypes"

export interface Account {
  readonly id: number
  readonly key: string
  readonly keyId: number
}

export interface PlacedOrder {
  readonly orderNumber: string
  readonly bundleId: number
  readonly phone: string
  readonly reference: string
}

/** A dashboard user signed in before fuzzing, with what its pages name. */
export interface Holder {
  readonly email: string
  readonly accountId: number
  readonly cookie: string
  readonly csrf: string
  readonly orderNumber: string
  readonly paymentNumber: string
  readonly keyId: number
  readonly eventId: string
}

/** An operator signed in to the console before fuzzing. */
export interface Staff {
  readonly id: number
  readonly email: string
  readonly cookie: string
  readonly csrf: string
}

/** What the generators draw on: the accounts, keys, catalogue and orders set up before fuzzing. */
export interface World {
  readonly port: number
  readonly sql: SqlClient.SqlClient
  /** Funded in all three wallets; has a successful, a failed (refunded) and a pending order. */
  readonly rich: Account
  /** Another account with an order: its order must stay invisible to `rich`. */
  readonly other: Account
  /** An account with empty wallets. */
  readonly broke: Account
  /** A signed-in dashboard user. */
  readonly holder: Holder
  /** A signed-in console operator. */
  readonly operator: Staff
  /** A key of `rich`, revoked. */
  readonly revokedKey: string
  /** The key of a suspended account. */
  readonly suspendedKey: string
  readonly accountIds: ReadonlyArray<number>
  /** The outbox's emails (kept: without SMTP none can be requeued). */
  readonly emailIds: ReadonlyArray<number>
  readonly keyIds: ReadonlyMap<number, ReadonlyArray<number>>
  readonly activeNetworks: ReadonlyArray<number>
  readonly inactiveNetworks: ReadonlyArray<number>
  /** Active bundles of active networks. */
  readonly buyable: ReadonlyArray<number>
  /** Inactive bundles, or bundles of an inactive network. */
  readonly unbuyable: ReadonlyArray<number>
  readonly maxBundleId: number
  readonly richOrders: ReadonlyArray<PlacedOrder>
  readonly otherOrders: ReadonlyArray<PlacedOrder>
  /** Ids of the events (and so of the deliveries) of `rich` and of `other`. */
  readonly richEvents: ReadonlyArray<string>
  readonly otherEvents: ReadonlyArray<string>
  readonly pendingOrder: string
  readonly settledOrders: ReadonlyArray<string>
  /** The settled orders that failed (a successful one may still be failed by the operator). */
  readonly failedOrders: ReadonlyArray<string>
  /** Balances in pesewas by `${account}:${wallet}`. */
  readonly balances: ReadonlyMap<string, bigint>
  readonly priceGroups: ReadonlyArray<string>
  /** The catalogue export, as JSON. */
  readonly catalog: { readonly price_groups: ReadonlyArray<string>; readonly networks: ReadonlyArray<any> }
  /** Strings no response may contain. */
  readonly secrets: ReadonlyArray<string>
  /** The money-related state after set-up, in the database and through the admin API. */
  readonly baseline: Fingerprint
  readonly view: AdminView
  /** The state after the last request, to tell which request changed it. */
  readonly state: { last: Fingerprint }
}

export class Fixture extends Context.Tag("test/Fuzz/Fixture")<Fixture, World>() {}

/** One `count:md5` per table (volatile columns left out), and the wallets out of line with their ledger. */
export type Fingerprint = Readonly<Record<string, string>>

export const digest = (table: string, columns: string, order: string) =>
  `(SELECT count(*) || ':' || md5(coalesce(string_agg(concat_ws(',', ${columns}), '|' ORDER BY ${order}), '')) ` +
  `FROM ${table} t) AS ${table}`

export const FINGERPRINT = `SELECT ${
  [
    digest("price_groups", "t.*", "t.id"),
    digest("accounts", "t.*", "t.id"),
    // last_used_at moves with every authenticated request.
    digest("api_keys", "t.id, t.account_id, t.key_hash, t.prefix, t.created_at, t.revoked_at", "t.id"),
    digest("wallets", "t.*", "t.account_id, t.kind"),
    digest("networks", "t.*", "t.id"),
    digest("bundles", "t.*", "t.id"),
    digest("bundle_prices", "t.*", "t.bundle_id, t.price_group_id"),
    // The fulfilment worker's bookkeeping (next_check_at, checks) is not money.
    digest(
      "orders",
      "t.id, t.order_number, t.account_id, t.bundle_id, t.bundle_label, t.network_name, t.phone_number, " +
        "t.amount, t.status, t.reference, t.failure_reason, t.created_at, t.settled_at",
      "t.id"
    ),
    digest("ledger_entries", "t.*", "t.id"),
    digest("figures", "t.*", "t.name"),
    // A refused requeue leaves every email where it was.
    digest("mail_outbox", "t.id, t.attempts, t.next_attempt_at, t.sent_at", "t.id"),
    digest("webhook_events", "t.id, t.account_id, t.type, t.body", "t.id"),
    digest("users", "t.id, t.account_id, t.email, t.password_hash, t.email_verified_at", "t.id"),
    digest("operators", "t.id, t.email, t.name, t.password_hash, t.role, t.disabled_at", "t.id"),
    // A refused request writes no line of the action log.
    digest("operator_actions", "t.id, t.actor_kind, t.operator_id, t.action, t.target_kind, t.target_id", "t.id"),
    digest(
      "payments",
      "t.id, t.payment_number, t.account_id, t.idempotency_key, t.method, t.amount, t.status, t.settled_at",
      "t.id"
    ),
    `(SELECT count(*) || '' FROM wallets w WHERE w.balance <> coalesce((SELECT sum(l.amount) FROM ledger_entries l ` +
    `WHERE l.account_id = w.account_id AND l.wallet = w.kind), 0)) AS wallets_off_ledger`
  ].join(",\n")
}`

export const fingerprint = (sql: SqlClient.SqlClient) =>
  Effect.map(sql.unsafe<Record<string, string>>(FINGERPRINT), (rows) => ({ ...rows[0]! }) as Fingerprint).pipe(
    Effect.orDie
  )

export const changedTables = (before: Fingerprint, after: Fingerprint) =>
  Object.keys(before).filter((table) => before[table] !== after[table])

/** Everything money-related as the admin API shows it (key use times left out). */
export const adminView: Effect.Effect<AdminView, unknown, HttpClient.HttpClient> = Effect.gen(function*() {
  const admin = yield* adminClient
  const { accounts, pagination } = yield* admin.accounts.list({ urlParams: { per_page: 100 } })
  assert.isAtMost(pagination.total, 100)
  const details = yield* Effect.forEach(
    accounts,
    (a) =>
      Effect.map(admin.accounts.show({ path: { account_id: a.id } }), (d) => ({
        ...d,
        keys: d.keys.map(({ last_used_at: _, ...key }) => key)
      }))
  )
  const ledgers = yield* Effect.forEach(
    accounts,
    (a) => admin.wallets.ledger({ path: { account_id: a.id }, urlParams: { per_page: 100 } })
  )
  const orders = yield* admin.ordersAdmin.list({ urlParams: { per_page: 100 } })
  const audit = yield* admin.wallets.audit()
  const catalog = yield* admin.catalogFile.export()
  return { accounts, details, ledgers, orders, audit, catalog }
})

export interface AdminView {
  readonly accounts: ReadonlyArray<Account.AccountSummary>
  readonly details: ReadonlyArray<unknown>
  readonly ledgers: ReadonlyArray<unknown>
  readonly orders: unknown
  readonly audit: { readonly ok: boolean }
  readonly catalog: unknown
}

export const getJson = (port: number, path: string) =>
  Effect.promise(() =>
    send(
      port,
      probe({
        fault: "none",
        method: "GET",
        target: path,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        expect: [200]
      })
    )
  ).pipe(Effect.map((r) => JSON.parse(r.text)))

/**
 * A dashboard user: registered, verified by the emailed link, signed in, funded by the
 * operator, with an order, a pending manual transfer, a key and a test webhook event (to a
 * port where nothing listens, so it stays undelivered).
 */
const signUp = (bundleId: number) =>
  Effect.gen(function*() {
    const admin = yield* adminClient
    const email = `fuzz-holder-${Date.now().toString(36)}@example.com`
    const password = "fuzzing password"
    const registered = yield* raw("POST", `${DASHBOARD}/register`, {
      body: { name: "Fuzz Holder", email, phone: "0241234567", password }
    })
    assert.strictEqual(registered.status, 201, registered.text)
    const token = /token=([A-Za-z0-9_-]+)/.exec((yield* mailed(email)).link!)![1]!
    assert.strictEqual((yield* raw("POST", `${DASHBOARD}/email/verify`, { body: { token } })).status, 200)
    const signedIn = yield* raw("POST", `${DASHBOARD}/session`, { body: { email, password } })
    assert.strictEqual(signedIn.status, 200, signedIn.text)
    const cookie = /bundles_session=([^;]+)/.exec(signedIn.headers["set-cookie"]!)![1]!
    const csrf: string = signedIn.json.csrf_token
    const accountId: number = signedIn.json.account.id
    const headers = { cookie: `bundles_session=${cookie}`, "x-csrf-token": csrf }
    const call = (method: "POST" | "PUT", path: string, body: unknown, extra: Record<string, string> = {}) =>
      Effect.tap(
        raw(method, `${DASHBOARD}${path}`, { body, headers: { ...headers, ...extra } }),
        (r) => assert.isBelow(r.status, 300, r.text)
      )
    yield* admin.wallets.fund({ headers: {}, path: { account_id: accountId as any }, payload: { amount: 10_000n } })
    const order = yield* call("POST", "/orders", {
      bundle_id: bundleId,
      phone_number: "0241234567",
      reference: "fuzz-holder-1"
    })
    const payment = yield* call("POST", "/payments", { method: "manual_transfer", amount: 10 }, {
      "idempotency-key": "fuzz-holder-transfer"
    })
    const key = yield* call("POST", "/keys", { name: "fuzz" })
    yield* call("PUT", "/webhook", { url: "http://127.0.0.1:9/fuzz-hook" })
    const test = yield* call("POST", "/webhook/test", { type: "order.successful" })
    return {
      email,
      accountId,
      cookie,
      csrf,
      orderNumber: order.json.order.order_number,
      paymentNumber: payment.json.payment.payment_number,
      keyId: key.json.key.id,
      eventId: test.json.delivery.id
    } satisfies Holder
  })

/**
 * An owner (every endpoint open to them, operators' management included), created with the
 * admin token and signed in to the console.
 */
const signInOperator = Effect.gen(function*() {
  const email = `fuzz-operator-${Date.now().toString(36)}@example.com`
  const password = "fuzzing operator password"
  const created = yield* raw("POST", `${ADMIN}/operators`, {
    bearer: ADMIN_TOKEN,
    body: { email, name: "Fuzz Operator", password, role: "owner" }
  })
  assert.strictEqual(created.status, 201, created.text)
  const signedIn = yield* raw("POST", `${CONSOLE}/session`, { body: { email, password } })
  assert.strictEqual(signedIn.status, 200, signedIn.text)
  const cookie = /bundles_operator=([^;]+)/.exec(signedIn.headers["set-cookie"]!)![1]!
  return { id: created.json.operator.id, email, cookie, csrf: signedIn.json.csrf_token as string } satisfies Staff
})

/** Seeds the catalogue, creates the accounts, keys and orders, and takes the baseline. */
export const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const server = yield* HttpServer.HttpServer
  assert.strictEqual(server.address._tag, "TcpAddress")
  const port = (server.address as HttpServer.TcpAddress).port
  yield* seedCatalog
  const admin = yield* adminClient

  const rich = yield* newAccount(1_000_000n)
  yield* admin.wallets.fund({
    headers: {},
    path: { account_id: rich.id },
    payload: { amount: 1_234n, wallet: "referral" }
  })
  yield* admin.wallets.fund({ headers: {}, path: { account_id: rich.id }, payload: { amount: 567n, wallet: "agent" } })
  const other = yield* newAccount(50_000n)
  const broke = yield* newAccount(0n)
  const suspended = yield* newAccount(10_000n)
  yield* admin.accounts.update({ path: { account_id: suspended.id }, payload: { status: "suspended" } })
  const revoked = yield* admin.apiKeys.create({ path: { account_id: rich.id }, urlParams: {} })
  yield* admin.apiKeys.revoke({ path: { account_id: rich.id, key_id: revoked.id } })

  const bundles = yield* sql<{ id: number; buyable: boolean }>`
    SELECT b.id, (b.active AND n.active) AS buyable FROM bundles b JOIN networks n ON n.id = b.network_id ORDER BY b.id
  `
  const networks = yield* sql<{ id: number; active: boolean }>`SELECT id, active FROM networks ORDER BY id`
  const buyable = bundles.filter((b) => b.buyable).map((b) => b.id)

  const place = (account: Account, bundleId: number, phone: string, reference: string) =>
    Effect.gen(function*() {
      const client = yield* resellerClient(account.key)
      const placed = yield* client.orders.place({
        payload: { bundle_id: bundleId as Bundle.BundleId, phone_number: phone, reference }
      })
      return { orderNumber: placed.order.order_number, bundleId, phone, reference, status: placed.order.status }
    })
  // The simulator settles ...0000 as failed (refunded) and keeps ...9999 pending (for an hour here).
  const richOrders = [
    yield* place(rich, buyable[0]!, "0241234567", "fuzz-ok-1"),
    yield* place(rich, buyable[1]!, "233241230000", "fuzz-failed-1"),
    yield* place(rich, buyable[2]!, "0241239999", "fuzz-pending-1")
  ]
  const otherOrders = [yield* place(other, buyable[0]!, "0201234567", "fuzz-other-1")]
  assert.deepStrictEqual(richOrders.map((o) => o.status), ["successful", "failed", "pending"])

  const holder = yield* signUp(buyable[0]!)
  const operator = yield* signInOperator

  const events = yield* sql<{ id: string; account_id: number }>`SELECT id, account_id FROM webhook_events ORDER BY id`
  const eventsOf = (account: Account) => events.filter((e) => e.account_id === account.id).map((e) => e.id)
  const keys = yield* sql<{ id: number; account_id: number }>`SELECT id, account_id FROM api_keys ORDER BY id`
  const keyIds = new Map<number, Array<number>>()
  for (const key of keys) keyIds.set(key.account_id, [...(keyIds.get(key.account_id) ?? []), key.id])

  const emails = yield* sql<{ id: string }>`SELECT id FROM mail_outbox ORDER BY id`

  const view = yield* adminView
  const balances = new Map<string, bigint>()
  for (const account of view.accounts) {
    for (const wallet of WALLETS) balances.set(`${account.id}:${wallet}`, account.balance[wallet])
  }
  // The SqlClient here must be the server's own database.
  const counted = yield* sql<{ count: string }>`SELECT count(*)::text AS count FROM accounts`
  assert.strictEqual(Number(counted[0]!.count), view.accounts.length)

  const catalog = yield* getJson(port, `${ADMIN}/catalog`)
  const baseline = yield* fingerprint(sql)
  const world: World = {
    port,
    sql,
    rich,
    other,
    broke,
    holder,
    operator,
    revokedKey: revoked.api_key,
    suspendedKey: suspended.key,
    accountIds: view.accounts.map((a) => a.id),
    emailIds: emails.map((e) => Number(e.id)),
    keyIds,
    activeNetworks: networks.filter((n) => n.active).map((n) => n.id),
    inactiveNetworks: networks.filter((n) => !n.active).map((n) => n.id),
    buyable,
    unbuyable: bundles.filter((b) => !b.buyable).map((b) => b.id),
    maxBundleId: Math.max(...bundles.map((b) => b.id)),
    richOrders,
    otherOrders,
    richEvents: eventsOf(rich),
    otherEvents: eventsOf(other),
    pendingOrder: richOrders[2]!.orderNumber,
    settledOrders: [richOrders[0]!.orderNumber, richOrders[1]!.orderNumber, otherOrders[0]!.orderNumber],
    failedOrders: [richOrders[1]!.orderNumber],
    balances,
    priceGroups: catalog.price_groups,
    catalog: { price_groups: catalog.price_groups, networks: catalog.networks },
    secrets: [
      ADMIN_TOKEN,
      rich.key,
      other.key,
      broke.key,
      suspended.key,
      revoked.api_key,
      holder.cookie,
      operator.cookie
    ],
    baseline,
    view,
    state: { last: baseline }
  }
  assert.isAbove(world.richEvents.length, 0, "every account's events are recorded")
  assert.isAbove(world.otherEvents.length, 0, "every account's events are recorded")
  assert.isAbove(world.unbuyable.length, 0, "the demo catalogue has unbuyable bundles")
  assert.isAbove(world.inactiveNetworks.length, 0, "the demo catalogue has an inactive network")
  return world
})

/** The server on `target`, with the SqlClient of its own database and the world set up on it. */
export const fuzzLayer = (target: Target, extra: Record<string, string>) =>
  Layer.effect(Fixture, setup).pipe(
    Layer.provideMerge(
      // One layer build shares `target.layer`: the SqlClient is the server's.
      Layer.merge(
        // Pending orders stay pending for the whole run: the fuzzing meets one, and no worker moves money meanwhile.
        serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "3600", ...extra }),
        target.layer
      )
    )
  )
