/**
 * The outermost request middleware: gives every request an id (returned as
 * `X-Request-Id`) and writes one structured log line per request. It never logs headers,
 * bodies or query strings, so keys and tokens stay out of the logs.
 */
import { ApiError } from "@databundle/contract"
import { HttpApp, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Exit, FiberRef, Option } from "effect"
import * as Logging from "./Logging.js"
import * as RequestContext from "./RequestContext.js"

/**
 * A response with the request's id and whatever headers the gateway decided on (rate
 * limits, `Allow`, the dashboard's, closing the connection).
 */
const withHeaders = (info: RequestContext.RequestInfo, response: HttpServerResponse.HttpServerResponse) =>
  info.headers === undefined
    ? HttpServerResponse.setHeader(response, ApiError.REQUEST_ID_HEADER, info.id)
    : HttpServerResponse.setHeaders(response, {
      ...info.headers,
      ...(info.closeAfter === true ? { connection: "close" } : {}),
      [ApiError.REQUEST_ID_HEADER]: info.id
    })

/**
 * What the platform does to the application's response before sending it: the pre-response
 * handlers the request's handler added (an order's replay header). An answer given in the
 * application's stead gets them too.
 */
const preResponse = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.flatMap(
    FiberRef.get(HttpApp.currentPreResponseHandlers),
    (handler) => Option.isNone(handler) ? Effect.succeed(response) : Effect.orDie(handler.value(request, response))
  )

/** Counts a finished request in its route's metrics and writes its log line. */
const finish = (
  request: HttpServerRequest.HttpServerRequest,
  info: RequestContext.RequestInfo,
  started: number,
  status: number
) => {
  const elapsed = performance.now() - started
  info.route?.observe(status, elapsed / 1000)
  const annotations = {
    request_id: info.id,
    method: request.method,
    path: RequestContext.pathOf(request.url),
    status,
    duration_ms: Math.round(elapsed * 10) / 10,
    ...(info.accountId === undefined ? {} : { account_id: info.accountId })
  }
  return Effect.flatMap(FiberRef.get(Logging.requestLines), (write) =>
    write === undefined
      ? Effect.logInfo("request").pipe(Effect.annotateLogs(annotations))
      : Effect.sync(() => write(Logging.requestLine(annotations))))
}

/** Wraps the whole HTTP app. */
export const middleware = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const info: RequestContext.RequestInfo = { id: RequestContext.newId(), accountId: undefined }
    const started = performance.now()
    yield* RequestContext.annotateSpan("request_id", info.id)
    // A request the gateway answers before the router skips the application, not this log.
    const early = yield* Effect.serviceOption(RequestContext.EarlyAnswer)
    const answer = Option.isSome(early) ? early.value(request, info) : undefined
    if (answer !== undefined && HttpServerResponse.isServerResponse(answer)) {
      const response = withHeaders(info, answer)
      return yield* Effect.as(finish(request, info, started, response.status), response)
    }
    const finished = <E>(exit: Exit.Exit<HttpServerResponse.HttpServerResponse, E>) =>
      // 499: the client went away before the answer (its order may still have been placed).
      finish(request, info, started, Exit.isSuccess(exit) ? exit.value.status : Exit.isInterrupted(exit) ? 499 : 500)
    if (answer !== undefined) {
      return yield* Effect.locally(answer, RequestContext.current, info).pipe(
        Effect.flatMap((response) => preResponse(request, response)),
        Effect.map((response) => withHeaders(info, response)),
        Effect.onExit(finished)
      )
    }
    // The headers go with the application's answer through the request's one pre-response
    // handler (errors included).
    yield* HttpApp.appendPreResponseHandler((_, response) => Effect.succeed(withHeaders(info, response)))
    return yield* Effect.locally(app, RequestContext.current, info).pipe(Effect.onExit(finished))
  })
)
