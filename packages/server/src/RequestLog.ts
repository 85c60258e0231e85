/**
 * The outermost request middleware, which only logs and measures: it gives every request an
 * id (the road sends it back as `X-Request-Id` and names it in every error), and when the
 * answer has been sent, counts it in its route's metrics and writes one structured log line.
 * It never logs headers, bodies or query strings, so keys and tokens stay out of the logs.
 */
import { HttpMiddleware, HttpServerRequest } from "@effect/platform"
import { Effect, Exit, FiberRef } from "effect"
import * as Logging from "./Logging.js"
import * as RequestContext from "./RequestContext.js"

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
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const info: RequestContext.RequestInfo = { id: RequestContext.newId(), accountId: undefined }
    const started = performance.now()
    return Effect.zipRight(
      RequestContext.annotateSpan("request_id", info.id),
      Effect.locally(app, RequestContext.current, info).pipe(
        // 499: the client went away before the answer (its order may still have been placed).
        Effect.onExit((exit) =>
          finish(
            request,
            info,
            started,
            Exit.isSuccess(exit) ? exit.value.status : Exit.isInterrupted(exit) ? 499 : 500
          )
        )
      )
    )
  })
)
