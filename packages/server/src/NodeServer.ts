/**
 * The Node HTTP(S) server under the application, with the limits a public server needs:
 * header size, how long a client may take to send its headers and its request, and a JSON
 * envelope even for requests Node refuses before any handler sees them.
 */
import { ApiError } from "@databundle/contract"
import { Option } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import type * as net from "node:net"
import * as RequestContext from "./RequestContext.js"

/** Largest request head (request line and headers together). */
export const MAX_HEADER_BYTES = 16 * 1024

const limits = {
  maxHeaderSize: MAX_HEADER_BYTES,
  // Slow clients may not hold a connection open: headers within 10 s, the whole request within 30 s.
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  // Node checks those two only this often (30 s by default, which let a slow client hold on
  // for 40 s and 60 s): check every second.
  connectionsCheckingInterval: 1_000,
  keepAliveTimeout: 5_000
} satisfies http.ServerOptions

/** What a refusal of the HTTP parser is logged with. */
export interface Refusal {
  readonly request_id: string
  readonly status: number
  readonly reason: string
}

const refuse = (
  socket: net.Socket,
  onRefused: (refusal: Refusal) => void,
  status: number,
  reason: string,
  tag: string,
  code: string,
  message: string
) => {
  const id = RequestContext.newId()
  onRefused({ request_id: id, status, reason: tag })
  const body = JSON.stringify({ success: false, message, _tag: tag, code, request_id: id })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `${ApiError.REQUEST_ID_HEADER}: ${id}\r\nconnection: close\r\n\r\n${body}`
  )
}

/**
 * A Node server (HTTPS when given a certificate and key) with the limits above. A request
 * Node refuses before the application sees it (a head too large or too slow, garbage) gets
 * the JSON envelope, an `X-Request-Id`, and its line in the log through `onRefused`.
 */
export const make = (
  tls: Option.Option<{ readonly cert: string; readonly key: string }>,
  onRefused: (refusal: Refusal) => void = () => {}
): http.Server => {
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
  // Sockets with a request in the application, which answers (or, gone, logs) it itself.
  const busy = new WeakSet<net.Socket>()
  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    busy.add(request.socket)
    response.once("close", () => busy.delete(request.socket))
  })
  // Requests the parser refuses (oversized head, garbage) still get the JSON envelope.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: net.Socket) => {
    if (!socket.writable || error.code === "ECONNRESET" || busy.has(socket)) return socket.destroy()
    if (error.code === "HPE_HEADER_OVERFLOW") {
      return refuse(
        socket,
        onRefused,
        431,
        "Request Header Fields Too Large",
        "HeadersTooLarge",
        "headers_too_large",
        "Request headers too large"
      )
    }
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      return refuse(
        socket,
        onRefused,
        408,
        "Request Timeout",
        "RequestTimeout",
        "request_timeout",
        "Request took too long to arrive"
      )
    }
    refuse(socket, onRefused, 400, "Bad Request", "BadRequest", "bad_request", "Malformed HTTP request")
  })
  return server
}
