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
import { Duration, Effect, Option, Stream } from "effect"
import { Readable } from "node:stream"

/**
 * How long a body may take to arrive once the headers have: with the server's 10 s for the
 * headers, the whole request arrives within 30 s (docs/security.md).
 */
export const BODY_TIMEOUT = Duration.seconds(20)

const tooLarge = (limit: number) => new ApiError.PayloadTooLarge({ message: `Request body over ${limit / 1024} KiB` })

const timedOut = () =>
  new ApiError.RequestTimeout({
    message: `Request body took longer than ${Duration.format(BODY_TIMEOUT)} to arrive`
  })

const readNode = (source: Readable, limit: number) =>
  Effect.async<Uint8Array, ApiError.PayloadTooLarge | ApiError.RequestTimeout>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const deadline = setTimeout(() => {
      cleanup()
      resume(Effect.fail(timedOut()))
    }, Duration.toMillis(BODY_TIMEOUT))
    const cleanup = () => {
      clearTimeout(deadline)
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onGone)
      source.off("close", onClose)
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
      resume(Effect.succeed(Buffer.concat(chunks)))
    }
    // The client went away mid-body: nothing to answer, so the request ends as interrupted
    // (its log line says 499).
    const onGone = () => {
      cleanup()
      resume(Effect.interrupt)
    }
    const onClose = () => {
      if (!(source as Readable & { readonly complete?: boolean }).complete) onGone()
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onGone)
    source.on("close", onClose)
    return Effect.sync(cleanup)
  })

/**
 * Reads the body's bytes, failing with a 413 past `limit` bytes (nothing past it is kept)
 * and with a 408 when it takes longer than `BODY_TIMEOUT`.
 */
export const readBytes = (request: HttpServerRequest.HttpServerRequest, limit: number) => {
  const source = (request as { readonly source?: unknown }).source
  return source instanceof Readable
    ? readNode(source, limit)
    : request.arrayBuffer.pipe(
      Effect.map((buffer) => new Uint8Array(buffer)),
      HttpServerRequest.withMaxBodySize(Option.some(limit)),
      Effect.mapError(() => tooLarge(limit)),
      Effect.timeoutFail({ duration: BODY_TIMEOUT, onTimeout: timedOut })
    )
}

/**
 * The same request, whose body reads return the body already read (`text`, parsed as `json`),
 * so nothing after the gateway reads the connection again: an endpoint without a payload is
 * handed an empty body, whatever the client sent.
 */
export const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  text: string,
  json: unknown
): HttpServerRequest.HttpServerRequest => {
  const bytes = () => new TextEncoder().encode(text)
  return Object.create(request, {
    text: { value: Effect.succeed(text) },
    json: { value: Effect.succeed(json) },
    arrayBuffer: { value: Effect.sync(() => bytes().buffer as ArrayBuffer) },
    stream: { value: Stream.suspend(() => Stream.make(bytes())) }
  })
}
