/**
 * The Node HTTP(S) server under the application, with the limits a public server needs:
 * header size, how long a client may take to send its headers and its request, and a JSON
 * envelope even for requests Node refuses before any handler sees them.
 */
import { Option } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import type * as net from "node:net"

/** Largest request head (request line and headers together). */
export const MAX_HEADER_BYTES = 16 * 1024

const limits = {
  maxHeaderSize: MAX_HEADER_BYTES,
  // Slow clients may not hold a connection open: headers within 10 s, the whole request within 30 s.
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000
} satisfies http.ServerOptions

const refuse = (socket: net.Socket, status: number, reason: string, tag: string, message: string) => {
  const body = JSON.stringify({ success: false, message, _tag: tag })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`
  )
}

/** A Node server (HTTPS when given a certificate and key) with the limits above. */
export const make = (tls: Option.Option<{ readonly cert: string; readonly key: string }>): http.Server => {
  const server = Option.match(tls, {
    onNone: () => http.createServer(limits),
    onSome: ({ cert, key }) =>
      https.createServer({
        ...limits,
        cert: fs.readFileSync(cert),
        key: fs.readFileSync(key)
      }) as unknown as http.Server
  })
  server.keepAliveTimeout = limits.keepAliveTimeout
  // Requests the parser refuses (oversized head, garbage) still get the JSON envelope.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: net.Socket) => {
    if (!socket.writable || error.code === "ECONNRESET") return socket.destroy()
    if (error.code === "HPE_HEADER_OVERFLOW") {
      return refuse(socket, 431, "Request Header Fields Too Large", "HeadersTooLarge", "Request headers too large")
    }
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      return refuse(socket, 408, "Request Timeout", "RequestTimeout", "Request took too long to arrive")
    }
    refuse(socket, 400, "Bad Request", "BadRequest", "Malformed HTTP request")
  })
  return server
}
