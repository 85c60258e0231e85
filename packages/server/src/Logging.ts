/**
 * Log output: one JSON object per line, at Info and above. The server logs to stdout;
 * one-shot commands log to stderr so that their stdout holds only their output.
 *
 * The server writes a line per request, so its lines are written in batches: each goes to a
 * buffer that is written out once per turn of the event loop (at once past 64 KiB), which
 * makes one write of many lines instead of one write each. The process's exit writes what is
 * left, synchronously, so a clean shutdown loses no line (only a kill -9 can lose the lines of
 * its last turn).
 *
 * A line holds `message`, `logLevel`, `timestamp`, its `annotations` (a line written while
 * serving a request carries that request's `request_id`), `cause` when there is one, and
 * `spans` only when some are open; never Effect's internal fiber id.
 */
import { Effect, FiberRef, FiberRefs, Inspectable, Layer, Logger, LogLevel } from "effect"
import * as RequestContext from "./RequestContext.js"

const errorToJson = (u: unknown) =>
  u instanceof Error && !("toJSON" in u) ? { ...u, name: u.name, message: u.message } : u

/** The JSON line of one log entry. */
export const jsonLine = Logger.make<unknown, string>((options) => {
  const { annotations, cause, logLevel, message, spans, timestamp } = Logger.structuredLogger.log(options)
  const info = FiberRefs.getOrDefault(options.context, RequestContext.current)
  const annotated = info.id !== "none" && !("request_id" in annotations)
    ? { request_id: info.id, ...annotations }
    : annotations
  return Inspectable.stringifyCircular({
    message: Array.isArray(message) ? message.map(errorToJson) : errorToJson(message),
    logLevel,
    timestamp,
    ...(cause === undefined ? {} : { cause }),
    annotations: annotated,
    ...(Object.keys(spans).length === 0 ? {} : { spans })
  })
})

/** Past this many characters a batch is written at once. */
const BATCH_LIMIT = 64 * 1024

/** A writer of lines to `stream` in batches, flushed on the next turn of the event loop and at exit. */
export const batchedLines = (stream: NodeJS.WriteStream) => {
  let pending: Array<string> = []
  let size = 0
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const text = pending.join("")
    pending = []
    size = 0
    stream.write(text)
  }
  process.once("exit", flush)
  return (line: string) => {
    pending.push(line + "\n")
    size += line.length + 1
    if (size >= BATCH_LIMIT) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}

/**
 * Where a request's line may be written directly, as the text `jsonLine` would make of it,
 * instead of through the logger (which costs a good share of a cached read). Set only where
 * the lines go to the server's own output at Info; anywhere else (tests capturing the
 * logger's lines, the one-shot commands) request lines go through the logger.
 */
export const requestLines: FiberRef.FiberRef<((line: string) => void) | undefined> = FiberRef.unsafeMake<
  ((line: string) => void) | undefined
>(undefined)

/**
 * The line of a request (message `request` at Info), as `jsonLine` writes it for the same
 * annotations outside any span: `annotations` must start with the request's `request_id`.
 */
export const requestLine = (annotations: Readonly<Record<string, unknown>>): string =>
  `{"message":"request","logLevel":"INFO","timestamp":${JSON.stringify(new Date().toISOString())},"annotations":${
    JSON.stringify(annotations)
  }}`

/** JSON lines on stdout, in batches, for `serve`; request lines go straight to the batch. */
export const toStdout = Layer.unwrapEffect(Effect.sync(() => {
  const write = batchedLines(process.stdout)
  return Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, Logger.map(jsonLine, write)),
    Logger.minimumLogLevel(LogLevel.Info),
    Layer.locallyScoped(requestLines, write)
  )
}))

/** JSON lines on stderr, for every other command. */
export const toStderr = Layer.mergeAll(
  Logger.replace(Logger.defaultLogger, Logger.withConsoleError(jsonLine)),
  Logger.minimumLogLevel(LogLevel.Info)
)
