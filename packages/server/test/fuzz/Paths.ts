/**
 * Paths: unknown paths that no route serves, however the server normalises them.
 */
import fc from "fast-check"
import { placeBody } from "./Bodies.js"
import { badCredentialsOf, validCredentials } from "./Credentials.js"
import { type Api, endpointsOf, prefixOf, segment } from "./Endpoints.js"
import { type Method, probe } from "./Probe.js"
import { JSON_TYPE } from "./Requests.js"
import { junk } from "./Values.js"
import { ADMIN, DASHBOARD, PUBLIC, type World } from "./World.js"

/** Route shapes of both APIs (and the OpenAPI documents), to keep unknown paths unknown. */
export const shapesOf = (w: World) => [
  ...endpointsOf(w).map((e) => `${prefixOf(e.api)}${e.path}`.split("/").filter((s) => s.length > 0)),
  ["api", "v1", "openapi.json"],
  ["admin", "v1", "openapi.json"]
]

/** True when some route could serve `path`, however the server normalises it (case, encoding, dots, slashes). */
export const mayRoute = (shapes: ReadonlyArray<ReadonlyArray<string>>, path: string) => {
  const parts: Array<string> = []
  for (const raw of path.split("/")) {
    let part = raw
    try {
      part = decodeURIComponent(raw)
    } catch {
      // Left as it is.
    }
    if (part === "" || part === ".") continue
    if (part === "..") parts.pop()
    else parts.push(part.toLowerCase())
  }
  // The server decodes nothing: an encoded dot segment (`%2e%2e`) is a path parameter's value as written.
  const written = path.split("/").filter((part) => part !== "").map((part) => part.toLowerCase())
  return [parts, written].some((candidate) =>
    shapes.some((shape) =>
      shape.length === candidate.length &&
      shape.every((s, i) => s.startsWith(":") || s.toLowerCase() === candidate[i])
    )
  )
}

export const VOCABULARY = [
  "dashboard",
  "session",
  "payments",
  "webhook",
  "register",
  "api",
  "v1",
  "v2",
  "admin",
  "balance",
  "networks",
  "bundles",
  "orders",
  "accounts",
  "keys",
  "wallet",
  "fund",
  "adjust",
  "ledger",
  "audit",
  "catalog",
  "resolve",
  "openapi.json",
  "1",
  "ORD-000000000000",
  "..",
  ".",
  "",
  "%2e%2e",
  "%2F",
  "Balance",
  "balance.json",
  "%00",
  "%zz",
  "%E0%A4%A",
  "%"
]

/** A path that no route serves: 404 for any method and credentials. */
export const unknownPath = (w: World, api: Api) => {
  const shapes = shapesOf(w)
  const segments = fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...VOCABULARY) },
      { weight: 1, arbitrary: junk.map(segment) }
    ),
    { maxLength: 6 }
  )
  const path = fc.tuple(
    fc.constantFrom(PUBLIC, ADMIN, DASHBOARD, "/api", "/admin", "/dashboard", "/api/v2", "/API/V1", "/admin/v2"),
    segments
  )
    .map(([prefix, parts]) => `${prefix}/${parts.join("/")}`)
    .filter((p) => !mayRoute(shapes, p))
  const target = fc.oneof(
    { weight: 6, arbitrary: path },
    // The absolute form, with hosts good and bad.
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom("evil.example", "localhost:1", "[::1", "[", "user:pass@host", "%zz", "[::1]:99999", "-"),
        path
      ).map(([host, p]) => `http://${host}${p}`)
    },
    { weight: 1, arbitrary: fc.constant("*") }
  )
  return fc.tuple(
    target,
    fc.constantFrom<Method>("GET", "POST", "DELETE", "PATCH", "PUT", "OPTIONS"),
    fc.oneof(fc.constant(validCredentials(w, api)), badCredentialsOf(w, api)),
    placeBody(w)
  ).map(([target, method, creds, body]) =>
    probe({
      fault: `no route; ${creds.label}`,
      method,
      target,
      headers: { ...creds.headers, ...(["POST", "PUT", "PATCH"].includes(method) ? JSON_TYPE : {}) },
      body: ["POST", "PUT", "PATCH"].includes(method) ? Buffer.from(body.text) : undefined,
      expect: [404]
    })
  )
}

/** A way of spelling a path differently that a lenient router may still take for it. */
const RESPELLINGS: ReadonlyArray<readonly [string, (path: string, n: number) => string]> = [
  ["all upper case", (p) => p.toUpperCase()],
  ["one segment capitalised", (p, n) => {
    const parts = p.split("/")
    const i = 1 + n % (parts.length - 1)
    parts[i] = parts[i]!.charAt(0).toUpperCase() + parts[i]!.slice(1)
    return parts.join("/")
  }],
  ["a letter percent-encoded", (p, n) => {
    const letters = [...p.matchAll(/[A-Za-z~_.-]/g)].map((m) => m.index)
    const i = letters[n % letters.length]!
    const hex = p.charCodeAt(i).toString(16)
    return `${p.slice(0, i)}%${n % 2 === 0 ? hex.toUpperCase() : hex}${p.slice(i + 1)}`
  }],
  ["a doubled slash", (p, n) => {
    const slashes = [...p.matchAll(/\//g)].map((m) => m.index)
    const i = slashes[n % slashes.length]!
    return `${p.slice(0, i)}/${p.slice(i)}`
  }],
  ["a trailing slash", (p) => `${p}/`],
  ["a ./ segment", (p, n) => {
    const slashes = [...p.matchAll(/\//g)].map((m) => m.index)
    const i = slashes[n % slashes.length]!
    return `${p.slice(0, i)}/.${p.slice(i)}`
  }],
  ["an x/../ segment", (p, n) => {
    const slashes = [...p.matchAll(/\//g)].map((m) => m.index)
    const i = slashes[n % slashes.length]!
    return `${p.slice(0, i)}/x/..${p.slice(i)}`
  }]
]

/** Another spelling of a canonical path (no query): by case, percent-encoding, slashes or dot segments. */
export const spelling = (path: string): fc.Arbitrary<{ readonly how: string; readonly path: string }> =>
  fc.array(fc.tuple(fc.constantFrom(...RESPELLINGS), fc.nat()), { minLength: 1, maxLength: 2 })
    .map((steps) => ({
      how: steps.map(([[how]]) => how).join(", "),
      path: steps.reduce((p, [[, respell], n]) => respell(p, n), path)
    }))
    .filter((s) => s.path !== path)
