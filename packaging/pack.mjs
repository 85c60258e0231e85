// `pnpm pack:release`: builds and writes the three installable tarballs into release/ (or the
// folder after `--out`): the server (`bundles-server`, with PGlite as its one dependency and
// the dashboard's files), the reseller CLI (`bundles`, one bundled program, no dependencies)
// and the client library (built JavaScript and declarations, with the contract it imports
// inside it as a bundled dependency, and `effect` as a peer). Each tarball is made by
// `npm pack` from a staging folder whose package.json is written here, so nothing of the
// workspace (`workspace:*`, the `@databundle/source` condition, `src/`) reaches it.
// Prints one JSON line per tarball: its file, size in bytes and how many files it holds.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildLibrary } from "../packages/contract/build.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const packages = path.join(root, "packages")
const here = path.join(root, "packaging")
const outIndex = process.argv.indexOf("--out")
const out = path.resolve(outIndex > 0 ? process.argv[outIndex + 1] : path.join(root, "release"))

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"))
const manifest = (name) => readJson(path.join(packages, name, "package.json"))
const run = (command, args, cwd) => {
  // Without what pnpm tells the script it runs: npm would take pnpm's settings for its own
  // (and warn about each); `npm pack` needs none of them.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))
  const result = spawnSync(command, args, { cwd, env, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" })
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed in ${cwd}`)
  return result.stdout
}
const copy = (from, to) => fs.cpSync(from, to, { recursive: true })

/** What every published manifest shares. */
const common = (pkg) => ({
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
  license: pkg.license,
  type: "module",
  engines: { node: ">=20" },
  repository: { type: "git", url: "https://github.com/databundle/databundle" }
})

/** The workspace's `effect` and `@effect/platform`, as the peer ranges the client is tested against. */
const PEERS = { effect: "^3.22.4", "@effect/platform": "^0.97.2" }

const LICENSE = `MIT License

Copyright (c) 2026 The data bundle reseller authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software
and associated documentation files (the "Software"), to deal in the Software without
restriction, including without limitation the rights to use, copy, modify, merge, publish,
distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
`

/** A staging folder with its package.json, README and LICENSE. */
const stage = (staging, name, pkg, readme) => {
  const dir = path.join(staging, name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n")
  fs.copyFileSync(readme, path.join(dir, "README.md"))
  fs.writeFileSync(path.join(dir, "LICENSE"), LICENSE)
  return dir
}

const server = (staging) => {
  const pkg = manifest("server")
  const dir = stage(staging, "server", {
    ...common(pkg),
    bin: { "bundles-server": "./dist/bin.mjs" },
    // A program, not a library: nothing to import but its manifest.
    exports: { "./package.json": "./package.json" },
    files: ["dist", "README.md", "LICENSE"],
    // Everything else is bundled into bin.mjs; PGlite loads its WebAssembly from beside its module.
    dependencies: { "@electric-sql/pglite": pkg.dependencies["@electric-sql/pglite"] }
  }, path.join(here, "server.md"))
  fs.mkdirSync(path.join(dir, "dist"))
  // The source map (16 MB) stays out: stack traces name the bundle's own lines.
  const bin = fs.readFileSync(path.join(packages, "server/dist/bin.mjs"), "utf8")
  fs.writeFileSync(path.join(dir, "dist/bin.mjs"), bin.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"), {
    mode: 0o755
  })
  // StaticFiles looks for the dashboard beside the bundle first.
  copy(path.join(packages, "dashboard/dist"), path.join(dir, "dist/dashboard"))
  // Demo.ts looks for the demo catalogue beside the bundle first.
  fs.copyFileSync(path.join(root, "examples/catalog.json"), path.join(dir, "dist/catalog.json"))
  // A new data directory is unpacked from this template (made by the build), not made by
  // PGlite's initdb, whose extra engines take a first start to about 900 MB.
  fs.copyFileSync(path.join(packages, "server/dist/pgdata.tar.gz"), path.join(dir, "dist/pgdata.tar.gz"))
  return dir
}

const cli = (staging) => {
  const pkg = manifest("cli")
  const dir = stage(staging, "cli", {
    ...common(pkg),
    bin: { bundles: "./dist/bundles.mjs" },
    exports: { "./package.json": "./package.json" },
    files: ["dist", "README.md", "LICENSE"]
  }, path.join(here, "cli.md"))
  copy(path.join(packages, "cli/dist"), path.join(dir, "dist"))
  return dir
}

/** A library package's manifest as published: built exports only, the peers as ranges. */
const library = (pkg, extra) => {
  const { "@databundle/contract": contract, ...rest } = pkg.dependencies
  const peers = Object.fromEntries(Object.keys(PEERS).filter((name) => name in rest).map((n) => [n, PEERS[n]]))
  const dependencies = Object.fromEntries(Object.entries(rest).filter(([name]) => !(name in PEERS)))
  return {
    ...common(pkg),
    engines: pkg.engines ?? { node: ">=18" },
    sideEffects: false,
    exports: pkg.publishConfig.exports,
    files: ["dist", "README.md", "LICENSE"],
    ...(contract === undefined ? {} : { dependencies: { ...dependencies, "@databundle/contract": pkg.version } }),
    peerDependencies: peers,
    ...extra
  }
}

const client = async (staging) => {
  // One after the other: the client's build type-checks the contract's project too.
  await buildLibrary(path.join(packages, "contract"))
  await buildLibrary(path.join(packages, "client"))
  const pkg = manifest("client")
  const dir = stage(
    staging,
    "client",
    library(pkg, { bundleDependencies: ["@databundle/contract"] }),
    path.join(packages, "client/README.md")
  )
  copy(path.join(packages, "client/dist"), path.join(dir, "dist"))
  // The contract travels inside the client's tarball (npm's bundleDependencies).
  const contract = path.join(dir, "node_modules/@databundle/contract")
  fs.mkdirSync(contract, { recursive: true })
  const contractPkg = library(manifest("contract"), {})
  fs.writeFileSync(path.join(contract, "package.json"), JSON.stringify(contractPkg, null, 2) + "\n")
  fs.writeFileSync(path.join(contract, "LICENSE"), LICENSE)
  fs.writeFileSync(
    path.join(contract, "README.md"),
    "# @databundle/contract\n\nThe HttpApi contract `@databundle/client` is derived from.\n"
  )
  copy(path.join(packages, "contract/dist"), path.join(contract, "dist"))
  return dir
}

if (!process.argv.includes("--prebuilt")) {
  for (const name of ["server", "cli", "dashboard"]) {
    run(process.execPath, [path.join(packages, name, "build.mjs")], root)
  }
}
const staging = fs.mkdtempSync(path.join(os.tmpdir(), "databundle-release-"))
try {
  fs.mkdirSync(out, { recursive: true })
  for (const dir of [server(staging), cli(staging), await client(staging)]) {
    const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], dir))
    console.log(JSON.stringify({ file: path.join(out, packed.filename), size: packed.size, files: packed.entryCount }))
  }
} finally {
  fs.rmSync(staging, { recursive: true, force: true })
}
