/**
 * `bundles-server backup FILE` and `restore FILE`: the embedded database (the data
 * directory's `pgdata/`) as one gzipped tar file, PGlite's own dump of its data directory.
 *
 * PGlite is one Postgres session inside one process, so neither command runs beside a
 * server on the same data directory: both take the data directory's lock, and refuse,
 * naming the server's process, while it is held. A backup is therefore a short stop (stop,
 * back up, start: seconds for a database of a few MB), and it is consistent: nothing
 * writes while it is taken. On Postgres (`DATABASE_URL`), `pg_dump` is the way (docs).
 *
 * A restore goes into a data directory with no database yet, never over one; the server
 * started on it applies any migrations the backup's release did not have.
 */
import * as Failure from "@databundle/terminal/Failure"
import { Args, Command } from "@effect/cli"
import { PGlite } from "@electric-sql/pglite"
import { Console, Effect, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DataDirLock from "./DataDirLock.js"
import * as ServerConfig from "./ServerConfig.js"

const refuse = (message: string) => Failure.failed(message, "none")

/** The data directory and its pgdata/, or a refusal when the server runs on Postgres. */
const embedded = (verb: string) =>
  Effect.gen(function*() {
    if (Option.isSome(yield* ServerConfig.databaseUrl)) {
      return yield* refuse(
        `${verb} works on the embedded database; DATABASE_URL names a Postgres server: use pg_dump and ` +
          "pg_restore there (docs/install.md, \"Backups\")."
      )
    }
    const dataDir = path.resolve(yield* ServerConfig.dataDir)
    return { dataDir, pgdata: path.join(dataDir, "pgdata") }
  })

/** Holds the data directory's lock for the scope, or refuses naming the process that holds it. */
const lock = (dataDir: string) =>
  DataDirLock.acquire(dataDir).pipe(
    Effect.catchAll((error) =>
      refuse(
        error instanceof DataDirLock.DataDirInUse
          ? `The embedded database in ${dataDir} is in use by process ${error.pid}: stop the server, then run this ` +
            "again (a backup takes seconds), and start it again."
          : `Cannot lock ${dataDir}: ${String(error)}`
      )
    )
  )

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`

/** Writes the embedded database to `file` (through a temporary file beside it, then renamed). */
export const backup = (file: string) =>
  Effect.scoped(Effect.gen(function*() {
    const { dataDir, pgdata } = yield* embedded("backup")
    if (!fs.existsSync(path.join(pgdata, "PG_VERSION"))) {
      return yield* refuse(`No embedded database in ${dataDir} (set BUNDLES_DATA_DIR to the server's data directory).`)
    }
    yield* lock(dataDir)
    const target = path.resolve(file)
    const partial = `${target}.partial`
    const size = yield* Effect.promise(async () => {
      const db = await PGlite.create(pgdata)
      try {
        const dump = await db.dumpDataDir("gzip")
        const bytes = new Uint8Array(await dump.arrayBuffer())
        fs.writeFileSync(partial, bytes, { mode: 0o600 })
        fs.renameSync(partial, target)
        return bytes.length
      } finally {
        await db.close()
      }
    })
    yield* Console.log(`Backed up the embedded database in ${dataDir} to ${target} (${kb(size)}).`)
  }))

/** Loads a backup into a data directory that holds no database yet. */
export const restore = (file: string) =>
  Effect.scoped(Effect.gen(function*() {
    const { dataDir, pgdata } = yield* embedded("restore")
    const source = path.resolve(file)
    if (!fs.existsSync(source)) return yield* refuse(`No backup file at ${source}.`)
    if (fs.existsSync(pgdata) && fs.readdirSync(pgdata).length > 0) {
      return yield* refuse(
        `${pgdata} already holds a database; a restore never replaces one. Restore into a new data directory ` +
          "(BUNDLES_DATA_DIR), or move this one away first."
      )
    }
    fs.mkdirSync(pgdata, { recursive: true, mode: 0o700 })
    yield* lock(dataDir)
    const orders = yield* Effect.tryPromise({
      try: async () => {
        const db = await PGlite.create(pgdata, { loadDataDir: new Blob([fs.readFileSync(source)]) })
        try {
          const result = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM orders")
          return result.rows[0]?.n ?? 0
        } finally {
          await db.close()
        }
      },
      catch: (error) => error
    }).pipe(
      Effect.tapError(() => Effect.sync(() => fs.rmSync(pgdata, { recursive: true, force: true }))),
      Effect.catchAll((error) => refuse(`${source} is not a backup of this server's database: ${String(error)}`))
    )
    yield* Console.log(
      `Restored ${source} into ${dataDir} (${orders} orders). Start the server with BUNDLES_DATA_DIR=${dataDir}; ` +
        "it applies any newer migrations."
    )
  }))

const fileArg = Args.file({ name: "FILE" })

/** `bundles-server backup FILE`. */
export const backupCommand = Command.make("backup", { file: fileArg }, ({ file }) => backup(file)).pipe(
  Command.withDescription("Write the embedded database to FILE (the server on that data directory must be stopped)")
)

/** `bundles-server restore FILE`. */
export const restoreCommand = Command.make(
  "restore",
  { file: Args.file({ name: "FILE", exists: "yes" }) },
  ({ file }) => restore(file)
).pipe(
  Command.withDescription("Load a backup into a data directory that holds no database yet (BUNDLES_DATA_DIR)")
)
