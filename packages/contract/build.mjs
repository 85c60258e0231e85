// Builds what a published library package ships: dist/*.js (each module transpiled on its own,
// ESM, so bundlers can drop what an app does not use) and dist/*.d.ts (the declarations
// `tsc -b` writes to build/src). In the workspace, consumers keep using ./src/*.ts.
// The client's build.mjs reuses `buildLibrary`.
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** Builds the package in `dir` into `dir/dist`. */
export const buildLibrary = async (dir) => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  const checked = spawnSync(process.execPath, [tsc, "-b", "tsconfig.src.json"], { cwd: dir, stdio: "inherit" })
  if (checked.status !== 0) process.exit(checked.status ?? 1)

  const dist = path.join(dir, "dist")
  fs.rmSync(dist, { recursive: true, force: true })
  const sources = fs.readdirSync(path.join(dir, "src")).filter((name) => name.endsWith(".ts"))
  await esbuild.build({
    entryPoints: sources.map((name) => path.join(dir, "src", name)),
    outdir: dist,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    sourcemap: true,
    logLevel: "warning"
  })
  for (const name of sources) {
    const declaration = name.replace(/\.ts$/, ".d.ts")
    fs.copyFileSync(path.join(dir, "build/src", declaration), path.join(dist, declaration))
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildLibrary(path.dirname(fileURLToPath(import.meta.url)))
}
