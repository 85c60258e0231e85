/**
 * Both command lines, `bundles` (the reseller's) and `bundles-server admin` (the operator's),
 * held to the same terminal rules, command by command: colour only on a terminal that takes it
 * (`NO_COLOR` wins, `FORCE_COLOR` forces, a pipe gets none, the help included), tables fitted
 * to a terminal's width and never cut on a pipe, `--json` as one uncoloured JSON document, and
 * failures with the request id in their text and `{ success: false, message, ... }` as their
 * JSON body. Both run in-process (as their binaries run them), and the help once as binaries.
 */
import { ADMIN_TOKEN } from "@databundle/client/testing"
import { type Account, ApiError } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import * as ServerCli from "@databundle/server/Cli"
import { capturingConsole } from "@databundle/terminal/testing"
import { Tty, type TtyService } from "@databundle/terminal/Tty"
import { NodeContext } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Option, Schema } from "effect"
import { spawnSync } from "node:child_process"
import * as http from "node:http"
import type * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ResellerCli from "../src/Cli.js"
import { BINARY, startServer, type TestAccount, type TestServer } from "./Harness.js"

/** The terminal a run sees: colour on both streams or none, and stdout's width when it is a terminal. */
interface Screen {
  readonly color: boolean
  readonly width?: number
}

interface Run {
  readonly stdout: string
  readonly stderr: string
  readonly code: number
}

const ESC = "\x1b["

/** Runs a command line in-process on `screen` (or on the process's own terminal when none), capturing its output. */
const capture = (
  run: (argv: ReadonlyArray<string>) => Effect.Effect<void, unknown, NodeContext.NodeContext>,
  argv: ReadonlyArray<string>,
  env: Record<string, string>,
  screen: Screen | undefined
) =>
  Effect.gen(function*() {
    const { console: capturing, stderr, stdout } = yield* capturingConsole
    const tty: TtyService = {
      interactive: false,
      stderrIsTty: false,
      colorStdout: screen?.color ?? false,
      colorStderr: screen?.color ?? false,
      truecolor: true,
      columns: screen?.width ?? 80,
      width: screen?.width,
      write: (text) => Effect.sync(() => void stderr.push(text)),
      ask: () => Effect.succeed(Option.none()),
      askHidden: () => Effect.succeed(Option.none())
    }
    const layer = screen === undefined ? NodeContext.layer : Layer.merge(NodeContext.layer, Layer.succeed(Tty, tty))
    const exit = yield* run(argv).pipe(
      Effect.provide(layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.withConsole(capturing),
      Effect.exit
    )
    return {
      stdout: stdout.join("\n"),
      stderr: stderr.join("\n"),
      code: ResellerCli.exitCode(exit as Exit.Exit<unknown, unknown>)
    } satisfies Run
  })

/** One of the two command lines, pointed at a server. */
interface CommandLine {
  readonly name: string
  /** Runs `args` against the server at `origin`. */
  readonly run: (
    args: ReadonlyArray<string>,
    origin: string,
    screen?: Screen,
    env?: Record<string, string>
  ) => Effect.Effect<Run>
  /** Its commands that print a table. */
  readonly tables: ReadonlyArray<ReadonlyArray<string>>
  /** Its other commands that read. */
  readonly reads: ReadonlyArray<ReadonlyArray<string>>
  /** Its command groups, for their help. */
  readonly groups: ReadonlyArray<ReadonlyArray<string>>
  /** Its binary. */
  readonly binary: ReadonlyArray<string>
}

/** A server that answers every request with a 500 in the API's envelope, its request id in the body and the header. */
const REQUEST_ID = "req_both_command_lines_0001"
const failingServer = () =>
  new Promise<{ origin: string; close: () => Promise<void> }>((resolve) => {
    const body = JSON.stringify(
      Schema.encodeSync(ApiError.ServerError)(
        new ApiError.ServerError({ message: "Internal server error", request_id: REQUEST_ID })
      )
    )
    const server = http.createServer((_, response) => {
      response.writeHead(500, { "content-type": "application/json", "x-request-id": REQUEST_ID })
      response.end(body)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      resolve({
        origin: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => server.close(() => done()))
      })
    })
  })

const SERVER_BINARY = fileURLToPath(new URL("../../server/dist/bin.mjs", import.meta.url))

describe(`both command lines on ${targets[0]!.name}`, () => {
  let server: TestServer
  let account: TestAccount
  let failing: { origin: string; close: () => Promise<void> }
  beforeAll(async () => {
    server = await startServer(targets[0]!)
    account = await server.account({ funds: 100_000n, limits: { all: 1000, orders: 1000, balance: 1000 } })
    failing = await failingServer()
    // Rows for every table: a ledger for the first account (the catalogue reader's), an order.
    await server.fund(1 as Account.AccountId, 100n)
  })
  afterAll(async () => {
    await failing?.close()
    await server?.dispose()
  })

  const bundles: CommandLine = {
    name: "bundles",
    run: (args, origin, screen, env = {}) =>
      capture(
        ResellerCli.run,
        ["node", "bundles", ...args],
        {
          BUNDLES_API_KEY: account.key,
          BUNDLES_BASE_URL: origin,
          BUNDLES_CONFIG: path.join("/nonexistent", "c.json"),
          ...env
        },
        screen
      ),
    tables: [["networks"], ["bundles", "mtn"], ["orders", "list"]],
    reads: [["balance"]],
    groups: [[], ["orders"]],
    binary: [BINARY]
  }

  const admin: CommandLine = {
    name: "bundles-server admin",
    run: (args, origin, screen, env = {}) =>
      capture(
        ServerCli.run,
        ["node", "bundles-server", "admin", ...args, "--url", origin, "--token", ADMIN_TOKEN],
        env,
        screen
      ),
    tables: [["accounts", "list"], ["orders", "list"], ["wallet", "ledger", "--account", String(1)]],
    reads: [["audit"], ["accounts", "show", "1"]],
    groups: [[], ["accounts"], ["keys"], ["wallet"], ["orders"], ["catalog"]],
    binary: [SERVER_BINARY, "admin"]
  }

  const visible = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, "").length

  for (const cli of [bundles, admin]) {
    describe(cli.name, () => {
      it.scopedLive("colours a terminal only: none on a pipe, NO_COLOR wins over FORCE_COLOR", () =>
        Effect.gen(function*() {
          // An order, so that every table has a row.
          const bought = yield* bundles.run(
            ["buy", String(server.bundle("MTN 1GB").id), "0241234567", "--yes"],
            server.origin
          )
          assert.strictEqual(bought.code, 0, bought.stderr)
          for (const args of [...cli.tables, ...cli.reads]) {
            const piped = yield* cli.run(args, server.origin, { color: false })
            assert.strictEqual(piped.code, 0, `${args.join(" ")}: ${piped.stderr}`)
            assert.notInclude(piped.stdout + piped.stderr, ESC, args.join(" "))
            // The process's own terminal: vitest's stdout is a pipe; FORCE_COLOR forces, NO_COLOR wins.
            const auto = yield* cli.run(args, server.origin)
            assert.notInclude(auto.stdout, ESC, args.join(" "))
            const forcedPlain = yield* cli.run(args, server.origin, undefined, { FORCE_COLOR: "1", NO_COLOR: "1" })
            assert.notInclude(forcedPlain.stdout, ESC, args.join(" "))
          }
          for (const args of cli.tables) {
            const colored = yield* cli.run(args, server.origin, { color: true })
            assert.include(colored.stdout, ESC, `${args.join(" ")}: a bold header`)
            const forced = yield* cli.run(args, server.origin, undefined, { FORCE_COLOR: "1" })
            assert.include(forced.stdout, ESC, args.join(" "))
          }
          for (const group of cli.groups) {
            const help = yield* cli.run([...group, "--help"], server.origin, { color: false })
            assert.strictEqual(help.code, 0)
            assert.notInclude(help.stdout, ESC, `${group.join(" ")} --help`)
            assert.include(help.stdout, "Usage:")
          }
        }))

      it.scopedLive("fits tables to a terminal's width, and never cuts them on a pipe", () =>
        Effect.gen(function*() {
          let cut = false
          for (const args of cli.tables) {
            const narrow = yield* cli.run(args, server.origin, { color: true, width: 80 })
            assert.strictEqual(narrow.code, 0, narrow.stderr)
            const table = narrow.stdout.split("\n").filter((line) => line.includes("  "))
            assert.isNotEmpty(table)
            for (const line of table) assert.isAtMost(visible(line), 80, `${args.join(" ")}: ${line}`)
            cut ||= narrow.stdout.includes("…")
            const piped = yield* cli.run(args, server.origin, { color: false })
            assert.notInclude(piped.stdout, "…", args.join(" "))
          }
          // The orders table is wider than 80 columns: it was cut to fit.
          assert.isTrue(cut)
        }))

      it.scopedLive("--json: one JSON document on stdout, never coloured", () =>
        Effect.gen(function*() {
          for (const args of [...cli.tables, ...cli.reads]) {
            const run = yield* cli.run([...args, "--json"], server.origin, { color: true, width: 40 })
            assert.strictEqual(run.code, 0, run.stderr)
            assert.notInclude(run.stdout, ESC)
            assert.strictEqual(JSON.parse(run.stdout).success, true, args.join(" "))
          }
        }))

      it.scopedLive("failures: the request id in the text, the error body with --json, exit status 1", () =>
        Effect.gen(function*() {
          for (const args of [...cli.tables, ...cli.reads]) {
            const text = yield* cli.run(args, failing.origin, { color: false })
            assert.strictEqual(text.code, 1, args.join(" "))
            assert.include(text.stderr, `request id ${REQUEST_ID}`, args.join(" "))
            assert.strictEqual(text.stdout, "")
            const json = yield* cli.run([...args, "--json"], failing.origin, { color: true })
            assert.strictEqual(json.code, 1)
            assert.deepStrictEqual(JSON.parse(json.stdout), {
              _tag: "ServerError",
              success: false,
              message: "Internal server error",
              code: "server_error",
              request_id: REQUEST_ID
            })
            assert.notInclude(json.stdout, ESC)
          }
          const unreachable = yield* cli.run([...cli.reads[0]!, "--json"], "http://127.0.0.1:9", { color: false })
          assert.strictEqual(unreachable.code, 1)
          assert.include(unreachable.stderr, "Cannot reach")
          const body = JSON.parse(unreachable.stdout)
          assert.deepStrictEqual(Object.keys(body).sort(), ["message", "success"])
          assert.strictEqual(body.success, false)
        }))

      it("the binary's help: colour with FORCE_COLOR, none with NO_COLOR or on a pipe", () => {
        const help = (env: Record<string, string>) =>
          spawnSync(process.execPath, [...cli.binary, "--help"], {
            env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", NODE_DISABLE_COMPILE_CACHE: "1", ...env },
            encoding: "utf8"
          })
        const piped = help({})
        assert.strictEqual(piped.status, 0, piped.stderr)
        assert.notInclude(piped.stdout, ESC)
        assert.include(help({ FORCE_COLOR: "1" }).stdout, ESC)
        assert.notInclude(help({ FORCE_COLOR: "1", NO_COLOR: "1" }).stdout, ESC)
      })
    })
  }
})
