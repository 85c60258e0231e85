// Builds the dashboard into dist/: the account holder's script and stylesheet, the operator's
// console as a chunk of its own (with its stylesheet) loaded only under /console, each named
// by its content hash (cached for a year), index.html (never cached), each precompressed with
// brotli and gzip so the server sends them as they are, and pages.json, the page paths the
// server answers with the app. The APIs' routes are read from the contract here, so the page
// carries a table of methods and paths instead of the contract's runtime (see src/Api.ts).
import * as esbuild from "esbuild"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as zlib from "node:zlib"

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const dist = here("dist")
// Workspace packages resolve to their TypeScript sources; "module" is esbuild's default, kept.
const CONDITIONS = ["@databundle/source", "module"]

// The contract's routes and the page paths, evaluated in Node: the dashboard API's for the
// account holder's pages; the admin API's and the console API's for the operator's.
const reflect = await esbuild.build({
  stdin: {
    contents: `
      import { DashboardApi } from "@databundle/contract/DashboardApi"
      import { AdminApi } from "@databundle/contract/AdminApi"
      import { ConsoleApi } from "@databundle/contract/ConsoleApi"
      import { HttpApi } from "@effect/platform"
      export { PAGES } from "./src/Paths.ts"
      export { CONSOLE_PAGES } from "./src/console/Paths.ts"
      const table = (...apis) => {
        const routes = {}
        for (const api of apis) HttpApi.reflect(api, {
          onGroup: () => {},
          onEndpoint: ({ endpoint, group }) => {
            const name = group.identifier + "." + endpoint.name
            if (name in routes) throw new Error("two endpoints named " + name)
            routes[name] = [endpoint.method, endpoint.path]
          }
        })
        return routes
      }
      export const routes = table(DashboardApi)
      export const consoleRoutes = table(AdminApi, ConsoleApi)`,
    resolveDir: here("."),
    loader: "ts"
  },
  bundle: true,
  conditions: CONDITIONS,
  platform: "node",
  format: "esm",
  write: false,
  logLevel: "warning"
})
const { routes, consoleRoutes, PAGES, CONSOLE_PAGES } = await import(
  `data:text/javascript;base64,${Buffer.from(reflect.outputFiles[0].text).toString("base64")}`
)

const hashOf = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12)

fs.rmSync(dist, { recursive: true, force: true })
fs.mkdirSync(`${dist}/assets`, { recursive: true })
const files = new Map()
const put = (name, bytes) => {
  fs.writeFileSync(`${dist}/${name}`, bytes)
  files.set(name, bytes)
}

// The stylesheets first: the console's chunk is told where its own is.
const styles = await esbuild.build({
  entryPoints: [here("src/style.css"), here("src/console/console.css")],
  outdir: dist,
  bundle: true,
  minify: true,
  write: false,
  logLevel: "warning"
})
const assets = {}
for (const output of styles.outputFiles) {
  const base = output.path.endsWith("console.css") ? "console" : "style"
  const name = `assets/${base}.${hashOf(output.contents)}.css`
  put(name, output.contents)
  assets[base] = `/${name}`
}

// The scripts, split: the entry, the console's chunk (a dynamic import under /console) and
// what they share, each named by esbuild's content hash.
const app = await esbuild.build({
  entryPoints: { app: here("src/main.ts") },
  outdir: `${dist}/assets`,
  entryNames: "[name].[hash]",
  chunkNames: "[name].[hash]",
  splitting: true,
  bundle: true,
  conditions: CONDITIONS,
  minify: true,
  format: "esm",
  platform: "browser",
  // ES2020: browsers of phones a few years old (Chrome 80 on Android, Safari 14 on iOS) run it as written.
  target: "es2020",
  define: {
    DASHBOARD_ROUTES: JSON.stringify(routes),
    // A string to parse, not an object: esbuild hoists an object define into the chunk every
    // entry shares, which would put the console's routes into the account holder's first load.
    CONSOLE_ROUTES: JSON.stringify(JSON.stringify(consoleRoutes)),
    CONSOLE_STYLESHEET: JSON.stringify(assets.console)
  },
  write: false,
  metafile: true,
  logLevel: "warning"
})
// The browser gets plain TypeScript only: Effect alone is over the first load's budget
// (docs/architecture.md), so a shared module that pulls it in fails the build here.
const effectful = Object.keys(app.metafile.inputs).filter((input) =>
  /node_modules\/(?:\.pnpm\/)?(?:@effect|effect)/.test(input)
)
if (effectful.length > 0) throw new Error(`the dashboard would carry Effect: ${effectful.slice(0, 5).join(", ")}`)
for (const output of app.outputFiles) {
  const name = `assets/${output.path.slice(output.path.lastIndexOf("/") + 1)}`
  put(name, output.contents)
  if (/^assets\/app\.[^/]+\.js$/.test(name)) assets.js = `/${name}`
}
const icon = Buffer.from(
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b6e4f"/>` +
    `<path d="M8 22h4v-4H8zm6 0h4v-8h-4zm6 0h4V10h-4z" fill="#fff"/></svg>`
)
const iconName = `assets/icon.${hashOf(icon)}.svg`
put(iconName, icon)

put(
  "index.html",
  Buffer.from(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Data bundles dashboard</title>
<meta name="description" content="Buy mobile data bundles for resale: wallet, orders, API keys and webhooks.">
<link rel="icon" href="/${iconName}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.style}">
<script type="module" src="${assets.js}"></script>
</head>
<body>
<div id="app"><main id="main"><p>Loading…</p><noscript>This dashboard needs JavaScript.</noscript></main></div>
</body>
</html>
`)
)
fs.writeFileSync(`${dist}/pages.json`, JSON.stringify([...Object.values(PAGES), ...Object.values(CONSOLE_PAGES)]))

for (const [name, bytes] of files) {
  fs.writeFileSync(
    `${dist}/${name}.br`,
    zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } })
  )
  fs.writeFileSync(`${dist}/${name}.gz`, zlib.gzipSync(bytes, { level: 9 }))
}
