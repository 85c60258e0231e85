// Builds what a published library package ships: dist/*.js (each module transpiled on its own,
// ESM, so bundlers can drop what an app does not use) and dist/*.d.ts (the declarations
// `tsc -b` writes to build/src). In the workspace, consumers keep using ./src/*.ts through the
// "@databundle/source" export condition. Every library package's build.mjs reuses `buildLibrary`,
// and `pnpm pack` runs it (the `prepack` script), so a tarball never carries a stale build.
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The TypeScript modules under `dir`, as paths relative to it. */
const modules = (dir, prefix = "") =>
  fs.readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const name = path.join(prefix, entry.name)
    if (entry.isDirectory()) return modules(dir, name)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [name] : []
  })

/** Builds the package in `dir` into `dir/dist`. */
export const buildLibrary = async (dir) => {
  // Type-checks the package (and what it references) and writes its declarations to build/src.
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  const checked = spawnSync(process.execPath, [tsc, "-b", "tsconfig.src.json"], { cwd: dir, stdio: "inherit" })
  if (checked.status !== 0) process.exit(checked.status ?? 1)

  const src = path.join(dir, "src")
  const dist = path.join(dir, "dist")
  const sources = modules(src)
  fs.rmSync(dist, { recursive: true, force: true })
  await esbuild.build({
    entryPoints: sources.map((name) => path.join(src, name)),
    outdir: dist,
    outbase: src,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    sourcemap: true,
    logLevel: "warning"
  })
  for (const name of sources) {
    const declaration = name.replace(/\.ts$/, ".d.ts")
    const text = fs.readFileSync(path.join(dir, "build/src", declaration), "utf8")
    // The declaration map points into build/, which is not shipped.
    fs.writeFileSync(path.join(dist, declaration), text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"))
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildLibrary(path.dirname(fileURLToPath(import.meta.url)))
}
