/**
 * The one decision about which endpoint a request is for, taken once, before anything else,
 * from the API's own description (`HttpApi.reflect`) and the routes outside it: the
 * credentials, the rate limits, the body rules and the dispatch all act on it.
 *
 * Paths are matched strictly, byte for byte against the templates: no case folding, no
 * percent-decoding of fixed segments, no empty or dot segments. A spelling of a path that is
 * not the canonical one (`/API/V1/ORDERS`, `/api/v1/%6Frders`, `/api/v1//orders`,
 * `/api/v1/orders/`, `/api/v1/./orders`) names nothing: a 404, its body never read. The
 * handler is then handed the canonical path, so it cannot see another endpoint than this table did.
 */
import { EndpointPolicy } from "@databundle/contract"
import { HttpApi, HttpMethod } from "@effect/platform"
import { Option } from "effect"
import type { StaticFiles } from "./StaticFiles.js"

/**
 * Which credentials authenticate requests in an area: the reseller's API key, the admin
 * bearer token, a dashboard user's session cookie, the admin token or an operator's session
 * cookie (`admin`), an operator's session cookie only (`console`), or none at all (`none`:
 * whatever a request sends is not looked at, nor counted as a failure).
 */
export type Credentials = "apiKey" | "bearer" | "session" | "admin" | "console" | "none"

/** A prefix of the server's paths and what every request under it needs. */
export interface Area {
  readonly prefix: string
  /** Which credentials authenticate requests here. */
  readonly credentials: Credentials
  /** The policy of a request under the prefix that names no endpoint (404, 405). */
  readonly policy: EndpointPolicy.Policy
}

/** One endpoint of the table. */
export interface Endpoint {
  readonly method: string
  /** `group.endpoint`, for logs and tests. */
  readonly name: string
  readonly segments: ReadonlyArray<string>
  /** Names of the path parameters, in order. */
  readonly params: ReadonlyArray<string>
  readonly hasPayload: boolean
  readonly authenticated: boolean
  readonly policy: EndpointPolicy.Policy
  readonly area: Area
}

/** What a request is. */
export type Decision =
  | { readonly _tag: "Endpoint"; readonly endpoint: Endpoint; readonly area: Area }
  | { readonly _tag: "MethodNotAllowed"; readonly allowed: ReadonlyArray<string>; readonly area: Area }
  | { readonly _tag: "NotFound"; readonly area: Area | undefined }
  /** A file of the web dashboard (outside every area), by its canonical segments. */
  | { readonly _tag: "Static"; readonly segments: ReadonlyArray<string> }

/** The longest path parameter routed (ids and order numbers are far shorter). */
export const MAX_PARAM_LENGTH = 100

// One path segment: RFC 3986 `pchar`s (`;` excepted) with well-formed percent escapes.
const SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()*+,=:@]|%[0-9A-Fa-f]{2})+$/

/**
 * The segments of a request target's path when it is canonical, else undefined. An
 * absolute-form target (`http://host/path`) gives its path as written.
 */
export const canonicalSegments = (path: string): ReadonlyArray<string> | undefined => {
  if (!path.startsWith("/")) return undefined
  if (path === "/") return []
  const segments = path.slice(1).split("/")
  for (const segment of segments) {
    if (segment === "." || segment === ".." || !SEGMENT.test(segment)) return undefined
  }
  return segments
}

const split = (template: string) => template.split("/").filter((s) => s.length > 0)

/** A route outside the API; `authenticated` ones need their area's credentials. */
export interface Extra {
  readonly method: string
  readonly path: string
  readonly name: string
  readonly authenticated?: boolean
  /** True when it takes a JSON body (read by the gateway, under the area's body rules). */
  readonly payload?: boolean
}

/**
 * Builds the table of an API served under `areas`, plus `extra` routes outside the API, and
 * the dashboard's `statics`: the canonical paths outside every area
 * that they name (its files and page paths, nothing else).
 */
export const make = (
  api: HttpApi.HttpApi.Any,
  areas: ReadonlyArray<Area>,
  extra: ReadonlyArray<Extra> = [],
  statics?: StaticFiles
) => {
  const areaOf = (path: string) => areas.find((area) => path === area.prefix || path.startsWith(`${area.prefix}/`))
  const endpoints: Array<Endpoint> = []
  const add = (endpoint: Omit<Endpoint, "segments" | "params" | "area"> & { readonly path: string }) => {
    const area = areaOf(endpoint.path)
    if (area === undefined) throw new Error(`${endpoint.name} (${endpoint.path}) is outside every area`)
    const segments = split(endpoint.path)
    const { path: _, ...rest } = endpoint
    endpoints.push({
      ...rest,
      segments,
      params: segments.filter((s) => s.startsWith(":")).map((s) => s.slice(1)),
      area
    })
  }
  HttpApi.reflect(api as HttpApi.HttpApi<string, never, never, never>, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) =>
      add({
        method: endpoint.method,
        name: `${group.identifier}.${endpoint.name}`,
        path: endpoint.path,
        hasPayload: Option.isSome(endpoint.payloadSchema) && HttpMethod.hasBody(endpoint.method),
        authenticated: middleware.size > 0,
        policy: EndpointPolicy.fromAnnotations(mergedAnnotations)
      })
  })
  for (const { authenticated = false, payload = false, ...route } of extra) {
    const area = areaOf(route.path)
    add({ ...route, hasPayload: payload, authenticated, policy: area!.policy })
  }

  assertUnambiguous(endpoints)

  const matches = (endpoint: Endpoint, parts: ReadonlyArray<string>) =>
    endpoint.segments.every((segment, i) =>
      segment.startsWith(":") ? parts[i]!.length <= MAX_PARAM_LENGTH : segment === parts[i]
    )
  // The endpoints by their number of segments: a path is compared with those of its length only.
  const byLength = new Map<number, Array<Endpoint>>()
  for (const endpoint of endpoints) {
    const same = byLength.get(endpoint.segments.length)
    if (same === undefined) byLength.set(endpoint.segments.length, [endpoint])
    else same.push(endpoint)
  }

  /** Decides what a request for `method` and `path` (no query string) is. Fixed segments win over parameters. */
  const decide = (method: string, path: string): Decision => {
    const area = areaOf(path)
    const parts = canonicalSegments(path)
    if (area === undefined && parts !== undefined && statics?.has(parts)) return { _tag: "Static", segments: parts }
    if (area === undefined || parts === undefined) return { _tag: "NotFound", area }
    const candidates = (byLength.get(parts.length) ?? []).filter((endpoint) => matches(endpoint, parts))
    const forMethod = candidates
      .filter((endpoint) => endpoint.method === method)
      .sort((a, b) => a.params.length - b.params.length)
    if (forMethod.length > 0) return { _tag: "Endpoint", endpoint: forMethod[0]!, area }
    if (candidates.length > 0) {
      return { _tag: "MethodNotAllowed", allowed: [...new Set(candidates.map((e) => e.method))], area }
    }
    return { _tag: "NotFound", area }
  }
  return { endpoints, decide, statics }
}

const isParam = (segment: string) => segment.startsWith(":")

/**
 * How two templates of one method stand: `"apart"` when no path matches both; else which of
 * them is the more specific (a fixed segment wherever they differ), or `"ambiguous"` when each
 * has a fixed segment where the other has a parameter (`/a/:x` and `/:y/b` both match `/a/b`),
 * or they are the same template.
 */
export const overlap = (
  a: ReadonlyArray<string>,
  b: ReadonlyArray<string>
): "apart" | "first" | "second" | "ambiguous" => {
  if (a.length !== b.length) return "apart"
  let aFixed = false
  let bFixed = false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    if (isParam(x) && isParam(y)) continue
    if (!isParam(x) && !isParam(y)) {
      if (x !== y) return "apart"
      continue
    }
    if (isParam(x)) bFixed = true
    else aFixed = true
  }
  return aFixed && !bFixed ? "first" : bFixed && !aFixed ? "second" : "ambiguous"
}

/**
 * The rule the table decides by, checked when it is built: where two endpoints of one method
 * match the same path, the one with fixed segments wherever they differ wins
 * (`/payments/methods` over `/payments/:payment_number`); two that match a path with neither
 * more specific than the other (or one template twice) are a contract the table refuses.
 */
export const assertUnambiguous = (endpoints: ReadonlyArray<Pick<Endpoint, "method" | "name" | "segments">>) => {
  for (let i = 0; i < endpoints.length; i++) {
    for (let j = i + 1; j < endpoints.length; j++) {
      const a = endpoints[i]!
      const b = endpoints[j]!
      if (a.method === b.method && overlap(a.segments, b.segments) === "ambiguous") {
        throw new Error(
          `${a.name} (${a.method} /${a.segments.join("/")}) and ${b.name} (/${
            b.segments.join("/")
          }) match the same paths with neither more specific`
        )
      }
    }
  }
}

/** A route table. */
export type Routes = ReturnType<typeof make>
