// Builds the `bundles` binary: the program bundled into one CommonJS file (dist/main.cjs, no
// TypeScript or node_modules needed at run time), and dist/bundles.mjs, which runs it
// through a V8 code cache. Each command's module (with the API client) is only evaluated
// when that command runs, so `--help` and `--version` never evaluate the client.
import * as esbuild from "esbuild"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
// Workspace packages resolve to their TypeScript sources; "module" is esbuild's default, kept.
const CONDITIONS = ["@databundle/source", "module"]

fs.rmSync(here("dist"), { recursive: true, force: true })
await esbuild.build({
  entryPoints: [here("src/main.ts")],
  outfile: here("dist/main.cjs"),
  bundle: true,
  conditions: CONDITIONS,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: true,
  logLevel: "warning"
})
const buildId = createHash("sha256").update(fs.readFileSync(here("dist/main.cjs"))).digest("hex").slice(0, 16)
await esbuild.build({
  entryPoints: [here("src/bin.ts")],
  outfile: here("dist/bundles.mjs"),
  bundle: true,
  conditions: CONDITIONS,
  platform: "node",
  format: "esm",
  target: "node20",
  define: { BUILD_ID: JSON.stringify(buildId) },
  logLevel: "warning"
})
