/**
 * The built binary as people and scripts run it: its exit statuses, its colours (only on a
 * terminal, never with NO_COLOR), and the code cache it starts from.
 */
import { targets } from "@databundle/core/testing"
import { colorWanted } from "@databundle/terminal/Tty"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { BINARY, spawnCli, startServer, tempDir, type TestServer } from "./Harness.js"

/** The bundled program itself, which the binary runs for everything but `--version`. */
const PROGRAM = path.join(path.dirname(BINARY), "main.cjs")

describe("colour", () => {
  it("is on for a terminal only, off with NO_COLOR, forced with FORCE_COLOR", () => {
    assert.isTrue(colorWanted(true, {}))
    assert.isFalse(colorWanted(false, {}))
    assert.isFalse(colorWanted(true, { noColor: "1" }))
    assert.isTrue(colorWanted(true, { noColor: "" }))
    assert.isTrue(colorWanted(false, { forceColor: "1" }))
    assert.isFalse(colorWanted(false, { forceColor: "0" }))
    assert.isFalse(colorWanted(true, { noColor: "1", forceColor: "1" }))
  })
})

describe(`the binary on ${targets[0]!.name}`, () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer(targets[0]!)
  })
  afterAll(() => server?.dispose())

  const run = (args: ReadonlyArray<string>, env: Record<string, string>, dir: string) =>
    Effect.promise(async () => {
      const child = spawnCli(args, env, dir)
      const code = await child.exited
      return { code, stdout: child.stdout(), stderr: child.stderr() }
    })

  it.scopedLive("prints its version, exits 1 with one line without a key, and 2 on bad usage", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const version = yield* run(["--version"], {}, dir)
      assert.strictEqual(version.code, 0)
      assert.match(version.stdout, /^\d+\.\d+\.\d+\n/)
      // The binary answers `--version` without the program, in the program's own words.
      const cache = path.join(dir, "cache", "bundles")
      assert.isFalse(fs.existsSync(cache))
      const program = yield* Effect.promise(() =>
        new Promise<string>((resolve, reject) =>
          execFile(
            process.execPath,
            [PROGRAM, "--version"],
            { env: { PATH: process.env.PATH ?? "" } },
            (error, stdout) => error === null ? resolve(stdout) : reject(error)
          )
        )
      )
      assert.strictEqual(version.stdout, program)
      // The first run of the program wrote the code cache, in a directory of this user's only.
      const help = yield* run(["--help"], {}, dir)
      assert.strictEqual(help.code, 0)
      assert.lengthOf(fs.readdirSync(cache).filter((f) => f.endsWith(".v8cache")), 1)
      assert.strictEqual(fs.statSync(cache).mode & 0o777, 0o700)
      assert.strictEqual((yield* run(["--help"], {}, dir)).stdout, help.stdout)

      const missing = yield* run(["balance", "--json"], { BUNDLES_CONFIG: path.join(dir, "none.json") }, dir)
      assert.strictEqual(missing.code, 1)
      assert.strictEqual(
        missing.stderr,
        "error: No API key: pass --api-key, set BUNDLES_API_KEY, or run `bundles login` to save one\n"
      )
      assert.deepStrictEqual(JSON.parse(missing.stdout), { success: false, message: missing.stderr.slice(7, -1) })
      assert.strictEqual((yield* run(["buy"], {}, dir)).code, 2)
    }))

  it.scopedLive("colours only when asked and NO_COLOR is unset; never in --json", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { key } = yield* Effect.promise(() => server.account())
      const env = { BUNDLES_API_KEY: key, BUNDLES_BASE_URL: server.baseUrl }
      const piped = yield* run(["networks"], env, dir)
      assert.strictEqual(piped.code, 0, piped.stderr)
      assert.include(piped.stdout, "MTN")
      assert.notInclude(piped.stdout, "\x1b[")
      const forced = yield* run(["networks"], { ...env, FORCE_COLOR: "1" }, dir)
      assert.include(forced.stdout, "\x1b[")
      assert.notInclude((yield* run(["networks"], { ...env, FORCE_COLOR: "1", NO_COLOR: "1" }, dir)).stdout, "\x1b[")
      const help = yield* run(["--help"], { FORCE_COLOR: "1", NO_COLOR: "1" }, dir)
      assert.notInclude(help.stdout, "\x1b[")
      assert.include(help.stdout, "bulk")
      const body = yield* run(["networks", "--json"], { ...env, FORCE_COLOR: "1" }, dir)
      assert.notInclude(body.stdout, "\x1b[")
      assert.isTrue(JSON.parse(body.stdout).success)
    }))
})
