/**
 * Idempotency keys of admin requests that move money.
 *
 * `run` records the key in the same transaction as the movement it guards: it inserts the
 * key first (a unique key), runs the movement, and stores the encoded result beside it. A
 * concurrent request with the same key blocks on that insert until the first commits, then
 * finds the row and replays its result; if the first rolled back (it failed), the insert
 * goes through and the request runs as new. Failures are never recorded, so a retry after
 * one runs again. Keys are kept `Idempotency.RETENTION_DAYS` days, then pruned.
 */
import { ApiError, Idempotency as IdempotencyContract } from "@databundle/contract"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { orDie } from "./Database.js"
import * as Tokens from "./Tokens.js"

/** What one guarded request is: its key, the endpoint and target it acts on, and its body. */
export interface Request {
  readonly key: string
  /** The endpoint, e.g. `wallets.fund`. */
  readonly endpoint: string
  /** What it acts on, e.g. the account id or the order number. */
  readonly target: string
  /** The decoded body; two requests are the same when these are equal. */
  readonly body: unknown
}

/** A result and whether it was replayed from an earlier request with the same key. */
export interface Outcome<A> {
  readonly value: A
  readonly replayed: boolean
}

/** A stable text of a decoded body: keys sorted, bigints as their digits. */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "bigint"
      ? `${v}n`
      : v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v)

/** Remembers idempotency keys and replays what they produced. */
export class Idempotency extends Effect.Service<Idempotency>()("core/Idempotency", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Deletes keys older than the retention; returns how many. */
    const prune = orDie(sql<{ key: string }>`
      DELETE FROM admin_idempotency_keys
      WHERE created_at < now() - make_interval(days => ${IdempotencyContract.RETENTION_DAYS})
      RETURNING key
    `).pipe(Effect.map((rows) => rows.length), Effect.withSpan("Idempotency.prune"))

    /**
     * Runs `effect` once per key: the first time, in one transaction with the key's record;
     * afterwards (same endpoint, target and body) its result, decoded with `schema`, is replayed.
     */
    const run = <A, I, E, R>(
      request: Request,
      schema: Schema.Schema<A, I>,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<Outcome<A>, E | ApiError.ValidationError, R> =>
      Effect.gen(function*() {
        // Outside the transaction, so it never holds locks on other keys while the movement runs.
        yield* prune
        const fingerprint = Tokens.sha256Hex(canonical([request.endpoint, request.target, request.body]))
        return yield* orDie(sql.withTransaction(Effect.gen(function*() {
          // Waits for a concurrent holder of the key to commit or roll back.
          const inserted = yield* sql<{ key: string }>`
            INSERT INTO admin_idempotency_keys (key, endpoint, target, fingerprint)
            VALUES (${request.key}, ${request.endpoint}, ${request.target}, ${fingerprint})
            ON CONFLICT (key) DO NOTHING
            RETURNING key
          `
          if (inserted.length === 0) {
            const [existing] = yield* sql<{ endpoint: string; target: string; fingerprint: string; response: string }>`
              SELECT endpoint, target, fingerprint, response FROM admin_idempotency_keys WHERE key = ${request.key}
            `
            if (existing!.fingerprint !== fingerprint) {
              return yield* Effect.fail(ApiError.ValidationError.field(
                "Idempotency-Key",
                `was already used for another request (${existing!.endpoint} on ${existing!.target}) ` +
                  "with another body; use a new key"
              ))
            }
            const value = yield* Schema.decode(Schema.parseJson(schema))(existing!.response).pipe(Effect.orDie)
            return { value, replayed: true }
          }
          const value = yield* effect
          const response = yield* Schema.encode(Schema.parseJson(schema))(value).pipe(Effect.orDie)
          yield* sql`UPDATE admin_idempotency_keys SET response = ${response} WHERE key = ${request.key}`
          return { value, replayed: false }
        })))
      }).pipe(Effect.withSpan("Idempotency.run", { attributes: { endpoint: request.endpoint } }))

    return { run, prune }
  })
}) {}
