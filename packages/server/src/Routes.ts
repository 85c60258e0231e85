/**
 * The route table of an HttpApi, for what the router itself does not tell: which methods a
 * path allows (405 and `Allow`), which endpoint a request is for before it is routed
 * (rate-limit scopes, body rules) and which path parameters it has (a path parameter that
 * does not decode names nothing: 404).
 */
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Option } from "effect"

/** One endpoint of the table. */
export interface Route {
  readonly group: string
  readonly name: string
  readonly method: string
  readonly segments: ReadonlyArray<string>
  readonly params: ReadonlyArray<string>
  readonly hasPayload: boolean
}

/** The result of matching a request. */
export interface Match {
  /** The endpoint for this method and path, if any. */
  readonly route: Route | undefined
  /** Every method some endpoint serves at this path. */
  readonly allowed: ReadonlyArray<string>
}

const split = (path: string) => path.split("/").filter((s) => s.length > 0)

/** Builds the table of every endpoint of an API. */
export const make = (api: HttpApi.HttpApi.Any) => {
  const routes: Array<Route> = []
  const { groups } = api as unknown as HttpApi.HttpApi.AnyWithProps
  for (const group of Object.values(groups) as Array<HttpApiGroup.HttpApiGroup.AnyWithProps>) {
    for (const endpoint of Object.values(group.endpoints) as Array<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>) {
      const segments = split(endpoint.path)
      routes.push({
        group: group.identifier,
        name: endpoint.name,
        method: endpoint.method,
        segments,
        params: segments.filter((s) => s.startsWith(":")).map((s) => s.slice(1)),
        hasPayload: Option.isSome(endpoint.payloadSchema)
      })
    }
  }
  const matches = (route: Route, parts: ReadonlyArray<string>) =>
    route.segments.length === parts.length &&
    route.segments.every((segment, i) => segment.startsWith(":") || segment === parts[i])

  /** Matches a method and a path (no query string). Static segments win over parameters, as in the router. */
  const match = (method: string, path: string): Match => {
    const parts = split(path)
    const candidates = routes.filter((route) => matches(route, parts))
    const forMethod = candidates
      .filter((route) => route.method === method)
      .sort((a, b) => a.params.length - b.params.length)
    return { route: forMethod[0], allowed: [...new Set(candidates.map((route) => route.method))] }
  }
  return { routes, match }
}

/** A route table. */
export type Routes = ReturnType<typeof make>
