/**
 * An `@effect/sql` client over PGlite, the embedded WASM Postgres.
 *
 * PGlite is a single Postgres session, so the client serialises access with one
 * permit: a statement takes it for its own duration, a transaction holds it
 * until COMMIT/ROLLBACK. Values are mapped like node-postgres (`pg`) so code
 * written against `@effect/sql-pg` behaves the same here.
 *
 * Statements go to PGlite as one protocol message batch each, handled in one
 * call into the database: a statement with parameters is prepared once under a
 * name (as `@effect/sql-pg` does on Postgres) and then only bound and executed.
 * `PGlite.query` would parse and plan it again each time, in six calls.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { parse as PgParse, PGlite, protocol as PgProtocol, types as PgTypes } from "@electric-sql/pglite"
import type { ParserOptions, PGliteOptions, Results, RowMode } from "@electric-sql/pglite"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** Type id of `PgliteClient`. */
export const TypeId: TypeId = "~@databundle/sql-pglite/PgliteClient"

/** Type id of `PgliteClient`. */
export type TypeId = "~@databundle/sql-pglite/PgliteClient"

/** An `SqlClient` backed by a PGlite instance. */
export interface PgliteClient extends Client.SqlClient {
  readonly [TypeId]: TypeId
  readonly config: PgliteClientConfig
  /** The underlying PGlite instance; queries sent to it directly bypass the client's lock. */
  readonly pglite: PGlite
  /** A JSON parameter fragment, as `PgClient.json`. */
  readonly json: (_: unknown) => Statement.Fragment
  /** Payloads sent to `channel` (LISTEN while the stream runs). */
  readonly listen: (channel: string) => Stream.Stream<string, SqlError>
  /** `pg_notify(channel, payload)`; inside a transaction it is delivered on commit. */
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, SqlError>
}

/** Context tag of `PgliteClient`. */
export const PgliteClient = Context.GenericTag<PgliteClient>("@databundle/sql-pglite/PgliteClient")

/** Options of `make` / `layer`. */
export interface PgliteClientConfig {
  /** Directory of a persistent database; absent means in-memory. Ignored when `pglite` is given. */
  readonly dataDir?: string | undefined
  /** Wrap an existing instance instead of creating one; the client will not close it. */
  readonly pglite?: PGlite | undefined
  /** Extra options for `PGlite.create` (extensions, debug, ...). */
  readonly pgliteOptions?: Omit<PGliteOptions, "dataDir"> | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
  readonly transformResultNames?: ((str: string) => string) | undefined
  readonly transformQueryNames?: ((str: string) => string) | undefined
  readonly transformJson?: boolean | undefined
}

// --- value mapping (node-postgres / pg-types 2.x parity) ---------------------

const OID = {
  int8: 20,
  numeric: 1700,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  int8Array: 1016,
  numericArray: 1231,
  dateArray: 1182,
  timestampArray: 1115,
  timestamptzArray: 1185
} as const

const DATE_RE = /^(\d+)-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2}){0,2})?( BC)?$/

const offsetMillis = (zone: string): number => {
  if (zone === "Z") return 0
  const [h = "0", m = "0", s = "0"] = zone.slice(1).split(":")
  const sign = zone[0] === "-" ? -1 : 1
  return sign * (Number(h) * 3600 + Number(m) * 60 + Number(s)) * 1000
}

// Like postgres-date (used by pg): without a zone the text is local time, so
// `date` and `timestamp` read back as local wall-clock time, as in node-postgres.
const parseDate = (text: string): Date | number | null => {
  if (text === "infinity") return Infinity
  if (text === "-infinity") return -Infinity
  const m = DATE_RE.exec(text)
  if (m === null) return null
  let year = Number(m[1])
  if (m[9] !== undefined) year = 1 - year
  const parts = [Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)] as const
  const ms = m[7] === undefined ? 0 : Number(m[7]) * 1000
  if (m[8] === undefined) {
    const date = new Date(year, ...parts, ms)
    if (year >= 0 && year < 100) date.setFullYear(year) // the Date constructor maps 0-99 to 19xx
    return date
  }
  const date = new Date(Date.UTC(year, ...parts, ms))
  if (year >= 0 && year < 100) date.setUTCFullYear(year)
  return new Date(date.getTime() - offsetMillis(m[8]))
}

const identity = (text: string) => text
const arrayOf = (oid: number, parse: (text: string) => unknown) => (text: string) =>
  PgTypes.arrayParser(text, parse, oid)

// Only the types where PGlite's defaults differ from pg's. PGlite's own array
// parsers use the instance parsers for elements, so the arrays are listed too.
const parsers: ParserOptions = {
  [OID.int8]: identity, // PGlite: number (or bigint when unsafe)
  [OID.numeric]: identity,
  [OID.date]: parseDate, // PGlite: UTC midnight
  [OID.timestamp]: parseDate,
  [OID.timestamptz]: parseDate,
  [OID.int8Array]: arrayOf(OID.int8Array, identity),
  [OID.numericArray]: arrayOf(OID.numericArray, parseFloat), // pg-types parses numeric[] as floats
  [OID.dateArray]: arrayOf(OID.dateArray, parseDate),
  [OID.timestampArray]: arrayOf(OID.timestampArray, parseDate),
  [OID.timestamptzArray]: arrayOf(OID.timestamptzArray, parseDate)
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

// node-postgres' default: local time with its UTC offset.
const dateToString = (date: Date): string => {
  let year = date.getFullYear()
  const bc = year < 1
  if (bc) year = 1 - year
  const offset = -date.getTimezoneOffset()
  const abs = Math.abs(offset)
  return `${pad(year, 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${
    pad(date.getMinutes())
  }:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}${offset < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}:${
    pad(abs % 60)
  }${bc ? " BC" : ""}`
}

const hex = (bytes: ArrayBufferView) =>
  Array.from(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), (b) => b.toString(16).padStart(2, "0"))
    .join("")

const arrayLiteral = (values: ReadonlyArray<unknown>): string =>
  `{${
    values.map((item) => {
      if (item === null || item === undefined) return "NULL"
      if (Array.isArray(item)) return arrayLiteral(item)
      if (ArrayBuffer.isView(item)) return `\\\\x${hex(item)}`
      return `"${prepareValue(item)!.replace(/\\/g, "\\\\").replace(/"/g, "\\\"")}"`
    }).join(",")
  }}`

/** Converts a parameter to Postgres text the way node-postgres' `prepareValue` does (bytes become hex bytea). */
export const prepareValue = (value: unknown): string | null => {
  if (value === null || value === undefined) return null
  if (typeof value !== "object") return String(value)
  if (ArrayBuffer.isView(value)) return `\\x${hex(value)}`
  if (value instanceof Date) return dateToString(value)
  if (Array.isArray(value)) return arrayLiteral(value)
  return JSON.stringify(value)
}

// --- session lock -------------------------------------------------------------

interface Lock {
  /** Runs `self` holding the permit; waiting for it is interruptible. */
  readonly withLock: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Holds the permit until the scope closes. */
  readonly acquireScoped: Effect.Effect<void, never, Scope.Scope>
}

// A FIFO lock with one permit. Effect's Semaphore lets the fiber that releases
// take the permit again before a woken waiter runs, and PGlite statements
// complete within microtasks, so a fiber running statements in a loop would
// starve every other fiber. Here release hands the permit to the oldest waiter.
const makeLock = (): Lock => {
  interface Ticket {
    granted: boolean
    wake: () => void
  }
  let held = false
  const waiters = new Set<Ticket>() // insertion ordered

  const release = Effect.sync(() => {
    const [next] = waiters
    if (next === undefined) {
      held = false
    } else {
      waiters.delete(next)
      next.granted = true
      next.wake()
    }
  })

  const acquire = Effect.suspend(() => {
    const ticket: Ticket = { granted: false, wake: () => {} }
    return Effect.async<void>((resume) => {
      if (!held) {
        held = ticket.granted = true
        return resume(Effect.void)
      }
      ticket.wake = () => resume(Effect.void)
      waiters.add(ticket)
      return Effect.sync(() => {
        waiters.delete(ticket)
      })
    }).pipe(
      // interrupted after the permit was handed over, before the caller got it: pass it on
      Effect.onInterrupt(() => ticket.granted ? release : Effect.void)
    )
  })

  return {
    withLock: (self) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(restore(acquire), Effect.ensuring(restore(self), release))
      ),
    // Forced interruptible: @effect/sql acquires the transaction connection in an
    // uninterruptible region, but nothing is held while waiting.
    acquireScoped: Effect.uninterruptible(
      Effect.zipRight(Effect.interruptible(acquire), Effect.addFinalizer(() => release))
    )
  }
}

// --- statements -------------------------------------------------------------

/** How many prepared statements the session keeps; the least recently used is closed past it. */
const STATEMENT_CACHE_SIZE = 256

interface StatementCache {
  readonly get: (sql: string) => string | undefined
  readonly nextName: () => string
  readonly add: (sql: string, name: string) => void
  readonly drop: (sql: string) => void
  /** Statements to close with the next batch (closing one that is gone is no error). */
  readonly takeClosing: () => Array<string>
}

/** Statement names are unique in the process: clients may share a PGlite instance. */
const statementPrefix = `effect_sql_pglite_${Math.random().toString(36).slice(2, 8)}_`
let statementCounter = 0

const makeStatementCache = (capacity: number): StatementCache => {
  const names = new Map<string, string>() // least recently used first
  let closing: Array<string> = []
  const drop = (sql: string) => {
    const name = names.get(sql)
    if (name === undefined) return
    names.delete(sql)
    closing.push(name)
  }
  return {
    get: (sql) => {
      const name = names.get(sql)
      if (name !== undefined) {
        names.delete(sql)
        names.set(sql, name)
      }
      return name
    },
    nextName: () => `${statementPrefix}${++statementCounter}`,
    add: (sql, name) => {
      names.set(sql, name)
      if (names.size > capacity) drop(names.keys().next().value!)
    },
    drop,
    takeClosing: () => {
      const taken = closing
      closing = []
      return taken
    }
  }
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

type BackendMessage = Awaited<ReturnType<PGlite["execProtocolStream"]>>[number]
type DatabaseError = BackendMessage & { readonly code?: string; readonly message: string }

const isError = (message: BackendMessage): message is DatabaseError => message.name === "error"

/** Throws the batch's error, if any, with the statement, as `PGlite.query` does. */
const throwError = (messages: ReadonlyArray<BackendMessage>, query: string, params: ReadonlyArray<unknown>) => {
  const error = messages.find(isError)
  if (error !== undefined) throw Object.assign(error, { query, params })
}

// --- client -------------------------------------------------------------------

const ATTR_DB_SYSTEM_NAME = "db.system.name"
const ATTR_DB_NAMESPACE = "db.namespace"

const escapeIdentifier = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

const sqlError = (message: string) => (cause: unknown) =>
  new SqlError({ cause, message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

type TransformRows = (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

interface PgJson extends Statement.Custom<"PgJson", unknown> {}
// The PgClient compiler binds the "PgJson" custom kind as a (name-transformed) JSON parameter.
const PgJson = Statement.custom<PgJson>("PgJson")

/** Creates a client over a new PGlite instance (closed with the scope) or over `config.pglite`. */
export const make = (
  config: PgliteClientConfig
): Effect.Effect<PgliteClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    // One session, one permit. Closing waits for the running statement/transaction.
    const { acquireScoped, withLock: locked } = makeLock()

    const pglite = config.pglite ?? (yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create({ ...config.pgliteOptions, ...(config.dataDir ? { dataDir: config.dataDir } : {}) }),
        catch: sqlError("PgliteClient: failed to open the database")
      }),
      (db) => locked(Effect.tryPromise(() => db.close())).pipe(Effect.ignoreLogged)
    ))

    const compiler = makeCompiler(config.transformQueryNames, config.transformJson)
    const transformRows = config.transformResultNames
      ? Statement.defaultTransforms(config.transformResultNames, config.transformJson).array
      : undefined

    // The parsers of every type: PGlite's, with ours over them. Merged once here,
    // not per statement (PGlite's own per-query `parsers` option copies the whole
    // table at every statement).
    const allParsers: typeof pglite.parsers = { ...pglite.parsers, ...parsers }
    const statements = makeStatementCache(STATEMENT_CACHE_SIZE)

    // Without parameters use the simple protocol, which allows several statements,
    // like node-postgres does; with them the extended one, which takes one.
    // Parameters are sent as text made by `prepareValue` (as node-postgres does,
    // whatever the parameter's type), so no statement needs describing first.
    // A WASM statement cannot be cancelled, so it runs uninterruptibly and the
    // permit is only given back once PGlite is done with it.
    const run = (sql: string, params: ReadonlyArray<unknown>, rowMode: RowMode) =>
      Effect.uninterruptible(Effect.tryPromise({
        try: (): Promise<ReadonlyArray<Results>> =>
          params.length === 0 ? simple(sql, rowMode) : extended(sql, params.map(prepareValue), rowMode),
        catch: sqlError("Failed to execute statement")
      }))

    /** Sends a batch of messages in one call, as `PGlite.query` would, under PGlite's own locks. */
    const send = (message: Uint8Array) =>
      pglite._runExclusiveTransaction(() =>
        pglite.runExclusive(async () => {
          if (pglite.closed) throw new Error("PGlite is closed")
          const messages = await pglite.execProtocolStream(message, { syncToFs: false, throwOnError: false })
          const inTransaction = pglite.isInTransaction()
          // Outside a transaction a statement is done: let a file system that buffers write it out.
          if (!inTransaction) await pglite.syncToFs()
          return { messages, inTransaction }
        })
      )

    const simple = async (sql: string, rowMode: RowMode) => {
      const { messages } = await send(concat([PgProtocol.serialize.query(sql), PgProtocol.serialize.sync()]))
      throwError(messages, sql, [])
      return PgParse.parseResults(messages, allParsers, { rowMode })
    }

    const extended = async (
      sql: string,
      values: Array<string | null>,
      rowMode: RowMode
    ): Promise<ReadonlyArray<Results>> => {
      const prepared = statements.get(sql)
      const name = prepared ?? statements.nextName()
      const parts = statements.takeClosing().map((closing) => PgProtocol.serialize.close({ type: "S", name: closing }))
      if (prepared === undefined) parts.push(PgProtocol.serialize.parse({ name, text: sql }))
      parts.push(
        PgProtocol.serialize.bind({ statement: name, values }),
        PgProtocol.serialize.describe({ type: "P" }),
        PgProtocol.serialize.execute({}),
        PgProtocol.serialize.sync()
      )
      const { inTransaction, messages } = await send(concat(parts))
      if (prepared === undefined && messages.some((m) => m.name === "parseComplete")) statements.add(sql, name)
      const error = messages.find(isError)
      // A statement whose result changed shape (DDL since it was prepared) or that is gone
      // (`DEALLOCATE`, `DISCARD`) is prepared afresh: at once outside a transaction, where
      // nothing ran (as `@effect/sql-pg`'s driver does); inside one, which the error
      // aborted, for the next statement.
      if (error !== undefined && prepared !== undefined && (error.code === "0A000" || error.code === "26000")) {
        statements.drop(sql)
        if (!inTransaction) return extended(sql, values, rowMode)
      }
      throwError(messages, sql, values)
      return PgParse.parseResults(messages, allParsers, { rowMode })
    }
    // A multi-statement text yields one row list per statement, as in node-postgres.
    const rowsOf = (results: ReadonlyArray<Results>): ReadonlyArray<any> =>
      results.length === 1 ? results[0].rows : results.map((result) => result.rows)

    const makeConnection = (
      lock: <A>(effect: Effect.Effect<A, SqlError>) => Effect.Effect<A, SqlError>
    ): Connection => {
      const rows = (sql: string, params: ReadonlyArray<unknown>, transform: TransformRows) =>
        lock(Effect.map(run(sql, params, "object"), (results) => {
          const rows = rowsOf(results)
          return transform ? transform(rows) : rows
        }))
      return {
        execute: rows,
        executeUnprepared: rows,
        executeRaw: (sql, params) =>
          lock(Effect.map(run(sql, params, "object"), (results) => results.length === 1 ? results[0] : results)),
        executeValues: (sql, params) => lock(Effect.map(run(sql, params, "array"), rowsOf)),
        // No cursors in PGlite: the whole result is read, then emitted.
        executeStream: (sql, params, transform) => Stream.fromIterableEffect(rows(sql, params, transform))
      }
    }

    // Outside a transaction every statement takes the permit itself.
    const connection = makeConnection(locked)
    // A transaction (or `reserve`) holds the permit until its scope closes; its
    // statements run without re-acquiring it.
    const reservedConnection = makeConnection((effect) => effect)
    const reserve = Effect.as(acquireScoped, reservedConnection)

    const client = yield* Client.make({
      acquirer: Effect.succeed(connection),
      transactionAcquirer: reserve,
      compiler,
      spanAttributes: [
        ...(config.spanAttributes ? Object.entries(config.spanAttributes) : []),
        [ATTR_DB_SYSTEM_NAME, "postgresql"],
        [ATTR_DB_NAMESPACE, "postgres"]
      ],
      transformRows
    })

    // LISTEN/UNLISTEN once per channel however many streams listen to it.
    const listeners = new Map<string, number>()
    const listen = (channel: string) =>
      Stream.asyncPush<string, SqlError>((emit) =>
        Effect.acquireRelease(
          locked(Effect.tryPromise({
            try: async () => {
              const count = listeners.get(channel) ?? 0
              if (count === 0) await pglite.exec(`LISTEN ${escapeIdentifier(channel)}`)
              listeners.set(channel, count + 1)
              return pglite.onNotification((name, payload) => {
                if (name === channel) emit.single(payload)
              })
            },
            catch: sqlError("Failed to listen")
          })),
          (unsubscribe) =>
            locked(Effect.tryPromise(async () => {
              unsubscribe()
              const count = (listeners.get(channel) ?? 1) - 1
              if (count > 0) {
                listeners.set(channel, count)
              } else {
                listeners.delete(channel)
                if (!pglite.closed) await pglite.exec(`UNLISTEN ${escapeIdentifier(channel)}`)
              }
            })).pipe(Effect.ignore)
        )
      )

    return Object.assign(client, {
      [TypeId]: TypeId,
      config,
      pglite,
      json: (value: unknown) => PgJson(value, undefined, undefined),
      listen,
      // Through the client so that it joins an open transaction instead of waiting for it.
      notify: (channel: string, payload: string) =>
        Effect.asVoid(client`SELECT pg_notify(${channel}, ${payload})`.withoutTransform)
    }) as PgliteClient
  })

const toContext = (client: PgliteClient) =>
  Context.make(PgliteClient, client).pipe(Context.add(Client.SqlClient, client))

/** Layer providing `PgliteClient` and `SqlClient`; the database lives as long as the layer. */
export const layer = (config: PgliteClientConfig): Layer.Layer<PgliteClient | Client.SqlClient, SqlError> =>
  Layer.scopedContext(Effect.map(make(config), toContext)).pipe(Layer.provide(Reactivity.layer))

/** `layer` with its options read from `Config`. */
export const layerConfig = (
  config: Config.Config.Wrap<PgliteClientConfig>
): Layer.Layer<PgliteClient | Client.SqlClient, ConfigError.ConfigError | SqlError> =>
  Layer.scopedContext(Config.unwrap(config).pipe(Effect.flatMap(make), Effect.map(toContext))).pipe(
    Layer.provide(Reactivity.layer)
  )
