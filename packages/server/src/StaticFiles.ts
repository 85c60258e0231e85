/**
 * The web dashboard's files (built by packages/dashboard into its dist/), served from memory:
 * each file precompressed at build (brotli, gzip) and sent in the best encoding the browser
 * accepts; hashed assets cached for a year, `index.html` revalidated every time; the page
 * paths the dashboard lists in `pages.json` answered with `index.html` (its router takes over),
 * and nothing else. Every answer carries the security headers (a CSP without inline code,
 * no framing).
 *
 * The route decision (`Routes.ts`) asks `has` whether a path is one of these, so a path that
 * names nothing stays a 404 and the canonical-path rules apply here as to the APIs.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

/**
 * Where the built dashboard is: beside the bundle in the installed package (dist/dashboard/),
 * else the dashboard package's dist/, the same relative place from src/ and from dist/.
 */
export const DEFAULT_DIR = [
  fileURLToPath(new URL("./dashboard/", import.meta.url)),
  fileURLToPath(new URL("../../dashboard/dist/", import.meta.url))
].find((dir) => fs.existsSync(`${dir}/index.html`)) ?? fileURLToPath(new URL("../../dashboard/dist/", import.meta.url))

/** The security headers of every dashboard answer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join("; "),
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()"
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  json: "application/json"
}

interface File {
  readonly type: string
  readonly identity: Uint8Array
  readonly br: Uint8Array | undefined
  readonly gzip: Uint8Array | undefined
  readonly immutable: boolean
}

interface Loaded {
  readonly files: ReadonlyMap<string, File>
  readonly pages: ReadonlyArray<ReadonlyArray<string>>
}

const readIf = (path: string) => (fs.existsSync(path) ? fs.readFileSync(path) : undefined)

const load = (dir: string): Loaded => {
  const files = new Map<string, File>()
  if (!fs.existsSync(`${dir}/index.html`)) return { files, pages: [] }
  const add = (name: string, immutable: boolean) => {
    const ext = name.slice(name.lastIndexOf(".") + 1)
    files.set(`/${name}`, {
      type: TYPES[ext] ?? "application/octet-stream",
      identity: fs.readFileSync(`${dir}/${name}`),
      br: readIf(`${dir}/${name}.br`),
      gzip: readIf(`${dir}/${name}.gz`),
      immutable
    })
  }
  add("index.html", false)
  for (const name of fs.readdirSync(`${dir}/assets`)) {
    if (!name.endsWith(".br") && !name.endsWith(".gz")) add(`assets/${name}`, true)
  }
  const pages = (JSON.parse(fs.readFileSync(`${dir}/pages.json`, "utf8")) as Array<string>).map((path) =>
    path.split("/").filter((s) => s.length > 0)
  )
  return { files, pages }
}

/** The dashboard's files in `dir`, read on first use (none when it was never built). */
export const make = (dir: string = DEFAULT_DIR) => {
  let loaded: Loaded | undefined
  const get = () => (loaded ??= load(dir))

  /** The file that answers a canonical path's segments, if any: an asset, or index.html for a page. */
  const lookup = (segments: ReadonlyArray<string>): File | undefined => {
    const { files, pages } = get()
    const exact = files.get(`/${segments.join("/")}`)
    if (exact !== undefined) return exact
    const page = pages.some((template) =>
      template.length === segments.length &&
      template.every((part, i) => part.startsWith(":") || part === segments[i])
    )
    return page ? files.get("/index.html") : undefined
  }

  /** Whether the path (as canonical segments) is the dashboard's. */
  const has = (segments: ReadonlyArray<string>): boolean => lookup(segments) !== undefined

  /** The answer to a GET or HEAD of a path `has` accepted. */
  const serve = (request: HttpServerRequest.HttpServerRequest, segments: ReadonlyArray<string>) =>
    Effect.sync(() => {
      const file = lookup(segments)!
      const accepted = request.headers["accept-encoding"] ?? ""
      const [body, encoding] = file.br !== undefined && /\bbr\b/.test(accepted)
        ? [file.br, "br"]
        : file.gzip !== undefined && /\bgzip\b/.test(accepted)
        ? [file.gzip, "gzip"]
        : [file.identity, undefined]
      const headers: Record<string, string> = {
        ...SECURITY_HEADERS,
        "cache-control": file.immutable ? "public, max-age=31536000, immutable" : "no-cache",
        vary: "accept-encoding"
      }
      if (encoding !== undefined) headers["content-encoding"] = encoding
      return HttpServerResponse.uint8Array(body, { contentType: file.type, headers })
    })

  return { has, serve }
}

/** The dashboard's files, as the route decision and the gateway use them. */
export type StaticFiles = ReturnType<typeof make>
