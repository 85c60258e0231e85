/**
 * How the embedded PGlite is opened so that the server fits a small machine: Postgres's own
 * memory settings sized for one session and a small database, and a new data directory
 * unpacked from a template made at build time instead of PGlite's `initdb`, which runs two
 * more WebAssembly instances beside the server's and peaks near 900 MB (docs/benchmarks.md).
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import * as v8 from "node:v8"
import * as zlib from "node:zlib"

/** The template's file name, beside the server's bundle (`build.mjs` writes it). */
export const TEMPLATE_FILE = "pgdata.tar.gz"

/**
 * PGlite's default start parameters (kept: single-user mode, no parallel workers) with
 * Postgres's memory settings for one session. `shared_buffers` is the largest: PGlite's
 * default (about 160 MB) is all touched at start, so it is resident whether used or not;
 * 16 MB holds the hot pages of the order path (the wallet, the catalogue, the indexes' upper
 * levels), and a miss is a read from the operating system's page cache.
 */
export const startParams: ReadonlyArray<string> = [
  "--single",
  "-F",
  "-O",
  "-j",
  ...[
    "search_path=public",
    "exit_on_error=false",
    "log_checkpoints=false",
    "max_worker_processes=0",
    "max_parallel_workers=0",
    "max_parallel_workers_per_gather=0",
    "io_method=sync",
    "max_parallel_maintenance_workers=0",
    "shared_buffers=16MB",
    "wal_buffers=1MB",
    "temp_buffers=1MB",
    "max_connections=5",
    "maintenance_work_mem=16MB"
  ].flatMap((setting) => ["-c", setting])
]

/**
 * Compiles PGlite's WebAssembly with V8's baseline compiler only (Liftoff), before PGlite
 * compiles it. By default V8 also recompiles the hot functions with its optimising compiler
 * and keeps both: 60-80 MB more resident for the server's life, which a 1 GB machine cannot
 * spare. The price is about 15 % more CPU per order on the embedded database
 * (docs/benchmarks.md). It is a process-wide V8 setting; the server runs no other WebAssembly.
 */
export const baselineWasmOnly = Effect.sync(() => v8.setFlagsFromString("--liftoff-only"))

/**
 * How far V8 lets its JavaScript heap's old generation grow past what its last full collection
 * kept before it collects again, in percent. V8 chooses the factor itself (up to 4x when the
 * heap may grow to gigabytes, as Node lets it on any machine with memory to spare): under orders
 * the server's heap grew to 124 MB before a full collection brought it back to 52 MB, the peaks
 * that took its RSS past 300 MB. At 20 % it is collected at 60-73 MB, at the price of more
 * frequent full collections (incremental, 5-21 ms of pause each, and no cost showed in orders/s:
 * docs/benchmarks.md). Unlike a limit on the heap's size (`--max-old-space-size`, which V8 reads
 * only when the process starts), it caps nothing: a large import or catalogue sync still gets
 * all the heap it needs, collected more often.
 */
export const HEAP_GROWING_PERCENT = 20

/**
 * Sets `HEAP_GROWING_PERCENT` for the process, which V8 reads at each collection, so it takes
 * effect when set after the process started. Only the embedded database sets it: a server on
 * Postgres keeps Node's defaults.
 */
export const heapGrowth = Effect.sync(() => v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`))

/** Where the template would be for a bundle at `moduleUrl`, if it was built. */
export const templateBeside = (moduleUrl: string): string | undefined => {
  try {
    const file = new URL(TEMPLATE_FILE, moduleUrl)
    return file.protocol === "file:" && fs.existsSync(file) ? file.pathname : undefined
  } catch {
    return undefined
  }
}

const BLOCK = 512

const field = (header: Buffer, offset: number, length: number) => {
  const end = header.indexOf(0, offset)
  return header.toString("latin1", offset, end === -1 || end > offset + length ? offset + length : end)
}

/**
 * A writable that unpacks a ustar stream (plain files and directories only, as PGlite's
 * `dumpDataDir` writes) under `root`, one block at a time, so the whole archive is never
 * in memory. Any other entry type, or a name leaving `root`, is an error.
 */
const untarInto = (root: string): Writable => {
  let pending: Buffer = Buffer.alloc(0)
  let file: { fd: number; left: number; pad: number } | undefined
  let ended = false
  const consume = () => {
    for (;;) {
      if (file !== undefined) {
        const take = Math.min(file.left, pending.length)
        if (take > 0) fs.writeSync(file.fd, pending, 0, take)
        pending = pending.subarray(take)
        file.left -= take
        if (file.left > 0) return
        if (pending.length < file.pad) return
        pending = pending.subarray(file.pad)
        fs.closeSync(file.fd)
        file = undefined
      }
      if (ended || pending.length < BLOCK) return
      const header = pending.subarray(0, BLOCK)
      pending = pending.subarray(BLOCK)
      if (header.every((b) => b === 0)) {
        ended = true
        return
      }
      const name = [field(header, 345, 155), field(header, 0, 100)].filter((p) => p.length > 0).join("/")
      const target = path.resolve(root, `.${path.posix.sep}${name}`)
      if (target !== root && !target.startsWith(root + path.sep)) throw new Error(`template entry outside: ${name}`)
      const type = String.fromCharCode(header[156] ?? 0)
      const size = parseInt(field(header, 124, 12).trim() || "0", 8)
      if (type === "5") {
        fs.mkdirSync(target, { recursive: true, mode: 0o700 })
      } else if (type === "0" || type === "\0") {
        fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
        file = { fd: fs.openSync(target, "w", 0o600), left: size, pad: (BLOCK - (size % BLOCK)) % BLOCK }
      } else {
        throw new Error(`template entry of type ${JSON.stringify(type)}: ${name}`)
      }
    }
  }
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      try {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        consume()
        callback()
      } catch (error) {
        callback(error as Error)
      }
    },
    final(callback) {
      if (file !== undefined) fs.closeSync(file.fd)
      callback(file !== undefined && file.left > 0 ? new Error("template archive cut short") : null)
    }
  })
}

/**
 * Makes `dir` a new database from the template when it holds none yet (no `PG_VERSION`).
 * The template is unpacked beside it and renamed into place, so a crash half-way leaves no
 * half database; a directory that already holds one is left alone. Without a template
 * (sources run without a build) nothing happens and PGlite runs `initdb` itself.
 */
export const fromTemplate = (dir: string, template: string | undefined): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    if (template === undefined || fs.existsSync(path.join(dir, "PG_VERSION"))) return false
    if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) return false
    const staging = `${dir}.new-${process.pid}`
    fs.rmSync(staging, { recursive: true, force: true })
    fs.mkdirSync(staging, { recursive: true, mode: 0o700 })
    try {
      await pipeline(fs.createReadStream(template), zlib.createGunzip(), untarInto(staging))
    } catch (error) {
      fs.rmSync(staging, { recursive: true, force: true })
      throw error
    }
    fs.rmSync(dir, { recursive: true, force: true })
    fs.renameSync(staging, dir)
    return true
  })
