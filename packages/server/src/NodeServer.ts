/**
 * The Node HTTP(S) server under the application, with the limits a public server needs:
 * header size, how long a client may take to send its headers and its request, how many
 * connections it may hold (in all, and per client address), and a JSON envelope even for
 * requests Node refuses before any handler sees them.
 *
 * A connection refused here (a head too large or too slow, garbage, a framing Node cannot
 * read, one past a cap) gets its answer and is then destroyed, not merely half-closed: a
 * client that never reads nor closes would otherwise keep its descriptor for as long as it
 * liked, and a few hundred of them took every descriptor the process had.
 */
import { ApiError } from "@databundle/contract"
import { Option } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import type * as net from "node:net"
import * as ClientAddress from "./ClientAddress.js"
import * as RequestContext from "./RequestContext.js"

/** Largest request head (request line and headers together). */
export const MAX_HEADER_BYTES = 16 * 1024

/** How long a refused connection may take to receive its answer before it is destroyed anyway. */
const LINGER_MS = 2_000

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

/** How many connections the server holds at once: in all, and from one client address. */
export interface ConnectionLimits {
  readonly total: number
  readonly perAddress: number
  /** Peers the per-address cap does not apply to (trusted proxies carry many clients). */
  readonly trusted: ClientAddress.TrustedProxies
}

/** What a refusal of the HTTP parser is logged with. */
export interface Refusal {
  readonly request_id: string
  readonly status: number
  readonly reason: string
}

/** The answer of a refusal, in the API's envelope, closing the connection. */
const answer = (id: string, status: number, reason: string, tag: string, code: string, message: string) => {
  const body = JSON.stringify({ success: false, message, _tag: tag, code, request_id: id })
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${
    Buffer.byteLength(body)
  }\r\n${ApiError.REQUEST_ID_HEADER}: ${id}\r\nconnection: close\r\n\r\n${body}`
}

/** Writes `text` and destroys the socket once it is written, or after `LINGER_MS` if the client does not read. */
const endAndDestroy = (socket: net.Socket, text: string) => {
  const linger = setTimeout(() => socket.destroy(), LINGER_MS)
  linger.unref()
  socket.once("close", () => clearTimeout(linger))
  socket.end(text, () => socket.destroy())
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
  endAndDestroy(socket, answer(id, status, reason, tag, code, message))
}

/**
 * True when a request's `Transfer-Encoding` is one Node cannot frame: anything but `chunked`.
 * Node hands such a request to the application and then fails on its body, destroying the
 * connection without an answer; it is refused here first.
 */
const unframeable = (request: http.IncomingMessage) => {
  const coding = request.headers["transfer-encoding"]
  return coding !== undefined && coding.trim().toLowerCase() !== "chunked"
}

/** What became of a certificate reload (SIGHUP, or its file changed): for the log. */
export interface CertificateEvent {
  readonly message: "certificate reloaded" | "certificate reload failed"
  readonly trigger: "SIGHUP" | "file changed"
  readonly error?: string
}

/** HSTS on every HTTPS answer: a year, subdomains not included (they may be served otherwise). */
export const HSTS = "max-age=31536000"

/**
 * The HTTPS server: HSTS on every answer (set before the application writes its head, which
 * keeps it), and the certificate and key read again on SIGHUP or when the certificate file
 * changes (renewed by certbot, say), for new connections; a bad pair keeps the old one.
 */
const httpsServer = (
  { cert, key }: { readonly cert: string; readonly key: string },
  onCertificate: (event: CertificateEvent) => void
) => {
  const server = https.createServer({ ...limits, cert: fs.readFileSync(cert), key: fs.readFileSync(key) })
  server.prependListener("request", (_request, response) => response.setHeader("strict-transport-security", HSTS))
  const reload = (trigger: CertificateEvent["trigger"]) => {
    try {
      server.setSecureContext({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) })
      onCertificate({ message: "certificate reloaded", trigger })
    } catch (error) {
      onCertificate({ message: "certificate reload failed", trigger, error: String(error) })
    }
  }
  const onSignal = () => reload("SIGHUP")
  const onChange = (now: fs.Stats, before: fs.Stats) => {
    if (now.mtimeMs !== before.mtimeMs) reload("file changed")
  }
  process.on("SIGHUP", onSignal)
  fs.watchFile(cert, { interval: 5_000, persistent: false }, onChange)
  server.once("close", () => {
    process.off("SIGHUP", onSignal)
    fs.unwatchFile(cert, onChange)
  })
  return server as unknown as http.Server
}

/**
 * A Node server (HTTPS when given a certificate and key) with the limits above. A request
 * Node refuses before the application sees it (a head too large or too slow, garbage, a
 * `Transfer-Encoding` other than chunked, a connection past a cap) gets the JSON envelope,
 * an `X-Request-Id`, and its line in the log through `onRefused`.
 */
export const make = (
  tls: Option.Option<{ readonly cert: string; readonly key: string }>,
  onRefused: (refusal: Refusal) => void = () => {},
  caps: ConnectionLimits = { total: Number.MAX_SAFE_INTEGER, perAddress: Number.MAX_SAFE_INTEGER, trusted: new Set() },
  onCertificate: (event: CertificateEvent) => void = () => {}
): http.Server => {
  const server = Option.match(tls, {
    onNone: () => http.createServer(limits),
    onSome: (files) => httpsServer(files, onCertificate)
  })
  server.keepAliveTimeout = limits.keepAliveTimeout

  // Connections held, in all and per client address (an IPv6 /64 counts as one).
  let open = 0
  const perAddress = new Map<string, number>()
  server.on("connection", (socket: net.Socket) => {
    const peer = socket.remoteAddress ?? "unknown"
    const address = ClientAddress.counted(peer)
    const held = perAddress.get(address) ?? 0
    if (open >= caps.total || (held >= caps.perAddress && !ClientAddress.isTrusted(caps.trusted, peer))) {
      socket.on("error", () => {})
      const all = open >= caps.total
      // (Under TLS nothing can be said before the handshake: the connection is closed.)
      if (Option.isSome(tls)) {
        onRefused({ request_id: RequestContext.newId(), status: 503, reason: "ServiceUnavailable" })
        return socket.destroy()
      }
      return refuse(
        socket,
        onRefused,
        503,
        "Service Unavailable",
        "ServiceUnavailable",
        "too_many_connections",
        all
          ? "The server holds as many connections as it may; retry in a moment"
          : `Too many connections from your address (at most ${caps.perAddress}); close some and retry`
      )
    }
    open++
    perAddress.set(address, held + 1)
    socket.once("close", () => {
      open--
      const left = (perAddress.get(address) ?? 1) - 1
      if (left === 0) perAddress.delete(address)
      else perAddress.set(address, left)
    })
  })

  // A request Node cannot frame is answered before the application sees it (see `unframeable`).
  const refusing = new WeakSet<net.Socket>()
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
  server.emit = ((event: string | symbol, ...args: Array<unknown>) => {
    if (event === "request" && unframeable(args[0] as http.IncomingMessage)) {
      const request = args[0] as http.IncomingMessage
      refusing.add(request.socket)
      const coding = String(request.headers["transfer-encoding"]).slice(0, 40)
      refuse(
        request.socket,
        onRefused,
        501,
        "Not Implemented",
        "NotImplemented",
        "not_implemented",
        `Transfer-Encoding ${JSON.stringify(coding)} is not supported: send the body with Content-Length, or chunked`
      )
      return true
    }
    return emit(event, ...args)
  }) as typeof server.emit

  // Sockets with a request in the application, which answers (or, gone, logs) it itself.
  const busy = new WeakSet<net.Socket>()
  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
    busy.add(request.socket)
    response.once("close", () => busy.delete(request.socket))
  })
  // Requests the parser refuses (oversized head, garbage) still get the JSON envelope.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: net.Socket) => {
    // (A request refused for its framing already has its answer on the way.)
    if (refusing.has(socket)) return
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
