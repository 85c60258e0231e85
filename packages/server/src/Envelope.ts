/**
 * Every answer in the API's envelope: whatever a request fails with (the admission's
 * refusals, a handler's errors, a decode failure, a defect) leaves as one of the API's errors,
 * encoded by the API's own error schemas, with the request's id in its body; and every
 * answer, success or failure, leaves with the headers the admission decided and the id.
 */
import { ApiError, Validation } from "@databundle/contract"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiError,
  HttpServerError,
  type HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Option, Schema } from "effect"
import type * as Admission from "./Admission.js"
import * as RequestContext from "./RequestContext.js"
import type * as Routes from "./Routes.js"

/** A test for the API's own errors, from every error schema its endpoints, groups and itself declare. */
const apiErrorTest = (api: HttpApi.HttpApi.Any) => {
  const schemas: Array<Schema.Schema.Any> = []
  HttpApi.reflect(api as HttpApi.HttpApi<string, never, never, never>, {
    onGroup: () => {},
    onEndpoint: ({ errors }) => {
      for (const { ast } of errors.values()) if (Option.isSome(ast)) schemas.push(Schema.make(ast.value))
    }
  })
  const is = Schema.is(Schema.Union(...schemas))
  return (u: unknown): boolean => is(u)
}

/** The names of the query parameters given more than once. */
const repeatedParams = (url: string): ReadonlySet<string> => {
  const seen = new Set<string>()
  const repeated = new Set<string>()
  for (const [name] of new URLSearchParams(RequestContext.splitTarget(url).query)) {
    if (seen.has(name)) repeated.add(name)
    seen.add(name)
  }
  return repeated
}

/**
 * A copy of `error` that carries the request's id in its body (`request_id`); the error
 * itself may be shared, so it is not changed.
 */
const withRequestId = (error: unknown, id: string) =>
  typeof error === "object" && error !== null && !("request_id" in error && error.request_id !== undefined)
    ? Object.create(Object.getPrototypeOf(error), {
      ...Object.getOwnPropertyDescriptors(error),
      request_id: { value: id, enumerable: true, writable: true, configurable: true }
    })
    : error

/** The envelope of `api`'s answers. */
export const make = (api: HttpApi.HttpApi.Any) =>
  Effect.gen(function*() {
    const isApiError = apiErrorTest(api)
    // The API's own encoding of its errors.
    const encode = yield* HttpApiBuilder.buildMiddleware(api as HttpApi.HttpApi<string, never, never, never>)

    /**
     * The answer to a request that failed with `cause`, encoded, with the request's id: the
     * API's own errors as they are, a decode failure as a 404 (a path parameter) or a 422, and
     * anything else, defects included, a 500 that names only the request id.
     */
    const failed = (
      cause: Cause.Cause<unknown>,
      request: HttpServerRequest.HttpServerRequest,
      decision: Routes.Decision,
      path: string,
      info: RequestContext.RequestInfo
    ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      // (Every failure is one of the API's errors by now, so encoded; anything else would be a defect.)
      const answer = (error: unknown) => Effect.orDie(encode(Effect.fail(withRequestId(error, info.id))))
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) {
        const error: unknown = failure.value
        // (Every HttpApi declares the decode error too; it is answered here, in the envelope.)
        if (error instanceof HttpApiError.HttpApiDecodeError) {
          // A path parameter that does not decode names nothing.
          const params = decision._tag === "Endpoint" ? decision.endpoint.params : []
          return answer(
            error.issues.some((issue) => params.includes(String(issue.path[0])))
              ? new ApiError.NotFound({ message: `Not found: ${path}` })
              : Validation.validationError(Validation.fieldErrors(error.issues, repeatedParams(request.url)))
          )
        }
        // (Only the framework's router, in the differential test, can fail so: the route table decided first.)
        if (error instanceof HttpServerError.RouteNotFound) {
          return answer(new ApiError.NotFound({ message: `No route for ${request.method} ${path}` }))
        }
        if (isApiError(error)) return answer(error)
      }
      return Effect.zipRight(
        Effect.logError("request failed", cause),
        answer(new ApiError.ServerError({ message: "Internal server error", request_id: info.id }))
      )
    }

    return { failed }
  })

/** `response` with the headers `answer` gathered and the request's id. */
export const send = (
  response: HttpServerResponse.HttpServerResponse,
  answer: Admission.Answer,
  info: RequestContext.RequestInfo
) =>
  HttpServerResponse.setHeaders(response, {
    ...answer.headers,
    ...(answer.closeAfter ? { connection: "close" } : {}),
    [ApiError.REQUEST_ID_HEADER]: info.id
  })
