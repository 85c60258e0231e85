/**
 * The one road every request takes from the socket to its answer:
 *
 * 1. **route**: one decision from the route table (`Routes`), derived from the contract;
 * 2. **admission**: one sequence (`Admission`): credentials, limits, body, refusals;
 * 3. **dispatch**: the endpoint's own handler as `HttpApiBuilder` built it (`Dispatch`), or a
 *    file of the web dashboard, or a catalogue read answered from memory;
 * 4. **envelope**: every failure as one of the API's errors, every answer with the headers
 *    the admission decided and the request id (`Envelope`).
 *
 * When every input of the admission is in memory and the answer is a cached read, the road
 * runs synchronously to its response; otherwise the same steps run as effects. The request
 * log (`RequestLog`) wraps the road and only logs and measures.
 */
import { ApiError } from "@databundle/contract"
import type { HttpApi } from "@effect/platform"
import { type HttpRouter, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Cause, Effect, FiberRef, Option } from "effect"
import * as Admission from "./Admission.js"
import * as Dispatch from "./Dispatch.js"
import * as Envelope from "./Envelope.js"
import * as Metrics from "./Metrics.js"
import * as RequestContext from "./RequestContext.js"
import type * as Routes from "./Routes.js"

/**
 * The road of `api` described by `routes`, with the catalogue reads of `reads` (by endpoint
 * name, `group.endpoint`) answered from memory when they can be: `road(dispatch)` is the
 * application answering by `dispatch`.
 */
export const make = (
  api: HttpApi.HttpApi.Any,
  routes: Routes.Routes,
  reads: Readonly<Record<string, Dispatch.CachedRead>> = {}
) =>
  Effect.gen(function*() {
    const { admit } = yield* Admission.make
    const { failed } = yield* Envelope.make(api)
    const metrics = yield* Metrics.Metrics
    const told = Option.getOrUndefined(yield* Effect.serviceOption(Admission.Shortcuts))
    // Each endpoint's request metrics, found by the route decision (no label building per request).
    const routeMetrics = new Map(routes.endpoints.map((endpoint) => [
      endpoint,
      metrics.route(endpoint.method, `/${endpoint.segments.join("/")}`)
    ]))
    const unmatched = metrics.route("", Metrics.UNMATCHED)
    const cached = new Map(routes.endpoints.flatMap((endpoint) => {
      const read = reads[endpoint.name]
      return read === undefined ? [] : [[endpoint, read] as const]
    }))

    /** The answer to `request` (whose log line `info` is), on the road described above. */
    const answer = (
      dispatch: Dispatch.Run,
      request: HttpServerRequest.HttpServerRequest,
      info: RequestContext.RequestInfo
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpRouter.HttpRouter.DefaultServices> => {
      const target = RequestContext.splitTarget(request.url)
      const decision = routes.decide(request.method, target.path)
      info.route = decision._tag === "Endpoint" ? routeMetrics.get(decision.endpoint) : unmatched
      // A body not read to its end (refused, too large, too slow, or for an endpoint without a
      // payload) is not worth draining: the connection closes after the answer.
      const gathered: Admission.Answer = { headers: {}, closeAfter: Admission.carriesBody(request) }
      const sent = (response: HttpServerResponse.HttpServerResponse) => Envelope.send(response, gathered, info)
      const fail = (cause: Cause.Cause<unknown>) => failed(cause, request, decision, target.path, info)
      if (decision._tag === "Static") {
        if (request.method === "GET" || request.method === "HEAD") {
          return Effect.map(routes.statics!.serve(request, decision.segments), sent)
        }
        gathered.headers.allow = "GET, HEAD"
        return Effect.map(
          fail(Cause.fail(
            new ApiError.MethodNotAllowed({
              message: `${request.method} is not allowed on ${target.path}; use GET or HEAD`
            })
          )),
          sent
        )
      }
      const admitted = admit(request, decision, target.path, gathered, info)
      if (decision._tag !== "Endpoint") {
        return Effect.map(Effect.catchAllCause(admitted as Effect.Effect<never, unknown>, fail), sent)
      }
      const { endpoint } = decision
      const params = Dispatch.pathParams(endpoint, target.path)
      // From the cache only what the handler would answer alike: no query, no body, admitted from memory.
      if (
        !Effect.isEffect(admitted) && admitted.caller._tag === "Reseller" && params !== undefined &&
        target.query === "" && !gathered.closeAfter
      ) {
        const response = cached.get(endpoint)?.(admitted.caller.principal, params)
        if (response !== undefined) {
          told?.(info, "cache")
          return Effect.succeed(sent(response))
        }
      }
      return Effect.map(
        Effect.catchAllCause(
          Admission.andThen(admitted, ({ body, caller }) =>
            params === undefined
              ? Effect.fail(new ApiError.NotFound({ message: `No route for ${request.method} ${target.path}` }))
              : dispatch(
                endpoint,
                request,
                body,
                target,
                params,
                caller
              )) as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>,
          fail
        ),
        sent
      )
    }

    /** The road as an application answering by `dispatch`. */
    const road = (dispatch: Dispatch.Run) =>
      Effect.flatMap(
        HttpServerRequest.HttpServerRequest,
        (request) => Effect.flatMap(FiberRef.get(RequestContext.current), (info) => answer(dispatch, request, info))
      )
    return { road }
  })
