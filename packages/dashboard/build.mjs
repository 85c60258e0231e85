// Builds the dashboard into dist/: one script and one stylesheet named by their content hash
// (cached for a year), index.html (never cached), each precompressed with brotli and gzip so
// the server sends them as they are, and pages.json, the page paths the server answers with
// the app. The API's routes are read from the contract here, so the page carries a table of
// methods and paths instead of the contract's runtime (see src/Api.ts).
import * as esbuild from "esbuild"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as zlib from "node:zlib"

const here = (path) => fileURLToPath(new URL(path, import.meta.url))
const dist = here("dist")
// Workspace packages resolve to their TypeScript sources; "module" is esbuild's default, kept.
const CONDITIONS = ["@databundle/source", "module"]

// The contract's dashboard routes and the page paths, evaluated in Node.
const reflect = await esbuild.build({
  stdin: {
    contents: `
      import { DashboardApi } from "@databundle/contract/DashboardApi"
      import { HttpApi } from "@effect/platform"
      export { PAGES } from "./src/Paths.ts"
      export const routes = {}
      HttpApi.reflect(DashboardApi, {
        onGroup: () => {},
        onEndpoint: ({ endpoint, group }) => { routes[group.identifier + "." + endpoint.name] = [endpoint.method, endpoint.path] }
      })`,
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
const { routes, PAGES } = await import(
  `data:text/javascript;base64,${Buffer.from(reflect.outputFiles[0].text).toString("base64")}`
)

const hashOf = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12)

const app = await esbuild.build({
  entryPoints: [here("src/main.ts"), here("src/style.css")],
  outdir: dist,
  bundle: true,
  conditions: CONDITIONS,
  minify: true,
  format: "esm",
  platform: "browser",
  // ES2020: browsers of phones a few years old (Chrome 80 on Android, Safari 14 on iOS) run it as written.
  target: "es2020",
  define: { DASHBOARD_ROUTES: JSON.stringify(routes) },
  write: false,
  metafile: true,
  logLevel: "warning"
})

fs.rmSync(dist, { recursive: true, force: true })
fs.mkdirSync(`${dist}/assets`, { recursive: true })
const files = new Map()
const put = (name, bytes) => {
  fs.writeFileSync(`${dist}/${name}`, bytes)
  files.set(name, bytes)
}
const assets = {}
for (const output of app.outputFiles) {
  const ext = output.path.endsWith(".css") ? "css" : "js"
  const name = `assets/${ext === "css" ? "style" : "app"}.${hashOf(output.contents)}.${ext}`
  put(name, output.contents)
  assets[ext] = `/${name}`
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
<link rel="stylesheet" href="${assets.css}">
<script type="module" src="${assets.js}"></script>
</head>
<body>
<div id="app"><main id="main"><p>Loading…</p><noscript>This dashboard needs JavaScript.</noscript></main></div>
</body>
</html>
`)
)
fs.writeFileSync(`${dist}/pages.json`, JSON.stringify(Object.values(PAGES)))

for (const [name, bytes] of files) {
  fs.writeFileSync(
    `${dist}/${name}.br`,
    zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } })
  )
  fs.writeFileSync(`${dist}/${name}.gz`, zlib.gzipSync(bytes, { level: 9 }))
}
