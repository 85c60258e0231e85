/**
 * Reading a request body under a size limit, such that an oversized body still gets its 413.
 *
 * The platform's own bounded read destroys the request stream on overflow, and on Node that
 * destroys the socket before any response is written. On Node this module reads the
 * `IncomingMessage` itself and, past the limit, lets the rest drain into nothing; elsewhere
 * (the web handler) it uses the platform's read. Either way the body is handed on through a
 * request whose body effects return it, so the router does not read the stream again.
 */
import { ApiError } from "@databundle/contract"
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { Readable } from "node:stream"

const tooLarge = (limit: number) => new ApiError.PayloadTooLarge({ message: `Request body over ${limit / 1024} KiB` })

const readNode = (source: Readable, limit: number) =>
  Effect.async<string, ApiError.PayloadTooLarge | Error>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        cleanup()
        source.resume()
        resume(Effect.fail(tooLarge(limit)))
      } else {
        chunks.push(chunk)
      }
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    const onError = (error: Error) => {
      cleanup()
      resume(Effect.fail(error))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    return Effect.sync(cleanup)
  })

/** Reads the body as text, failing with a 413 past `limit` bytes. */
export const readText = (request: HttpServerRequest.HttpServerRequest, limit: number) => {
  const source = (request as { readonly source?: unknown }).source
  return source instanceof Readable
    ? readNode(source, limit)
    : request.text.pipe(
      HttpServerRequest.withMaxBodySize(Option.some(limit)),
      Effect.mapError(() => tooLarge(limit))
    )
}

/** The same request, whose body reads return the body already read (`text`, parsed as `json`). */
export const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string,
  json: unknown
): HttpServerRequest.HttpServerRequest =>
  Object.create(request, {
    text: { value: Effect.succeed(text) },
    json: { value: Effect.succeed(json) },
    arrayBuffer: { value: Effect.sync(() => new TextEncoder().encode(text).buffer as ArrayBuffer) }
  })
