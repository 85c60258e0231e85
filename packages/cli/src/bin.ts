#!/usr/bin/env node
/**
 * The `bundles` binary: runs the bundled program (`main.cjs` beside this file) through a V8
 * code cache, so that after the first run its ~1 MB of JavaScript is not compiled again at
 * every start (what Node 22's `module.enableCompileCache` does, here on Node 20 too).
 *
 * The cache lives in the user's own cache directory (`$XDG_CACHE_HOME/bundles`, else
 * `~/.cache/bundles`, mode 0700: compiled code must not come from a place others can write),
 * one file per build and Node version. V8 refuses a cache that does not match; then, or
 * without one, the program is compiled as usual and the cache written at exit.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 *
 * `bundles --version` alone is answered here, before the program is read: it needs nothing
 * of it, and loading the program takes three times as long as starting Node. The text is the
 * program's own (`@effect/cli` prints the version as a paragraph, then ends the line); a test
 * keeps the two equal.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"
import { VERSION } from "./Version.js"

/** A digest of `main.cjs`, set by the build, so a cache is never used with another build. */
declare const BUILD_ID: string

/** Runs the program, from the code cache when there is one. */
const start = () => {
  const main = fileURLToPath(new URL("./main.cjs", import.meta.url))
  const source = fs.readFileSync(main, "utf8")

  const cacheDir = () => {
    const xdg = process.env.XDG_CACHE_HOME
    return path.join(xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache"), "bundles")
  }

  const cacheFile = path.join(cacheDir(), `main-${BUILD_ID}-${process.version}-${process.arch}.v8cache`)

  /**
   * The cache directory can be trusted when it is missing (it will be made 0700) or is this
   * user's and writable by no one else: compiled code must not come from another user.
   */
  const trusted = (): boolean => {
    try {
      const dir = fs.statSync(path.dirname(cacheFile))
      return (process.getuid === undefined || dir.uid === process.getuid()) && (dir.mode & 0o022) === 0
    } catch {
      return true
    }
  }

  const enabled = process.env.NODE_DISABLE_COMPILE_CACHE === undefined && trusted()

  const readCache = (): Buffer | undefined => {
    try {
      return fs.readFileSync(cacheFile)
    } catch {
      // No cache yet: compile as usual and write one at exit.
      return undefined
    }
  }

  const cachedData = enabled ? readCache() : undefined

  // The CommonJS wrapper Node itself puts around a module.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: main,
    ...(cachedData === undefined ? {} : { cachedData })
  })

  if (enabled && (cachedData === undefined || script.cachedDataRejected === true)) {
    // At exit the cache also holds the functions this run compiled on the way.
    process.once("exit", () => {
      try {
        fs.mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 })
        const temporary = `${cacheFile}.${process.pid}.tmp`
        fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 })
        fs.renameSync(temporary, cacheFile)
        for (const name of fs.readdirSync(path.dirname(cacheFile))) {
          const file = path.join(path.dirname(cacheFile), name)
          if (name.startsWith("main-") && name.endsWith(".v8cache") && file !== cacheFile) {
            fs.rmSync(file, { force: true })
          }
        }
      } catch {
        // A cache that cannot be written only costs the next start some time.
      }
    })
  }

  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(main), module, main, path.dirname(main))
}

if (process.argv.length === 3 && process.argv[2] === "--version") {
  process.stdout.write(`${VERSION}\n\n`)
} else {
  start()
}
