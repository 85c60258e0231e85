/**
 * A new embedded database is unpacked from the build's template (`dist/pgdata.tar.gz`, written
 * by `build.mjs`) and opened with the server's memory settings; a directory that holds a
 * database, or anything else, is left alone, and a broken template leaves nothing behind.
 */
import { Migrations } from "@databundle/core"
import { PgliteClient } from "@databundle/sql-pglite"
import { SqlClient } from "@effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as EmbeddedDatabase from "../src/EmbeddedDatabase.js"

const template = EmbeddedDatabase.templateBeside(new URL("../dist/bin.mjs", import.meta.url).href)

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "bundles-template-"))

describe.skipIf(template === undefined)("the embedded database's template (built)", () => {
  it.live(
    "makes a new data directory that opens, migrates and runs with the server's settings",
    () =>
      Effect.gen(function*() {
        const root = tempDir()
        const dir = path.join(root, "pgdata")
        fs.mkdirSync(dir)
        assert.isTrue(yield* EmbeddedDatabase.fromTemplate(dir, template))
        assert.isTrue(fs.existsSync(path.join(dir, "PG_VERSION")))
        assert.deepStrictEqual(fs.readdirSync(root), ["pgdata"], "no staging directory left")
        // A second start finds the database and leaves it alone.
        assert.isFalse(yield* EmbeddedDatabase.fromTemplate(dir, template))
        const settings = yield* Effect.scoped(Effect.gen(function*() {
          const context = yield* Layer.build(
            Layer.effectDiscard(Migrations.migrate).pipe(Layer.provideMerge(PgliteClient.layer({
              dataDir: dir,
              pgliteOptions: { startParams: [...EmbeddedDatabase.startParams] }
            })))
          )
          const sql = Context.get(context, SqlClient.SqlClient)
          const [row] = yield* sql<{ buffers: string; tables: number }>`
          SELECT current_setting('shared_buffers') AS buffers,
            (SELECT count(*)::int FROM information_schema.tables WHERE table_name = 'stats_order_days') AS tables`
          return row!
        }))
        assert.strictEqual(settings.buffers, "16MB")
        assert.strictEqual(settings.tables, 1)
        fs.rmSync(root, { recursive: true, force: true })
      }),
    { timeout: 120_000 }
  )

  it.live("leaves a directory with other files alone, and a broken template leaves nothing", () =>
    Effect.gen(function*() {
      const root = tempDir()
      const busy = path.join(root, "busy")
      fs.mkdirSync(busy)
      fs.writeFileSync(path.join(busy, "note"), "mine")
      assert.isFalse(yield* EmbeddedDatabase.fromTemplate(busy, template))
      assert.deepStrictEqual(fs.readdirSync(busy), ["note"])
      assert.isFalse(yield* EmbeddedDatabase.fromTemplate(path.join(root, "none"), undefined))

      const cut = path.join(root, "cut.tar.gz")
      fs.writeFileSync(cut, fs.readFileSync(template!).subarray(0, 100_000))
      const dir = path.join(root, "pgdata")
      const exit = yield* Effect.exit(EmbeddedDatabase.fromTemplate(dir, cut))
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(fs.readdirSync(root).sort(), ["busy", "cut.tar.gz"])
      fs.rmSync(root, { recursive: true, force: true })
    }))
})
