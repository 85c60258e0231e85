/**
 * Running the CLI in tests: in-process (`Cli.run`, as the binary runs it) with its output
 * captured through `Console` and a terminal of the test's choosing, or as the built binary
 * (`dist/bundles.mjs`) in a child process, for signals. The server is the client suite's: the
 * whole server on a real port of 127.0.0.1, on PGlite or Postgres.
 */
import { createClient, type Order } from "@databundle/client"
import { capturingConsole } from "@databundle/terminal/testing"
import { Tty, type TtyService } from "@databundle/terminal/Tty"
import { NodeContext } from "@effect/platform-node"
import { ConfigProvider, Effect, Exit, Layer, Option } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Cli from "../src/Cli.js"

export { ADMIN_TOKEN, startProxy, startServer, type TestAccount, type TestServer } from "@databundle/client/testing"

/** The built binary. */
export const BINARY = fileURLToPath(new URL("../dist/bundles.mjs", import.meta.url))

/** What one run printed, and how it ended. */
export interface Run {
  readonly stdout: string
  readonly stderr: string
  readonly exit: Exit.Exit<void, unknown>
  /** The binary's exit status for that outcome. */
  readonly code: number
}

/** The terminal a run sees. */
export interface Terminal {
  /** stdin is a terminal: questions are asked (and answered from `answers`). */
  readonly interactive?: boolean
  /** stderr is a terminal: the progress line is redrawn in place. */
  readonly stderrIsTty?: boolean
  /** Colour on stdout and stderr. */
  readonly color?: boolean
  /** Answers to questions, in order; none left reads as the end of input. */
  readonly answers?: ReadonlyArray<string>
}

/** Runs `bundles ...args` in-process with `env` as its whole environment, capturing its output. */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}, terminal: Terminal = {}) =>
  Effect.gen(function*() {
    const { console: capturing, stderr, stdout } = yield* capturingConsole
    const answers = [...(terminal.answers ?? [])]
    const ask = (question: string) =>
      Effect.sync(() => {
        stderr.push(question)
        return Option.fromNullable(answers.shift())
      })
    const tty: TtyService = {
      interactive: terminal.interactive ?? false,
      stderrIsTty: terminal.stderrIsTty ?? false,
      colorStdout: terminal.color ?? false,
      colorStderr: terminal.color ?? false,
      truecolor: true,
      columns: 120,
      write: (text) => Effect.sync(() => void stderr.push(text)),
      ask,
      askHidden: ask
    }
    const exit = yield* Cli.run(["node", "bundles", ...args]).pipe(
      Effect.provide(Layer.mergeAll(NodeContext.layer, Layer.succeed(Tty, tty))),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.withConsole(capturing),
      Effect.exit
    )
    return { stdout: stdout.join("\n"), stderr: stderr.join("\n"), exit, code: Cli.exitCode(exit) } satisfies Run
  })

/** Asserts a run's exit status, showing its output when it differs. */
export const expectCode = (run: Run, code: number): Run => {
  if (run.code !== code) {
    throw new Error(`expected exit status ${code}, got ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)
  }
  return run
}

/** The one JSON document a `--json` run printed. */
export const json = (run: Run): any => JSON.parse(run.stdout)

/** A temporary directory for the test, removed when the scope closes. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "bundles-cli-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** The environment a run connects with: the account's key and the server's (or a proxy's) base URL. */
export const envFor = (baseUrl: string, key: string, dir: string): Record<string, string> => ({
  BUNDLES_API_KEY: key,
  BUNDLES_BASE_URL: baseUrl,
  BUNDLES_CONFIG: path.join(dir, "config.json")
})

/** Every order of an account, newest first, as the API lists them. */
export const ordersOf = async (baseUrl: string, key: string): Promise<Array<Order>> => {
  const orders: Array<Order> = []
  for await (const order of createClient({ apiKey: key, baseUrl }).orders.all()) orders.push(order)
  return orders
}

/** A running binary: its output so far, and its end. */
export interface Child {
  readonly process: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves once stderr holds text matching `pattern`. */
  readonly waitForStderr: (pattern: RegExp) => Promise<void>
  /** The exit status (or 128 + the signal's number). */
  readonly exited: Promise<number>
}

/** Starts the built binary with `env` added to a clean environment (no colour, a private cache). */
export const spawnCli = (args: ReadonlyArray<string>, env: Record<string, string>, dir: string): Child => {
  let stdout = ""
  let stderr = ""
  const waiting: Array<{ pattern: RegExp; resolve: () => void }> = []
  const child = spawn(process.execPath, [BINARY, ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: dir, XDG_CACHE_HOME: path.join(dir, "cache"), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => void (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
    for (const wait of [...waiting]) {
      if (wait.pattern.test(stderr)) {
        waiting.splice(waiting.indexOf(wait), 1)
        wait.resolve()
      }
    }
  })
  const exited = new Promise<number>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? 128 + (signal === null ? 0 : os.constants.signals[signal])))
  )
  return {
    process: child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForStderr: (pattern) =>
      pattern.test(stderr) ? Promise.resolve() : new Promise((resolve) => waiting.push({ pattern, resolve })),
    exited
  }
}
