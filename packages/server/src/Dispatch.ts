/**
 * The one dispatch: each endpoint of the route table answered by its own handler as
 * `HttpApiBuilder` built it (the endpoint's schemas decoding its path, query, headers and
 * payload, its security middleware, its success encoded), and the routes outside the APIs by
 * theirs, all taken from the API's router (`HttpApiBuilder.Router`) by method and path, so
 * that the route table's decision is the only one: the router never matches a request.
 *
 * A reseller's catalogue reads can be answered from what the catalogue holds in memory
 * (`CachedRead`), the same bytes the handler would send; anything not cached goes to the
 * handler.
 */
import type { ApiKeys } from "@databundle/core"
import {
  HttpApiBuilder,
  HttpRouter,
  HttpServerRequest,
  HttpServerRespondable,
  type HttpServerResponse
} from "@effect/platform"
import { Chunk, Effect } from "effect"
import type * as Admission from "./Admission.js"
import * as RequestBody from "./RequestBody.js"
import * as RequestContext from "./RequestContext.js"
import type * as Routes from "./Routes.js"

/**
 * A reseller's read answered from memory: its response for the caller and the request's path
 * parameters (decoded, as the handler gets them), or `undefined` to leave it to the handler.
 */
export type CachedRead = (
  principal: ApiKeys.Principal,
  params: Readonly<Record<string, string>>
) => HttpServerResponse.HttpServerResponse | undefined

/**
 * The endpoint's handler, run for `request` at `target` with its `body` as the admission read
 * it and its path parameters, as the caller the admission found.
 */
export type Run = (
  endpoint: Routes.Endpoint,
  request: HttpServerRequest.HttpServerRequest,
  body: Admission.Body,
  target: RequestContext.Target,
  params: Readonly<Record<string, string>>,
  caller: RequestContext.Caller
) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpRouter.HttpRouter.DefaultServices>

/**
 * The path parameters of a request for `endpoint` by its canonical `path`, percent-escapes
 * decoded; `undefined` when one decodes to no text (an escape of a broken UTF-8 sequence),
 * which names no route.
 */
export const pathParams = (endpoint: Routes.Endpoint, path: string): Readonly<Record<string, string>> | undefined => {
  const params: Record<string, string> = {}
  if (endpoint.params.length === 0) return params
  const parts = path.slice(1).split("/")
  for (let i = 0; i < endpoint.segments.length; i++) {
    const segment = endpoint.segments[i]!
    if (!segment.startsWith(":")) continue
    const part = parts[i]!
    if (!part.includes("%")) {
      params[segment.slice(1)] = part
      continue
    }
    try {
      params[segment.slice(1)] = decodeURIComponent(part)
    } catch {
      return undefined
    }
  }
  return params
}

const decodeComponent = (text: string) => {
  const spaced = text.includes("+") ? text.replace(/\+/g, " ") : text
  if (!spaced.includes("%")) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

/**
 * The query's parameters as the handlers read them (`HttpServerRequest.ParsedSearchParams`):
 * `&`-separated `name=value` pairs, `+` as a space, percent-escapes decoded (an escape that
 * does not decode kept as written), a name given more than once as the list of its values,
 * in order; an empty pair is ignored.
 */
export const searchParams = (query: string): Record<string, string | Array<string>> => {
  const out: Record<string, string | Array<string>> = Object.create(null)
  if (query.length <= 1) return out
  for (const pair of query.slice(1).split("&")) {
    const equals = pair.indexOf("=")
    const name = decodeComponent(equals < 0 ? pair : pair.slice(0, equals))
    if (pair.length === 0) continue
    const value = equals < 0 ? "" : decodeComponent(pair.slice(equals + 1))
    const previous = out[name]
    out[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value]
  }
  return out
}

const key = (method: string, path: string) => `${method} ${path}`

/**
 * The handlers of the API's router by endpoint: every endpoint of `routes` has one and every
 * handler an endpoint (else the server does not start). Each is run as the route it was built
 * for, with the route's context, the query's parameters, the request and the caller the
 * admission found.
 */
export const handlers = (routes: Routes.Routes) =>
  Effect.gen(function*() {
    const router = yield* HttpApiBuilder.Router.router
    const byKey = new Map(Chunk.toReadonlyArray(router.routes).map((route) => [key(route.method, route.path), route]))
    const table = new Map(routes.endpoints.map((endpoint) => {
      const path = `/${endpoint.segments.join("/")}`
      const route = byKey.get(key(endpoint.method, path))
      if (route === undefined) throw new Error(`${endpoint.name} (${endpoint.method} ${path}) has no handler`)
      return [endpoint, route] as const
    }))
    // (And the other way: a handler no entry of the table names could never be reached.)
    const reached = new Set(table.values())
    for (const [name, route] of byKey) {
      if (!reached.has(route)) throw new Error(`${name} has a handler but no entry in the route table`)
    }
    const run: Run = (endpoint, request, body, target, params, caller) => {
      const route = table.get(endpoint)!
      const context: HttpRouter.RouteContext = {
        [HttpRouter.RouteContextTypeId]: HttpRouter.RouteContextTypeId,
        route,
        params
      }
      const answer = Effect.flatMap(route.handler, HttpServerRespondable.toResponse).pipe(
        Effect.provideService(HttpRouter.RouteContext, context),
        Effect.provideService(
          HttpServerRequest.ParsedSearchParams,
          searchParams(target.query)
        ),
        // (A request without a payload is handed as it came: its body is never read.)
        Effect.provideService(
          HttpServerRequest.HttpServerRequest,
          endpoint.hasPayload ? RequestBody.withBody(request, body.text, body.json) : request
        ),
        Effect.locally(RequestContext.caller, caller)
      )
      // The route, as the platform names it on the request's span.
      return Effect.zipRight(
        RequestContext.annotateSpan("http.route", route.path),
        route.uninterruptible ? answer : Effect.interruptible(answer)
      )
    }
    return run
  })

/**
 * The framework's router as the dispatch, for the differential test: the request handed to
 * `app`, which matches it again.
 */
export const byRouter = (
  app: Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    unknown,
    HttpServerRequest.HttpServerRequest | HttpRouter.HttpRouter.DefaultServices
  >
): Run =>
(_endpoint, request, body, target, _params, caller) =>
  app.pipe(
    // The router is handed the canonical path, which it matches again, and the body read.
    Effect.provideService(
      HttpServerRequest.HttpServerRequest,
      RequestBody.withBody(request.modify({ url: target.path + target.query }), body.text, body.json)
    ),
    Effect.locally(RequestContext.caller, caller)
  )
