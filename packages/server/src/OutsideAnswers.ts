/**
 * Every answer the server reads from outside (an upstream, the payment gateway, the operator's
 * alert receiver, the trace collector, the mail server) is read to a cap, `MAX_BYTES`, and
 * refused past it: an answer that declares more is refused before its body is read, one that
 * sends more is cut off at the cap and its connection closed. A malicious or broken party can
 * then cost a request at most that much memory, however large what it sends.
 *
 * A refused answer is a failure of the call like any other the caller already handles: an
 * upstream's order stays with that upstream and is asked again by its reference (a replay,
 * never a second purchase), a payment stays pending and is asked about again, never credited
 * on an answer nobody read.
 */
import { FetchHttpClient, type HttpClient } from "@effect/platform"
import { Layer } from "effect"

/** The most of one answer read from outside: 1 MiB, far more than any answer of theirs needs. */
export const MAX_BYTES = 1024 * 1024

/** An answer from outside was larger than `MAX_BYTES`. */
export class AnswerTooLarge extends Error {
  override readonly name = "AnswerTooLarge"
  constructor() {
    super(`the answer is larger than ${MAX_BYTES / 1024 / 1024} MiB: refused`)
  }
}

/** True when `error`, or one of its causes, is an `AnswerTooLarge`. */
export const isTooLarge = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && current !== null && typeof current === "object"; depth++) {
    if (current instanceof AnswerTooLarge) return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}

/** `fetch`, with every answer's body read to the cap. */
export const cappedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init)
  const declared = Number(response.headers.get("content-length") ?? "0")
  if (declared > MAX_BYTES) {
    await response.body?.cancel().catch(() => undefined)
    throw new AnswerTooLarge()
  }
  if (response.body === null) return response
  let read = 0
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        read += chunk.byteLength
        // An error here cancels the source: nothing more is read, the connection closes.
        if (read > MAX_BYTES) controller.error(new AnswerTooLarge())
        else controller.enqueue(chunk)
      }
    })
  )
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}

/** The HTTP client for calls to the outside: the platform's fetch client on `cappedFetch`. */
export const httpClient: Layer.Layer<HttpClient.HttpClient> = FetchHttpClient.layer.pipe(
  Layer.provide(Layer.succeed(FetchHttpClient.Fetch, cappedFetch))
)
