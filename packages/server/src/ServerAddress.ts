/**
 * Where a running server listens, kept in its data directory (`server.json`) so that the
 * admin CLI, run against the same data directory, finds it on any port. `serve` writes the
 * file once it listens and removes it when it stops cleanly; a file left by a server that
 * died names a process that is gone, and is ignored.
 */
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** The file in `dataDir` naming the running server. */
export const file = (dataDir: string): string => path.join(dataDir, "server.json")

/** What the file holds. */
export interface ServerAddress {
  /** A base URL that reaches the server from this machine (a wildcard bind as loopback). */
  readonly url: string
  readonly pid: number
}

/** The URL that reaches a server bound to `host`:`port` from this machine. */
export const localUrl = (tls: boolean, host: string, port: number): string => {
  const local = host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "::1" : host
  return `${tls ? "https" : "http"}://${local.includes(":") ? `[${local}]` : local}:${port}`
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Writes the address of this process's server into `dataDir` for the scope's lifetime. A data
 * directory that cannot be written (read-only, on Postgres with a configured token) only
 * costs the admin CLI its discovery: a warning, and the server runs.
 */
export const publish = (dataDir: string, url: string) =>
  Effect.acquireRelease(
    Effect.try(() => {
      fs.mkdirSync(dataDir, { recursive: true })
      const content: ServerAddress = { url, pid: process.pid }
      fs.writeFileSync(file(dataDir), `${JSON.stringify(content)}\n`, { mode: 0o600 })
    }).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning("the server's address could not be written for the admin CLI").pipe(
          Effect.annotateLogs({ file: file(dataDir), error: String(error.error) })
        )
      )
    ),
    () =>
      Effect.sync(() => {
        // Only this process's own file: another server may have started on the directory since.
        const current = read(dataDir)
        if (Option.isSome(current) && current.value.pid === process.pid) fs.rmSync(file(dataDir), { force: true })
      })
  )

/** The address of the server running on `dataDir`, if one is. */
export const read = (dataDir: string): Option.Option<ServerAddress> => {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file(dataDir), "utf8"))
    if (
      typeof parsed === "object" && parsed !== null && "url" in parsed && typeof parsed.url === "string" &&
      "pid" in parsed && typeof parsed.pid === "number" && alive(parsed.pid)
    ) {
      return Option.some({ url: parsed.url, pid: parsed.pid })
    }
  } catch {
    // No file, or not ours to read: no server known.
  }
  return Option.none()
}
