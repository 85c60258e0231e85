import * as Reactivity from "@effect/experimental/Reactivity"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { assert, describe, it, layer } from "@effect/vitest"
import {
  Chunk,
  Config,
  ConfigProvider,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  Option,
  Ref,
  Stream,
  String as Str
} from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { PgliteClient } from "../src/index.js"

// Fails the test instead of hanging when something deadlocks.
const noDeadlock = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(self, { duration: Duration.seconds(10), onTimeout: () => new Error("deadlock: timed out") })

const pgCode = (error: SqlError): unknown => (error.cause as { code?: unknown } | undefined)?.code

layer(PgliteClient.layer({}), { timeout: "60 seconds", excludeTestServices: true })(
  "PgliteClient (in-memory)",
  (it) => {
    it.effect("runs a basic query", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ one: number; greeting: string }>`SELECT 1 AS one, ${"hi"} AS greeting`
        assert.deepStrictEqual(rows, [{ one: 1, greeting: "hi" }])
      }))

    it.effect("maps result types like node-postgres", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<Record<string, unknown>>`SELECT
        1::int2 AS i2, 2::int4 AS i4, 9007199254740993::int8 AS i8, 12.50::numeric AS num,
        1.5::float4 AS f4, 2.25::float8 AS f8, true AS yes, false AS no, 'text'::text AS txt,
        '2024-05-06 07:08:09.123+02'::timestamptz AS tstz, '2024-05-06 07:08:09.5'::timestamp AS ts,
        '2024-05-06'::date AS d, '{"a":[1,2]}'::json AS js, '{"b":true}'::jsonb AS jsb, NULL::text AS nothing,
        '{1,NULL,3}'::int8[] AS i8s, '{1,2}'::int4[] AS i4s, '{x,"y z"}'::text[] AS txts,
        '\\x00ff10'::bytea AS bytes, 'infinity'::timestamptz AS inf`
        assert.strictEqual(row.i2, 1)
        assert.strictEqual(row.i4, 2)
        assert.strictEqual(row.i8, "9007199254740993")
        assert.strictEqual(row.num, "12.50")
        assert.strictEqual(row.f4, 1.5)
        assert.strictEqual(row.f8, 2.25)
        assert.strictEqual(row.yes, true)
        assert.strictEqual(row.no, false)
        assert.strictEqual(row.txt, "text")
        assert.instanceOf(row.tstz, Date)
        assert.strictEqual((row.tstz as Date).toISOString(), "2024-05-06T05:08:09.123Z")
        // without a zone: local wall-clock time, as pg does
        assert.instanceOf(row.ts, Date)
        assert.strictEqual((row.ts as Date).getTime(), new Date(2024, 4, 6, 7, 8, 9, 500).getTime())
        assert.strictEqual((row.d as Date).getTime(), new Date(2024, 4, 6).getTime())
        assert.deepStrictEqual(row.js, { a: [1, 2] })
        assert.deepStrictEqual(row.jsb, { b: true })
        assert.strictEqual(row.nothing, null)
        assert.deepStrictEqual(row.i8s, ["1", null, "3"])
        assert.deepStrictEqual(row.i4s, [1, 2])
        assert.deepStrictEqual(row.txts, ["x", "y z"])
        assert.deepStrictEqual(Array.from(row.bytes as Uint8Array), [0, 255, 16])
        assert.strictEqual(row.inf, Infinity)
      }))

    it.effect("binds every parameter type", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE params (
        i8 int8, i4 int4, f8 float8, num numeric, txt text, yes bool, at timestamptz, local_at timestamp,
        nothing text, bytes bytea, ints int4[], texts text[], doc jsonb, list jsonb
      )`
        const at = new Date("2024-01-02T03:04:05.678Z")
        yield* sql`INSERT INTO params ${
          sql.insert({
            i8: 9007199254740993n,
            i4: 42,
            f8: 1.25,
            num: "1234567890.0123456789",
            txt: "it's \"quoted\" \\ text",
            yes: true,
            at,
            local_at: at,
            nothing: null,
            bytes: new Uint8Array([1, 2, 254]),
            ints: [1, 2, 3],
            texts: ["a", "b\"c", "d,e", null],
            doc: { nested: { n: 1, s: "x" }, arr: [1, "two"] },
            list: JSON.stringify([1, 2]) // pg binds JS arrays as Postgres arrays, so JSON arrays go as text
          })
        }`
        const [row] = yield* sql<Record<string, unknown>>`SELECT * FROM params`
        assert.deepStrictEqual(row, {
          i8: "9007199254740993",
          i4: 42,
          f8: 1.25,
          num: "1234567890.0123456789",
          txt: "it's \"quoted\" \\ text",
          yes: true,
          at,
          local_at: at,
          nothing: null,
          bytes: new Uint8Array([1, 2, 254]),
          ints: [1, 2, 3],
          texts: ["a", "b\"c", "d,e", null],
          doc: { nested: { n: 1, s: "x" }, arr: [1, "two"] },
          list: [1, 2]
        })

        // arrays: nested, with NULLs, of dates and bigints
        const [arrays] = yield* sql<Record<string, unknown>>`SELECT
        ${[[1, 2], [3, 4]]}::int4[] AS matrix, ${[at, null]}::timestamptz[] AS dates,
        ${[1n, 9007199254740993n]}::int8[] AS bigs, ${["1.5", "2"]}::numeric[] AS nums`
        assert.deepStrictEqual(arrays, {
          matrix: [[1, 2], [3, 4]],
          dates: [at, null],
          bigs: ["1", "9007199254740993"],
          nums: [1.5, 2] // pg-types parses numeric[] (unlike numeric) as numbers
        })

        // bigint / Date / boolean / bytes directly as parameters
        const [direct] = yield* sql<Record<string, unknown>>`SELECT
        ${123n}::int8 + 1 AS next, ${at}::timestamptz = ${at.toISOString()}::timestamptz AS same_instant,
        ${false}::bool AS flag, ${true} AS untyped, ${new Uint8Array([
          7
        ])}::bytea AS one_byte, ${1.5}::float8 * 2 AS doubled`
        assert.deepStrictEqual(direct, {
          next: "124",
          same_instant: true,
          flag: false,
          untyped: "true", // an untyped parameter is text, as with pg
          one_byte: new Uint8Array([7]),
          doubled: 3
        })
      }))

    it.effect("compiles and runs sql.insert, sql.in, sql.and, sql.json", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pg = yield* PgliteClient.PgliteClient
        yield* sql`CREATE TABLE people (id serial PRIMARY KEY, name text NOT NULL, age int4, meta jsonb)`
        const inserted = yield* sql<{ id: number; name: string }>`INSERT INTO people ${
          sql.insert([{ name: "ann", age: 30 }, { name: "bob", age: 40 }, { name: "cy", age: 50 }])
        } RETURNING id, name`
        assert.deepStrictEqual(inserted, [{ id: 1, name: "ann" }, { id: 2, name: "bob" }, { id: 3, name: "cy" }])

        const inQuery = sql`SELECT name FROM people WHERE ${sql.in("id", [1, 3])} ORDER BY id`
        assert.deepStrictEqual(inQuery.compile()[0], `SELECT name FROM people WHERE "id" IN ($1,$2) ORDER BY id`)
        assert.deepStrictEqual(yield* inQuery, [{ name: "ann" }, { name: "cy" }])

        const andRows = yield* sql<{ name: string }>`SELECT name FROM people WHERE ${
          sql.and([sql`age > ${35}`, sql`name <> ${"cy"}`])
        }`
        assert.deepStrictEqual(andRows, [{ name: "bob" }])

        yield* sql`UPDATE people SET meta = ${pg.json({ tags: ["a"], n: 1 })} WHERE id = ${2}`
        const [meta] = yield* sql<{ meta: unknown }>`SELECT meta FROM people WHERE id = 2`
        assert.deepStrictEqual(meta.meta, { tags: ["a"], n: 1 })

        const updated = yield* sql<{ id: number; age: number }>`UPDATE people SET ${
          sql.update({ age: 31 })
        } WHERE id = ${1} RETURNING id, age`
        assert.deepStrictEqual(updated, [{ id: 1, age: 31 }])
      }))

    it.effect("supports values, raw, unprepared, stream and multi-statement unsafe", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const values = yield* sql`SELECT 1::int4 AS a, 'x' AS b UNION ALL SELECT ${2}::int4, ${"y"}`.values
        assert.deepStrictEqual(values, [[1, "x"], [2, "y"]])

        const raw = (yield* sql`SELECT 1 AS a`.raw) as { rows: Array<unknown>; command: string }
        assert.deepStrictEqual(raw.rows, [{ a: 1 }])
        assert.strictEqual(raw.command, "SELECT")

        assert.deepStrictEqual(yield* sql`SELECT ${5}::int4 AS five`.unprepared, [{ five: 5 }])

        const streamed = yield* Stream.runCollect(
          sql<{ n: number }>`SELECT generate_series(1, ${4}) AS n`.stream
        )
        assert.deepStrictEqual(Chunk.toReadonlyArray(streamed), [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }])

        const multi = yield* sql.unsafe(
          "CREATE TABLE multi (id int4); INSERT INTO multi VALUES (1), (2); SELECT count(*) AS n FROM multi"
        )
        assert.deepStrictEqual(multi, [[], [], [{ n: "2" }]])
      }))

    it.effect("commits a transaction and rolls back on failure", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE tx_items (id int4 PRIMARY KEY)`
        yield* sql.withTransaction(sql`INSERT INTO tx_items VALUES (1), (2)`)
        const failed = yield* sql.withTransaction(
          Effect.zipRight(sql`INSERT INTO tx_items VALUES (3)`, Effect.fail("boom" as const))
        ).pipe(Effect.flip)
        assert.strictEqual(failed, "boom")
        const rows = yield* sql<{ id: number }>`SELECT id FROM tx_items ORDER BY id`
        assert.deepStrictEqual(rows, [{ id: 1 }, { id: 2 }])
        // the session is not left inside a transaction
        const pg = yield* PgliteClient.PgliteClient
        assert.isFalse(pg.pglite.isInTransaction())
      }))

    it.effect("rolls back only the inner part of a nested transaction (savepoint)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE nested (name text)`
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO nested VALUES ('outer-before')`
          const inner = yield* sql.withTransaction(
            Effect.zipRight(sql`INSERT INTO nested VALUES ('inner')`, Effect.fail("inner failed" as const))
          ).pipe(Effect.flip)
          assert.strictEqual(inner, "inner failed")
          yield* sql.withTransaction(sql`INSERT INTO nested VALUES ('inner-ok')`)
          yield* sql`INSERT INTO nested VALUES ('outer-after')`
        }))
        const rows = yield* sql<{ name: string }>`SELECT name FROM nested ORDER BY name`
        assert.deepStrictEqual(rows.map((r) => r.name), ["inner-ok", "outer-after", "outer-before"])
      }))

    it.effect("concurrent transactions never interleave", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE counter (n int4 NOT NULL)`
        yield* sql`INSERT INTO counter VALUES (0)`
        const log = yield* Ref.make<Array<string>>([])
        const n = 8
        yield* Effect.forEach(
          Array.from({ length: n }, (_, i) => i),
          (i) =>
            sql.withTransaction(Effect.gen(function*() {
              yield* Ref.update(log, (l) => [...l, `begin ${i}`])
              const [{ n }] = yield* sql<{ n: number }>`SELECT n FROM counter`
              yield* Effect.sleep(Duration.millis(10))
              yield* sql`UPDATE counter SET n = ${n + 1}`
              yield* Ref.update(log, (l) => [...l, `end ${i}`])
            })),
          { concurrency: "unbounded", discard: true }
        ).pipe(noDeadlock)
        const [{ n: final }] = yield* sql<{ n: number }>`SELECT n FROM counter`
        assert.strictEqual(final, n)
        const entries = yield* Ref.get(log)
        assert.strictEqual(entries.length, 2 * n)
        for (let i = 0; i < entries.length; i += 2) {
          assert.strictEqual(entries[i + 1], entries[i]!.replace("begin", "end"))
        }
      }))

    it.effect("a statement from another fiber waits for an open transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE waits (id int4)`
        const started = yield* Deferred.make<void>()
        const tx = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO waits VALUES (1)`
          yield* Deferred.succeed(started, undefined)
          yield* Effect.sleep(Duration.millis(150))
          yield* sql`INSERT INTO waits VALUES (2)`
        })).pipe(Effect.fork)
        yield* Deferred.await(started)
        // Had it run inside the open transaction (same session) it would see 1 row.
        const [{ count }] = yield* sql<{ count: string }>`SELECT count(*) AS count FROM waits`.pipe(noDeadlock)
        assert.strictEqual(count, "2")
        yield* Fiber.join(tx)

        // and it really waited for the commit: a rolled back transaction leaves nothing behind
        const started2 = yield* Deferred.make<void>()
        const failing = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO waits VALUES (3)`
          yield* Deferred.succeed(started2, undefined)
          yield* Effect.sleep(Duration.millis(50))
          return yield* Effect.fail("rollback")
        })).pipe(Effect.fork)
        yield* Deferred.await(started2)
        const [{ count: after }] = yield* sql<{ count: string }>`SELECT count(*) AS count FROM waits`.pipe(noDeadlock)
        assert.strictEqual(after, "2")
        assert.isTrue(Exit.isFailure(yield* Fiber.await(failing)))
      }))

    it.effect("interrupting fibers waiting for the lock does not deadlock later queries", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE interrupted (id int4)`
        const inside = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO interrupted VALUES (1)`
          yield* Deferred.succeed(inside, undefined)
          yield* Deferred.await(release)
        })).pipe(Effect.fork)
        yield* Deferred.await(inside)

        const waitingStatement = yield* Effect.fork(sql`INSERT INTO interrupted VALUES (2)`)
        const waitingTransaction = yield* Effect.fork(sql.withTransaction(sql`INSERT INTO interrupted VALUES (3)`))
        yield* Effect.sleep(Duration.millis(20))
        // both are blocked behind the open transaction
        assert.isTrue(Option.isNone(yield* Fiber.poll(waitingStatement)))
        assert.isTrue(Option.isNone(yield* Fiber.poll(waitingTransaction)))
        // interruption is immediate, not after the transaction ends
        yield* Fiber.interrupt(waitingStatement).pipe(noDeadlock)
        yield* Fiber.interrupt(waitingTransaction).pipe(noDeadlock)

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const rows = yield* sql<{ id: number }>`SELECT id FROM interrupted ORDER BY id`.pipe(noDeadlock)
        assert.deepStrictEqual(rows, [{ id: 1 }])

        // interrupting a fiber inside a transaction rolls it back and frees the lock
        const inside2 = yield* Deferred.make<void>()
        const victim = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO interrupted VALUES (4)`
          yield* Deferred.succeed(inside2, undefined)
          yield* Effect.never
        })).pipe(Effect.fork)
        yield* Deferred.await(inside2)
        yield* Fiber.interrupt(victim).pipe(noDeadlock)
        const after = yield* sql<{ id: number }>`SELECT id FROM interrupted ORDER BY id`.pipe(noDeadlock)
        assert.deepStrictEqual(after, [{ id: 1 }])
      }))

    it.effect("serves waiting fibers in order: a statement loop does not starve others", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const done = yield* Ref.make(0)
        const loop = yield* Effect.fork(
          Effect.repeatN(Effect.zipRight(sql`SELECT 1`, Ref.update(done, (n) => n + 1)), 499)
        )
        yield* Effect.yieldNow()
        yield* sql`SELECT 2`.pipe(noDeadlock)
        // PGlite answers within microtasks; a barging lock would let the loop finish all 500 first
        assert.isBelow(yield* Ref.get(done), 10)
        yield* Fiber.join(loop)
        assert.strictEqual(yield* Ref.get(done), 500)
      }))

    it.effect("runs SELECT ... FOR UPDATE SKIP LOCKED", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE jobs (id int4 PRIMARY KEY, taken bool NOT NULL DEFAULT false)`
        yield* sql`INSERT INTO jobs (id) VALUES (1), (2)`
        const claimed = yield* sql.withTransaction(Effect.gen(function*() {
          const rows = yield* sql<
            { id: number }
          >`SELECT id FROM jobs WHERE NOT taken ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`
          yield* sql`UPDATE jobs SET taken = true WHERE ${sql.in("id", rows.map((r) => r.id))}`
          return rows
        }))
        assert.deepStrictEqual(claimed, [{ id: 1 }])
        const next = yield* sql<{ id: number }>`SELECT id FROM jobs WHERE NOT taken FOR UPDATE SKIP LOCKED`
        assert.deepStrictEqual(next, [{ id: 2 }])
      }))

    it.effect("keeps Postgres error codes reachable through the cause", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE uniq (id int4 PRIMARY KEY, qty int4 CHECK (qty >= 0))`
        yield* sql`INSERT INTO uniq VALUES (1, 1)`
        const duplicate = yield* sql`INSERT INTO uniq VALUES (${1}, ${1})`.pipe(Effect.flip)
        assert.instanceOf(duplicate, SqlError)
        assert.strictEqual(pgCode(duplicate), "23505")
        assert.include(duplicate.message, "duplicate key value violates unique constraint")
        assert.strictEqual((duplicate.cause as { constraint?: string }).constraint, "uniq_pkey")

        const check = yield* sql`INSERT INTO uniq VALUES (${2}, ${-1})`.pipe(Effect.flip)
        assert.strictEqual(pgCode(check), "23514")

        // parameterless statements go through exec and keep their code too
        const syntax = yield* sql.unsafe("SELEC 1").pipe(Effect.flip)
        assert.strictEqual(pgCode(syntax), "42601")

        // inside a transaction the error fails the transaction, which rolls back
        const inTx = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO uniq VALUES (${3}, ${3})`
          yield* sql`INSERT INTO uniq VALUES (${1}, ${1})`
        })).pipe(Effect.flip)
        assert.strictEqual(pgCode(inTx as SqlError), "23505")
        const ids = yield* sql<{ id: number }>`SELECT id FROM uniq ORDER BY id`
        assert.deepStrictEqual(ids, [{ id: 1 }])
      }))

    it.effect("runs Migrator migrations with several statements", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const migrate = Migrator.make({})({
          loader: Migrator.fromRecord({
            "1_create_tables": Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql`
              CREATE TABLE authors (id serial PRIMARY KEY, name text NOT NULL);
              CREATE TABLE books (id serial PRIMARY KEY, author_id int4 REFERENCES authors (id), title text);
              CREATE INDEX books_author_idx ON books (author_id);
            `),
            "2_seed": Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql.unsafe(`
              INSERT INTO authors (name) VALUES ('ursula');
              INSERT INTO books (author_id, title) VALUES (1, 'the dispossessed'), (1, 'the lathe of heaven');
            `))
          })
        })
        const ran = yield* migrate
        assert.deepStrictEqual(ran, [[1, "create_tables"], [2, "seed"]])
        assert.deepStrictEqual(yield* migrate, [])
        const rows = yield* sql<{ title: string }>`SELECT title FROM books ORDER BY id`
        assert.deepStrictEqual(rows.map((r) => r.title), ["the dispossessed", "the lathe of heaven"])
        const done = yield* sql<{ migration_id: number }>`SELECT migration_id FROM effect_sql_migrations ORDER BY 1`
        assert.deepStrictEqual(done, [{ migration_id: 1 }, { migration_id: 2 }])
      }))

    it.effect("listen / notify", () =>
      Effect.gen(function*() {
        const pg = yield* PgliteClient.PgliteClient
        const received = yield* pg.listen("Mixed Case").pipe(Stream.take(2), Stream.runCollect, Effect.fork)
        // wait until the LISTEN is in place
        yield* pg<{ c: string }>`SELECT pg_listening_channels() AS c`.pipe(
          Effect.repeat({ until: (rows) => rows.some((r) => r.c === "Mixed Case") }),
          noDeadlock
        )
        yield* pg.notify("other", "ignored")
        yield* pg.notify("Mixed Case", "first")
        // inside a transaction: delivered on commit, and no deadlock with the held lock
        yield* pg.withTransaction(pg.notify("Mixed Case", "second"))
        const payloads = yield* Fiber.join(received).pipe(noDeadlock)
        assert.deepStrictEqual(Chunk.toReadonlyArray(payloads), ["first", "second"])
        // the stream's end UNLISTENs
        const channels = yield* pg<{ c: string }>`SELECT pg_listening_channels() AS c`
        assert.deepStrictEqual(channels, [])
      }))

    it.effect("wraps an existing PGlite instance (with name transforms) without closing it", () =>
      Effect.gen(function*() {
        const shared = yield* PgliteClient.PgliteClient
        yield* shared`CREATE TABLE wrapped (user_id int4, display_name text)`
        const rows = yield* Effect.scoped(Effect.gen(function*() {
          const sql = yield* PgliteClient.make({
            pglite: shared.pglite,
            transformQueryNames: Str.camelToSnake,
            transformResultNames: Str.snakeToCamel
          })
          yield* sql`INSERT INTO wrapped ${sql.insert({ userId: 7, displayName: "Seven" })}`
          const transformed = yield* sql`SELECT * FROM wrapped`
          const plain = yield* sql.withoutTransforms()`SELECT * FROM wrapped`
          return { transformed, plain }
        })).pipe(Effect.provide(Reactivity.layer))
        assert.deepStrictEqual(rows.transformed, [{ userId: 7, displayName: "Seven" }])
        assert.deepStrictEqual(rows.plain, [{ user_id: 7, display_name: "Seven" }])
        assert.isFalse(shared.pglite.closed)
        assert.deepStrictEqual(yield* shared`SELECT 1 AS ok`, [{ ok: 1 }])
      }))

    it.effect("prepares a statement with parameters once, and keeps a bounded number", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const prepared = (marker: string) =>
          Effect.map(
            sql<
              { n: number }
            >`SELECT count(*)::int4 AS n FROM pg_prepared_statements WHERE statement LIKE ${`%${marker}%`}`,
            ([row]) => row.n
          )
        for (const value of [1, 2, 3]) {
          assert.deepStrictEqual(yield* sql`SELECT ${value}::int4 + 1 AS once_marker`, [{ once_marker: value + 1 }])
        }
        assert.strictEqual(yield* prepared("once_marker"), 1)
        for (let i = 0; i < 300; i++) yield* sql.unsafe(`SELECT $1::int4 AS many_marker_${i}`, [i])
        const kept = yield* prepared("many_marker_")
        assert.isAtMost(kept, 256)
        assert.isAtLeast(kept, 200)
        // The most recent ones are the ones kept, and still answer.
        assert.deepStrictEqual(yield* sql.unsafe(`SELECT $1::int4 AS many_marker_299`, [5]), [{ many_marker_299: 5 }])
      }))

    it.effect("prepares a statement afresh when its result changed shape or it was deallocated", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE shape (a int4)`
        yield* sql`INSERT INTO shape VALUES (1)`
        const select = sql<Record<string, unknown>>`SELECT * FROM shape WHERE a = ${1}`
        assert.deepStrictEqual(yield* select, [{ a: 1 }])
        // Outside a transaction the statement is prepared again at once.
        yield* sql`ALTER TABLE shape ADD COLUMN b text`
        assert.deepStrictEqual(yield* select, [{ a: 1, b: null }])
        // Inside one the error aborted it; the next statement prepares afresh.
        yield* sql`ALTER TABLE shape ADD COLUMN c text`
        const inTransaction = yield* Effect.flip(sql.withTransaction(select))
        assert.strictEqual(pgCode(inTransaction), "0A000")
        assert.deepStrictEqual(yield* select, [{ a: 1, b: null, c: null }])
        yield* sql`DEALLOCATE ALL`
        assert.deepStrictEqual(yield* select, [{ a: 1, b: null, c: null }])
      }))

    it.effect("reports a statement that fails to parse, every time", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (let i = 0; i < 2; i++) {
          const error = yield* Effect.flip(sql`SELEC ${1}`)
          assert.strictEqual(pgCode(error), "42601")
        }
        const error = yield* Effect.flip(sql`SELECT ${"x"}::int4 AS n`)
        assert.strictEqual(pgCode(error), "22P02")
        assert.deepStrictEqual(yield* sql`SELECT ${"7"}::int4 AS n`, [{ n: 7 }])
      }))
  }
)

describe("PgliteClient lifecycle", () => {
  it.scoped("closes PGlite when the scope closes", () =>
    Effect.gen(function*() {
      const pglite = yield* Effect.scoped(Effect.gen(function*() {
        const sql = yield* PgliteClient.make({})
        assert.deepStrictEqual(yield* sql`SELECT 1 AS one`, [{ one: 1 }])
        assert.isFalse(sql.pglite.closed)
        return sql.pglite
      })).pipe(Effect.provide(Reactivity.layer))
      assert.isTrue(pglite.closed)
    }))

  it.live("keeps data in a dataDir across reopen", () =>
    Effect.gen(function*() {
      const tmp = yield* Effect.acquireRelease(
        Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "sql-pglite-"))),
        (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
      )
      const dataDir = Path.join(tmp, "db")
      const open = <A, E>(f: (sql: PgliteClient.PgliteClient) => Effect.Effect<A, E>) =>
        Effect.scoped(Effect.flatMap(PgliteClient.make({ dataDir }), f)).pipe(Effect.provide(Reactivity.layer))

      yield* open((sql) =>
        Effect.gen(function*() {
          assert.strictEqual(sql.pglite.dataDir, dataDir)
          yield* sql`CREATE TABLE kept (id int4, at timestamptz)`
          yield* sql`INSERT INTO kept ${sql.insert({ id: 1, at: new Date("2020-02-02T00:00:00Z") })}`
          yield* sql.withTransaction(sql`INSERT INTO kept VALUES (${2}, now())`)
        })
      )
      assert.isTrue(Fs.existsSync(Path.join(dataDir, "PG_VERSION")))
      // reopen through layerConfig
      const rows = yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ id: number; at: Date }>`SELECT id, at FROM kept ORDER BY id`
      ).pipe(
        Effect.provide(PgliteClient.layerConfig({ dataDir: Config.string("PGLITE_DATA_DIR") })),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PGLITE_DATA_DIR", dataDir]])))
      )
      assert.deepStrictEqual(rows.map((r) => r.id), [1, 2])
      assert.strictEqual(rows[0]!.at.toISOString(), "2020-02-02T00:00:00.000Z")
    }).pipe(Effect.scoped))
})
