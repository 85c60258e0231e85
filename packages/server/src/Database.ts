/**
 * The database the server runs on: Postgres at `DATABASE_URL`, else the embedded PGlite
 * in the data directory (kept across restarts). Migrations are applied when it opens.
 */
import { Migrations, Prepared } from "@databundle/core"
import { Postgres } from "@databundle/sql-pg"
import { PgliteClient } from "@databundle/sql-pglite"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as DataDirLock from "./DataDirLock.js"
import * as EmbeddedDatabase from "./EmbeddedDatabase.js"
import * as ServerConfig from "./ServerConfig.js"

/** Which database is in use, for start-up messages. */
export type Kind = "postgres" | "embedded"

const client = Layer.unwrapScoped(Effect.gen(function*() {
  const url = yield* ServerConfig.databaseUrl
  if (Option.isSome(url)) {
    return Postgres.layer({
      url: url.value,
      applicationName: "bundles-server",
      prepare: (yield* ServerConfig.databasePrepared) ? Prepared.isPrepared : undefined
    })
  }
  const dataDir = yield* ServerConfig.dataDir
  const dir = path.join(dataDir, "pgdata")
  yield* Effect.promise(() => fs.mkdir(dir, { recursive: true, mode: 0o700 }))
  yield* DataDirLock.acquire(dataDir)
  yield* EmbeddedDatabase.baselineWasmOnly
  yield* EmbeddedDatabase.heapGrowth
  yield* EmbeddedDatabase.fromTemplate(dir, EmbeddedDatabase.templateBeside(import.meta.url))
  return PgliteClient.layer({ dataDir: dir, pgliteOptions: { startParams: [...EmbeddedDatabase.startParams] } })
}))

/** The SqlClient, migrated. */
export const layer: Layer.Layer<SqlClient.SqlClient, unknown> = Layer.effectDiscard(Migrations.migrate).pipe(
  Layer.provideMerge(client)
)

/** Which database `layer` opens. */
export const kind = Effect.map(ServerConfig.databaseUrl, (url): Kind => Option.isSome(url) ? "postgres" : "embedded")
