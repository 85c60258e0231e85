// Bundles the bundles-server binary into one file, so it starts fast and needs no TypeScript at run time.
// PGlite stays external: it loads its WebAssembly and data files from beside its own module.
import * as esbuild from "esbuild"
import { fileURLToPath } from "node:url"

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
// Workspace packages resolve to their TypeScript sources; "module" is esbuild's default, kept.
const CONDITIONS = ["@databundle/source", "module"]

await esbuild.build({
  entryPoints: [here("src/bin.ts")],
  outfile: here("dist/bin.mjs"),
  bundle: true,
  conditions: CONDITIONS,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  external: ["@electric-sql/pglite", "pg-native", "cloudflare:sockets"],
  // Bundled CommonJS dependencies (pg) call require() for Node built-ins.
  banner: {
    js:
      "import { createRequire as __createRequire } from 'node:module';const require = __createRequire(import.meta.url);"
  },
  logLevel: "warning"
})

// A new embedded database, made once here and unpacked by a first start instead of PGlite's
// initdb (src/EmbeddedDatabase.ts): initdb runs two more WebAssembly instances beside the
// server's and is the highest memory a first `serve` would reach.
{
  const { PGlite } = await import("@electric-sql/pglite")
  const { writeFile } = await import("node:fs/promises")
  const db = await PGlite.create()
  const archive = await db.dumpDataDir("gzip")
  await db.close()
  await writeFile(here("dist/pgdata.tar.gz"), new Uint8Array(await archive.arrayBuffer()))
}
