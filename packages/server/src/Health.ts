/**
 * The probes of a process manager or load balancer, and the metrics scrape: `GET /healthz`
 * (the process answers), `GET /readyz` (the database answers, carries every migration this
 * build knows, and the background workers run), and `GET /metrics` (the admin token).
 *
 * They are routes of the server, not endpoints of a contract: no client of either API calls
 * them, their bodies are not the API's envelope, and they live outside both prefixes. They
 * take the same road as every request (see `Http.outside`, where each is listed).
 */
import { Migrations } from "@databundle/core"
import { HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Fiber, Option } from "effect"
import * as Metrics from "./Metrics.js"

/** The paths served here. */
export const paths = { health: "/healthz", ready: "/readyz", metrics: "/metrics" } as const

/** The background workers of this process, for the readiness probe. */
export class Workers extends Context.Tag("server/Workers")<Workers, {
  /** Each worker by name, and whether it still runs. */
  readonly running: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly running: boolean }>>
}>() {}

/** Watches forked workers: running while their fiber has not ended. */
export const watch = (
  fibers: ReadonlyArray<{ readonly name: string; readonly fiber: Fiber.RuntimeFiber<unknown, unknown> }>
) =>
  Workers.of({
    running: Effect.forEach(fibers, ({ fiber, name }) =>
      Effect.map(Fiber.poll(fiber), (exit) => ({ name, running: Option.isNone(exit) })))
  })

const json = (status: number, body: unknown) =>
  HttpServerResponse.unsafeJson(body, { status, headers: { "cache-control": "no-store" } })

/** What `/readyz` found: each check `ok` or why not. */
export const readiness = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const workers = yield* Workers
  const checks: Record<string, string> = {}
  const applied = yield* sql<{ latest: number | null }>`
    SELECT max(migration_id)::int AS latest FROM ${sql(Migrations.MIGRATIONS_TABLE)}`.pipe(
    Effect.timeout("2 seconds"),
    Effect.either
  )
  if (applied._tag === "Left") {
    checks.database = `unreachable: ${applied.left._tag === "TimeoutException" ? "no answer in 2 s" : "query failed"}`
    checks.migrations = "unknown"
  } else {
    checks.database = "ok"
    const latest = Number(applied.right[0]?.latest ?? 0)
    checks.migrations = latest >= Migrations.latest()
      ? "ok"
      : `pending: the database has ${latest}, this server needs ${Migrations.latest()}`
  }
  const stopped = (yield* workers.running).filter((worker) => !worker.running).map((worker) => worker.name)
  checks.workers = stopped.length === 0 ? "ok" : `stopped: ${stopped.join(", ")}`
  return { ready: Object.values(checks).every((check) => check === "ok"), checks }
})

/** `GET /healthz`: the process answers. */
export const alive = Effect.succeed(Effect.succeed(json(200, { status: "ok" })))

/** `GET /readyz`: 200 when every check of `readiness` is ok, else 503 with each. */
export const ready = Effect.map(
  Effect.context<SqlClient.SqlClient | Workers>(),
  (context) =>
    Effect.map(
      readiness,
      ({ checks, ready }) => json(ready ? 200 : 503, { status: ready ? "ready" : "not_ready", checks })
    ).pipe(Effect.provide(context))
)

/** `GET /metrics`: the exposition of this process (or of every worker, gathered). */
export const scrape = Effect.map(
  Metrics.Metrics,
  (metrics) =>
    Effect.map(metrics.exposition, (text) => HttpServerResponse.text(text, { contentType: metrics.contentType }))
)
