/**
 * Real server processes for tests that need more than one: the bundled binary, spawned with
 * its own environment, its output kept for inspection, stopped with the scope.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** The bundled binary (built by this project's global setup). */
export const BIN = fileURLToPath(new URL("../dist/bin.mjs", import.meta.url))

/** A running server process. */
export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  /** Everything it wrote to stdout and stderr so far. */
  readonly output: () => string
}

/**
 * Starts `serve` with `env` (on a free port unless `args` name one) and waits until it
 * listens; SIGTERM (then SIGKILL) when the scope closes. `descriptors` lowers the process's
 * limit on open descriptors (through `prlimit`, which runs it in its own place).
 */
export const start = (
  env: Record<string, string>,
  args: ReadonlyArray<string> = [],
  options: { readonly descriptors?: number } = {}
) =>
  Effect.acquireRelease(
    Effect.async<ServerProcess, Error>((resume) => {
      const port = args.includes("--port") ? [] : ["--port", "0"]
      const command = [process.execPath, BIN, "serve", ...port, ...args]
      const limited = options.descriptors === undefined
        ? command
        : ["prlimit", `--nofile=${options.descriptors}:${options.descriptors}`, ...command]
      const child = spawn(limited[0]!, limited.slice(1), {
        env: { PATH: process.env.PATH ?? "", ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      let done = false
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const match = /listening on (https?:\/\/\S+)/.exec(output)
        if (match && !done) {
          done = true
          resume(Effect.succeed({ url: match[1]!, child, output: () => output }))
        }
      }
      child.stdout.on("data", onData)
      child.stderr.on("data", onData)
      child.once("exit", (code) => {
        if (!done) {
          done = true
          resume(Effect.fail(new Error(`server exited (${code}) before listening:\n${output}`)))
        }
      })
    }),
    ({ child }) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        const killer = setTimeout(() => child.kill("SIGKILL"), 15_000)
        child.once("exit", () => {
          clearTimeout(killer)
          resume(Effect.void)
        })
        child.kill("SIGTERM")
      })
  )
