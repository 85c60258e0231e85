/**
 * Running as a service, on the built binary: `BUNDLES_ENV=production` refuses to start
 * without the settings production needs, naming each (before the database is opened), and
 * starts once they are there; `service print-unit` prints a unit that `systemd-analyze verify`
 * accepts without a word, which runs the binary itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Processes from "./Processes.js"

const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
    execFile(process.execPath, [Processes.BIN, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }, (
      error,
      stdout,
      stderr
    ) => resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })))
  })

const PRODUCTION = {
  BUNDLES_ENV: "production",
  BUNDLES_ADMIN_TOKEN: "adm_production_test_token_0123456789abcdef",
  BUNDLES_PUBLIC_URL: "https://bundles.example.com",
  BUNDLES_TRUSTED_PROXIES: "127.0.0.1",
  BUNDLES_SMTP_URL: "smtp://127.0.0.1:2525",
  BUNDLES_MAIL_FROM: "Data Bundles <no-reply@example.com>",
  BUNDLES_PROVIDER: "simulator",
  BUNDLES_PAYMENTS_PROVIDER: "simulator"
}

const systemdAnalyze = (() => {
  try {
    execFileSync("systemd-analyze", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

describe("production settings", () => {
  it.effect("with none of them, serve refuses and names every one, before opening the database", () =>
    Effect.gen(function*() {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-production-"))
      const result = yield* cli(["serve", "--demo", "--port", "0"], {
        BUNDLES_ENV: "production",
        BUNDLES_DATA_DIR: dataDir
      })
      assert.strictEqual(result.code, 1)
      for (
        const setting of [
          "BUNDLES_ADMIN_TOKEN:",
          "BUNDLES_PUBLIC_URL:",
          "TLS_CERT and TLS_KEY, or BUNDLES_TRUSTED_PROXIES:",
          "BUNDLES_SMTP_URL:",
          "BUNDLES_PROVIDER:",
          "BUNDLES_PAYMENTS_PROVIDER:",
          "--demo:"
        ]
      ) {
        assert.include(result.stderr, `\n  ${setting}`)
      }
      assert.include(result.stderr, "7 settings are fixed")
      assert.notInclude(result.stdout + result.stderr, "listening on")
      assert.deepStrictEqual(fs.readdirSync(dataDir), [])
      fs.rmSync(dataDir, { recursive: true, force: true })
    }))

  it.effect("wrong values are named with what is wrong; the rest pass", () =>
    Effect.gen(function*() {
      const result = yield* cli(["serve", "--port", "0"], {
        ...PRODUCTION,
        BUNDLES_ADMIN_TOKEN: "short",
        BUNDLES_PUBLIC_URL: "http://bundles.example.com"
      })
      assert.strictEqual(result.code, 1)
      assert.include(result.stderr, "2 settings are fixed")
      assert.include(result.stderr, "BUNDLES_ADMIN_TOKEN: at least 32 characters")
      assert.include(result.stderr, "BUNDLES_PUBLIC_URL: must be an https:// address, not http://bundles.example.com")
    }))

  // (Without BUNDLES_ENV nothing is asked: every other test starts a server so.)
  it.scoped("with all of them, it starts", () =>
    Effect.gen(function*() {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-production-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dataDir, { recursive: true, force: true })))
      const server = yield* Processes.start({ ...PRODUCTION, BUNDLES_DATA_DIR: dataDir })
      const health = yield* Effect.promise(() => fetch(`${server.url}/healthz`))
      assert.strictEqual(health.status, 200)
    }), 120_000)
})

describe("service print-unit", () => {
  it.effect("prints a unit that runs this binary with Node directly, in production mode", () =>
    Effect.gen(function*() {
      const result = yield* cli(["service", "print-unit"], {})
      assert.strictEqual(result.code, 0, result.stderr)
      const lines = result.stdout.split("\n")
      assert.include(lines, `ExecStart=${process.execPath} ${Processes.BIN} serve`)
      assert.include(lines, "Environment=BUNDLES_ENV=production")
      assert.include(lines, "KillSignal=SIGTERM")
      assert.include(lines, "StateDirectory=bundles")
      assert.notInclude(result.stdout, "pnpm")
      const other = yield* cli(["service", "print-unit", "--data-dir", "/srv/shop", "--user", "shop"], {})
      assert.include(other.stdout.split("\n"), "ReadWritePaths=/srv/shop")
      assert.include(other.stdout.split("\n"), "User=shop")
    }))

  it.effect.skipIf(!systemdAnalyze)(
    "systemd-analyze verify accepts it without a warning",
    () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-unit-"))
        const file = path.join(dir, "bundles.service")
        fs.writeFileSync(file, (yield* cli(["service", "print-unit"], {})).stdout)
        const verified = yield* Effect.async<{ code: number; output: string }>((resume) => {
          execFile(
            "systemd-analyze",
            ["verify", file],
            (error, stdout, stderr) =>
              resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), output: stdout + stderr }))
          )
        })
        fs.rmSync(dir, { recursive: true, force: true })
        assert.strictEqual(verified.code, 0, verified.output)
        // It exits 0 for unknown keys too, with a warning: silence is the test.
        assert.strictEqual(verified.output.trim(), "")
      })
  )
})
