/**
 * The embedded database is one Postgres session inside one process: two processes opening
 * the same data directory would corrupt it. A lock file holding the owner's pid keeps a
 * second server out, and is taken over when its owner is gone.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** A second process tried to open a data directory in use. */
export class DataDirInUse extends Error {
  constructor(readonly dir: string, readonly pid: number) {
    super(
      `The embedded database in ${dir} is in use by process ${pid}. Stop it first, or run several ` +
        "processes on Postgres (DATABASE_URL)."
    )
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const take = (file: string): void => {
  try {
    fs.writeFileSync(file, String(process.pid), { flag: "wx", mode: 0o600 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    const owner = Number(fs.readFileSync(file, "utf8").trim())
    if (Number.isInteger(owner) && owner !== process.pid && alive(owner)) {
      throw new DataDirInUse(path.dirname(file), owner)
    }
    // The owner is gone: take its place (unlink, then create exclusively again).
    fs.rmSync(file, { force: true })
    fs.writeFileSync(file, String(process.pid), { flag: "wx", mode: 0o600 })
  }
}

/** Holds the lock of `dir` for the scope's lifetime. */
export const acquire = (dir: string) => {
  const file = path.join(dir, "server.pid")
  return Effect.acquireRelease(
    Effect.try({ try: () => take(file), catch: (error) => error }),
    () => Effect.sync(() => fs.rmSync(file, { force: true }))
  )
}
