/**
 * Prometheus metrics (prom-client): what the server counts as it works (requests by route
 * and status with their latency, 429s by scope, failed authentications, webhook attempts),
 * and what it reads from the database when scraped (orders by status, pending orders by
 * age, refunds, the webhook backlog, the mail queue, the database connections).
 *
 * Per request the cost is one histogram observation: each route keeps its labelled children
 * by status, so no label object is built or hashed after a route's first request with a
 * status. The database figures cost a few indexed queries per scrape, nothing per request.
 *
 * Under `serve --workers N` every worker counts its own requests; a scrape of any worker
 * asks the primary, which gathers every worker's figures (prom-client's `AggregatorRegistry`)
 * and answers for the whole server: counters and histograms summed, database figures taken
 * once.
 */
import { Money } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Runtime } from "effect"
import cluster, { type Worker } from "node:cluster"
import * as http from "node:http"
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"
import type * as RequestContext from "./RequestContext.js"

/** The latency buckets of requests and webhook attempts, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The route label of a request that names no endpoint (404, 405): one series, whatever its path. */
export const UNMATCHED = "unmatched"

/** How a webhook attempt ended: a 2xx, another answer, or no answer. */
export type WebhookOutcome = "success" | "failure" | "error"

const REQUEST = "bundles:metrics-request"
const ANSWER = "bundles:metrics-answer"

/** A worker's question to the primary, and its answer. */
interface Request {
  readonly type: typeof REQUEST
  readonly id: number
}
interface Answer {
  readonly type: typeof ANSWER
  readonly id: number
  readonly text?: string
  readonly error?: string
}

const isMessage = <T extends { readonly type: string }>(type: T["type"]) => (message: unknown): message is T =>
  typeof message === "object" && message !== null && "type" in message && message.type === type

/** This process's metrics: its registry, the instruments the server feeds, and the scrape. */
export class Metrics extends Effect.Service<Metrics>()("server/Metrics", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const runtime = yield* Effect.runtime<never>()
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })

    const requests = new Histogram({
      name: "bundles_http_request_duration_seconds",
      help: "HTTP requests by method, route template and status, with their duration",
      labelNames: ["method", "route", "status"] as const,
      buckets: BUCKETS,
      registers: [registry]
    })
    const rateLimited = new Counter({
      name: "bundles_rate_limited_total",
      help: "Requests refused with a 429, by rate-limit scope",
      labelNames: ["scope"] as const,
      registers: [registry]
    })
    const authFailures = new Counter({
      name: "bundles_auth_failures_total",
      help: "Failed authentications: unknown or revoked API keys, wrong admin tokens",
      labelNames: ["credentials"] as const,
      registers: [registry]
    })
    const webhookAttempts = new Histogram({
      name: "bundles_webhook_attempt_duration_seconds",
      help: "Webhook delivery attempts by outcome (success: a 2xx), with their duration",
      labelNames: ["outcome"] as const,
      buckets: BUCKETS,
      registers: [registry]
    })

    /**
     * A gauge of figures of the database: the same from every process on it, so taken once
     * across workers. Each scrape runs `query`; `set` writes its answer. A failed query is
     * logged and leaves the gauge without samples.
     */
    const databaseGauge = <A>(options: {
      readonly name: string
      readonly help: string
      readonly labelNames?: ReadonlyArray<string>
      readonly query: Effect.Effect<A, unknown>
      readonly set: (gauge: Gauge<string>, value: A) => void
    }) => {
      const gauge: Gauge<string> = new Gauge({
        name: options.name,
        help: options.help,
        labelNames: options.labelNames ?? [],
        aggregator: "first",
        registers: [registry],
        collect: () =>
          Runtime.runPromise(runtime)(
            options.query.pipe(
              Effect.timeout("5 seconds"),
              Effect.match({
                onFailure: (error) => {
                  gauge.reset()
                  Runtime.runFork(runtime)(
                    Effect.logWarning("metrics: a database figure could not be read").pipe(
                      Effect.annotateLogs({ metric: options.name, error: Cause.pretty(Cause.fail(error)) })
                    )
                  )
                },
                onSuccess: (value) => {
                  gauge.reset()
                  options.set(gauge, value)
                }
              })
            )
          )
      })
    }

    databaseGauge({
      name: "bundles_orders",
      help: "Live orders in the database by status (test keys' orders are not counted)",
      labelNames: ["status"],
      // From the console's daily rollups (kept exact by triggers, migration 0022) and the pending
      // orders' partial index, not a count of every order: a scrape's cost must not grow with history.
      // Every live order is counted in its day's `orders`; those not successful nor pending failed.
      query: sql<{ status: string; count: number }>`
        WITH r AS (SELECT coalesce(sum(orders), 0) AS orders, coalesce(sum(successful), 0) AS successful
          FROM stats_order_days),
        p AS (SELECT count(*) AS pending FROM orders WHERE status = 'pending' AND mode = 'live')
        SELECT 'successful' AS status, r.successful::int AS count FROM r
        UNION ALL SELECT 'pending', p.pending::int FROM p
        UNION ALL SELECT 'failed', (r.orders - r.successful - p.pending)::int FROM r, p`,
      set: (gauge, rows) => {
        for (const status of ["pending", "successful", "failed"]) gauge.set({ status }, 0)
        for (const row of rows) gauge.set({ status: row.status }, Number(row.count))
      }
    })
    databaseGauge({
      name: "bundles_pending_orders",
      help: "Pending live orders by how long ago they were placed",
      labelNames: ["age"],
      query: sql<{ under_1m: number; "1m_to_5m": number; "5m_to_30m": number; over_30m: number }>`
        SELECT
          count(*) FILTER (WHERE created_at > now() - interval '1 minute')::int AS under_1m,
          count(*) FILTER (WHERE created_at <= now() - interval '1 minute'
            AND created_at > now() - interval '5 minutes')::int AS "1m_to_5m",
          count(*) FILTER (WHERE created_at <= now() - interval '5 minutes'
            AND created_at > now() - interval '30 minutes')::int AS "5m_to_30m",
          count(*) FILTER (WHERE created_at <= now() - interval '30 minutes')::int AS over_30m
        FROM orders WHERE status = 'pending' AND mode = 'live'`,
      set: (gauge, [row]) => {
        for (const [age, count] of Object.entries(row ?? {})) gauge.set({ age }, Number(count))
      }
    })
    databaseGauge({
      name: "bundles_oldest_pending_order_age_seconds",
      help: "Age of the oldest pending live order (0 when none is pending)",
      query: sql<{ age: number | null }>`
        SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM orders WHERE status = 'pending' AND mode = 'live'`,
      set: (gauge, [row]) => gauge.set(Number(row?.age ?? 0))
    })
    databaseGauge({
      name: "bundles_refunded_orders",
      help: "Live orders refunded to their account (failed after the debit)",
      // Kept by each refund's transaction (see Orders.settle): one row, however long the ledger.
      query: sql<{ count: string }>`SELECT value AS count FROM figures WHERE name = 'refunded_live_orders'`,
      set: (gauge, [row]) => gauge.set(Number(row?.count ?? 0))
    })
    databaseGauge({
      name: "bundles_commissions",
      help: "Commissions credited on live orders (agent and referral), and those taken back by a failed resolution",
      labelNames: ["kind"],
      // Kept by each settlement's transaction (see Commissions.credit and reverse), as the refunds are.
      query: sql<{ name: string; value: string }>`
        SELECT name, value FROM figures WHERE name IN ('live_commissions', 'live_commission_reversals')`,
      set: (gauge, rows) => {
        for (const row of rows) {
          gauge.set({ kind: row.name === "live_commissions" ? "credited" : "reversed" }, Number(row.value))
        }
      }
    })
    databaseGauge({
      name: "bundles_webhook_backlog",
      help: "Webhook events not delivered yet: due now, or waiting for a retry",
      labelNames: ["state"],
      query: sql<{ due: number; waiting: number }>`
        SELECT
          count(*) FILTER (WHERE next_attempt_at <= now())::int AS due,
          count(*) FILTER (WHERE next_attempt_at > now())::int AS waiting
        FROM webhook_events WHERE queued_at IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL`,
      set: (gauge, [row]) => {
        gauge.set({ state: "due" }, Number(row?.due ?? 0))
        gauge.set({ state: "waiting" }, Number(row?.waiting ?? 0))
      }
    })
    databaseGauge({
      name: "bundles_emails",
      help: "Email in the outbox by state: queued (to send or retry), failed (given up), sent (in the last 24 hours)",
      labelNames: ["state"],
      // Each count reads a partial index of its own rows, never the whole outbox.
      query: sql<{ queued: number; failed: number; sent: number }>`
        SELECT
          (SELECT count(*)::int FROM mail_outbox WHERE sent_at IS NULL AND next_attempt_at IS NOT NULL) AS queued,
          (SELECT count(*)::int FROM mail_outbox
            WHERE sent_at IS NULL AND next_attempt_at IS NULL AND attempts > 0) AS failed,
          (SELECT count(*)::int FROM mail_outbox
            WHERE sent_at IS NOT NULL AND sent_at > now() - interval '24 hours') AS sent`,
      set: (gauge, [row]) => {
        gauge.set({ state: "queued" }, Number(row?.queued ?? 0))
        gauge.set({ state: "failed" }, Number(row?.failed ?? 0))
        gauge.set({ state: "sent" }, Number(row?.sent ?? 0))
      }
    })
    databaseGauge({
      name: "bundles_oldest_webhook_event_age_seconds",
      help: "Age of the oldest webhook event not delivered yet (0 when none waits)",
      query: sql<{ age: number | null }>`
        SELECT extract(epoch FROM now() - min(created_at))::float8 AS age
        FROM webhook_events WHERE queued_at IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL`,
      set: (gauge, [row]) => gauge.set(Number(row?.age ?? 0))
    })
    databaseGauge({
      name: "bundles_upstream_balance",
      help: "Main balance at each upstream with a low-balance threshold, in cedis, as last read",
      labelNames: ["upstream"],
      query: sql<{ upstream: string; balance: string }>`SELECT upstream, balance FROM upstream_balances`,
      set: (gauge, rows) => {
        for (const row of rows) gauge.set({ upstream: row.upstream }, Number(Money.formatCedis(BigInt(row.balance))))
      }
    })
    databaseGauge({
      name: "bundles_upstream_balance_low",
      help: "1 while an upstream's balance is below its low-balance threshold, else 0",
      labelNames: ["upstream"],
      query: sql<{ upstream: string; low: boolean }>`SELECT upstream, low FROM upstream_balances`,
      set: (gauge, rows) => {
        for (const row of rows) gauge.set({ upstream: row.upstream }, row.low ? 1 : 0)
      }
    })
    databaseGauge({
      name: "bundles_db_connections",
      help: "The server's Postgres connections (every process on the database) by state: active ones are in use",
      labelNames: ["state"],
      query: sql<{ state: string | null; count: number }>`
        SELECT coalesce(state, 'unknown') AS state, count(*)::int AS count FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'bundles-server'
        GROUP BY 1`,
      set: (gauge, rows) => {
        for (const row of rows) gauge.set({ state: row.state ?? "unknown" }, Number(row.count))
      }
    })

    /** A route's request metrics, its labelled children kept by status. */
    const route = (method: string, template: string): RequestContext.RouteMetrics => {
      const byStatus = new Map<number, Histogram.Internal<"method" | "route" | "status">>()
      return {
        observe: (status, seconds) => {
          let child = byStatus.get(status)
          if (child === undefined) {
            child = requests.labels({ method, route: template, status: String(status) })
            byStatus.set(status, child)
          }
          child.observe(seconds)
        }
      }
    }

    const scopes = new Map<string, ReturnType<typeof rateLimited.labels>>()
    const credentials = {
      apiKey: authFailures.labels({ credentials: "api_key" }),
      bearer: authFailures.labels({ credentials: "admin_token" }),
      session: authFailures.labels({ credentials: "session" }),
      operator: authFailures.labels({ credentials: "operator_session" })
    }
    const outcomes = {
      success: webhookAttempts.labels({ outcome: "success" }),
      failure: webhookAttempts.labels({ outcome: "failure" }),
      error: webhookAttempts.labels({ outcome: "error" })
    }

    // A worker answers the primary's scrapes with this registry.
    if (cluster.isWorker) {
      AggregatorRegistry.setRegistries([registry])
      new AggregatorRegistry()
    }

    return {
      registry,
      route,
      /** Counts a 429 of `scope`. */
      rateLimited: (scope: string) => {
        let child = scopes.get(scope)
        if (child === undefined) {
          child = rateLimited.labels({ scope })
          scopes.set(scope, child)
        }
        child.inc()
      },
      /** Counts a failed authentication with `kind` credentials. */
      authFailed: (kind: "apiKey" | "bearer" | "session" | "operator") => credentials[kind].inc(),
      /** Records a webhook attempt. */
      webhookAttempt: (outcome: WebhookOutcome, seconds: number) => outcomes[outcome].observe(seconds),
      /** The exposition text for the whole server (every worker's under `--workers`). */
      exposition: Effect.promise(() => cluster.isWorker ? askPrimary() : registry.metrics()),
      contentType: registry.contentType
    }
  })
}) {}

let asked = 0
const waiting = new Map<number, (answer: Answer) => void>()

/** Asks the primary for the whole server's figures. */
const askPrimary = () =>
  new Promise<string>((resolve, reject) => {
    if (waiting.size === 0) process.on("message", onAnswer)
    const id = ++asked
    const timer = setTimeout(() => settle({ type: ANSWER, id, error: "the primary did not answer in time" }), 10_000)
    const settle = (answer: Answer) => {
      clearTimeout(timer)
      waiting.delete(id)
      if (waiting.size === 0) process.off("message", onAnswer)
      if (answer.text !== undefined) resolve(answer.text)
      else reject(new Error(`metrics: ${answer.error}`))
    }
    waiting.set(id, settle)
    process.send!({ type: REQUEST, id } satisfies Request)
  })

const isAnswer = isMessage<Answer>(ANSWER)
const onAnswer = (message: unknown) => {
  if (isAnswer(message)) waiting.get(message.id)?.(message)
}

/**
 * The primary's side of `--workers`: answers a worker's scrape with every worker's figures,
 * for the scope's lifetime; returns the scrape of the whole server.
 */
export const primary = Effect.acquireRelease(
  Effect.sync(() => {
    const aggregator = new AggregatorRegistry()
    const isRequest = isMessage<Request>(REQUEST)
    const onMessage = (worker: Worker, message: unknown) => {
      if (!isRequest(message)) return
      aggregator.clusterMetrics().then(
        (text) => worker.send({ type: ANSWER, id: message.id, text } satisfies Answer),
        (error) => worker.send({ type: ANSWER, id: message.id, error: String(error) } satisfies Answer)
      )
    }
    cluster.on("message", onMessage)
    return { onMessage, scrape: () => aggregator.clusterMetrics(), contentType: aggregator.contentType }
  }),
  ({ onMessage }) => Effect.sync(() => cluster.off("message", onMessage))
)

/** The metrics port could not be listened on; its `toString` is its message, as the CLI prints it. */
export class CannotServeMetrics extends Error {
  override toString() {
    return this.message
  }
}

/**
 * Serves `scrape` at `GET /metrics` on its own port (`--metrics-port`), without credentials:
 * bind it where only the monitoring system reaches it.
 */
export const serve = (port: number, host: string, scrape: () => Promise<string>, contentType: string) =>
  Effect.acquireRelease(
    Effect.async<http.Server, CannotServeMetrics>((resume) => {
      const server = http.createServer((request, response) => {
        if (request.url !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
          response.writeHead(404, { "content-type": "text/plain" }).end("Not found; metrics are at /metrics\n")
          return
        }
        scrape().then(
          (text) => response.writeHead(200, { "content-type": contentType }).end(text),
          (error) => response.writeHead(500, { "content-type": "text/plain" }).end(`${String(error)}\n`)
        )
      })
      server.once("error", (error: NodeJS.ErrnoException) =>
        resume(Effect.fail(
          new CannotServeMetrics(
            `Cannot serve metrics on ${host}:${port} (${error.code ?? error.message}); choose another --metrics-port`
          )
        )))
      server.listen(port, host, () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )
