/**
 * Requests written byte for byte on a socket, for what no HTTP client sends: request targets
 * as written (dot segments, doubled slashes), bodies that never end, headers that never do.
 */
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import * as net from "node:net"

/** An answer read off the socket. */
export interface WireResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly json: any
  /** Body bytes written before the answer arrived or the socket closed. */
  readonly bytesSent: number
  /** Milliseconds from connecting to the answer (or to the close, when none came). */
  readonly elapsedMs: number
}

/** What `exchange` writes. */
export interface WireRequest {
  readonly method: string
  readonly target: string
  readonly headers?: Readonly<Record<string, string>>
  /** The body, sent at once. */
  readonly body?: string
  /** Instead of `body`: chunks of this size written (chunked) until the answer comes, up to `max` bytes. */
  readonly endless?: { readonly chunk: number; readonly max: number }
  /** Stop writing the head after the request line: the headers never end. */
  readonly headless?: boolean
  /** Close the connection this long after writing, whatever came back. */
  readonly hangUpAfterMs?: number
}

const parse = (raw: string, bytesSent: number, elapsedMs: number): WireResponse => {
  const end = raw.indexOf("\r\n\r\n")
  const head = end < 0 ? raw : raw.slice(0, end)
  const [statusLine, ...lines] = head.split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let text = end < 0 ? "" : raw.slice(end + 4)
  if (headers["transfer-encoding"] === "chunked") {
    let decoded = ""
    let rest = text
    for (;;) {
      const eol = rest.indexOf("\r\n")
      const size = parseInt(rest.slice(0, eol), 16)
      if (!(size > 0)) break
      decoded += rest.slice(eol + 2, eol + 2 + size)
      rest = rest.slice(eol + 2 + size + 2)
    }
    text = decoded
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0),
    headers,
    text,
    json,
    bytesSent,
    elapsedMs
  }
}

/** Sends one request on a new connection to `port` and reads the answer until the server closes or it is complete. */
export const exchange = (port: number, request: WireRequest) =>
  Effect.async<WireResponse>((resume) => {
    const started = Date.now()
    const socket = net.connect(port, "127.0.0.1")
    let raw = ""
    let bytesSent = 0
    let answered = false
    let done = false
    const finish = () => {
      if (done) return
      done = true
      socket.destroy()
      resume(Effect.succeed(parse(raw, bytesSent, Date.now() - started)))
    }
    socket.on("data", (chunk) => {
      raw += chunk.toString("latin1")
      answered = true
      const end = raw.indexOf("\r\n\r\n")
      const length = /\r\ncontent-length: *(\d+)/i.exec(raw)
      if (end >= 0 && length && Buffer.byteLength(raw.slice(end + 4), "latin1") >= Number(length[1])) finish()
    })
    socket.on("close", finish)
    socket.on("error", finish)
    socket.on("connect", () => {
      if (request.hangUpAfterMs !== undefined) setTimeout(finish, request.hangUpAfterMs)
      if (request.headless) return socket.write(`${request.method} ${request.target} HTTP/1.1\r\nHost: x\r\n`)
      const headers: Record<string, string> = { host: "127.0.0.1", ...request.headers }
      // A Content-Length given in `headers` stands (a body that never reaches it is a slow one);
      // a body framed by a Transfer-Encoding given there has none.
      if (request.body !== undefined && headers["transfer-encoding"] === undefined) {
        headers["content-length"] ??= String(Buffer.byteLength(request.body))
      }
      if (request.endless) headers["transfer-encoding"] = "chunked"
      const head = `${request.method} ${request.target} HTTP/1.1\r\n${
        Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")
      }\r\n`
      socket.write(head)
      if (request.body !== undefined) {
        socket.write(request.body)
        bytesSent = Buffer.byteLength(request.body)
      }
      const endless = request.endless
      if (endless) {
        const chunk = `${endless.chunk.toString(16)}\r\n${" ".repeat(endless.chunk)}\r\n`
        const pump = () => {
          while (!answered && !done && bytesSent < endless.max) {
            bytesSent += endless.chunk
            if (!socket.write(chunk)) return socket.once("drain", pump)
          }
        }
        pump()
      }
    })
    return Effect.sync(() => socket.destroy())
  })

/** The test server's port. */
export const port = Effect.map(
  HttpServer.HttpServer,
  (server) => server.address._tag === "TcpAddress" ? server.address.port : 0
)
