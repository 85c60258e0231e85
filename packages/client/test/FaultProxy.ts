/**
 * A proxy in front of the real test server that misbehaves on cue, for the retry rules:
 * it can answer for the server (a 429, a 503), cut the connection before or after the server
 * did the work, or hold a request back. Everything not scripted passes through untouched,
 * and every request it saw is recorded.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"

/** What the proxy does with one request. */
export type Action =
  | { readonly kind: "pass" }
  /** Answers itself; the server never sees the request. */
  | {
    readonly kind: "respond"
    readonly status: number
    readonly headers?: Record<string, string>
    readonly body?: string
  }
  /** Forwards the request, waits for the server's whole answer, then cuts the connection instead of replying. */
  | { readonly kind: "drop-after-forward" }
  /** Cuts the connection without forwarding. */
  | { readonly kind: "drop" }
  /** Holds the request back for `ms`, then forwards it (even if the client has given up). */
  | { readonly kind: "delay"; readonly ms: number }

/** A request the proxy received. */
export interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/** A running proxy. */
export interface FaultProxy {
  /** The proxy's origin. */
  readonly origin: string
  /** Its base URL for the client: origin + `/api/v1`. */
  readonly baseUrl: string
  /** Every request received, oldest first. */
  readonly seen: Array<Seen>
  /** Requests received for `method` and a path starting with `path`. */
  readonly count: (method: string, path: string) => number
  /** Scripts the next requests matching `method` and a path starting with `path`, one action each. */
  readonly script: (method: string, path: string, ...actions: ReadonlyArray<Action>) => void
  /** Forgets the script and what was seen. */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
  "host"
])

/** Starts a proxy to `target` (an origin) on a free port of 127.0.0.1. */
export const startProxy = async (target: string): Promise<FaultProxy> => {
  const seen: Array<Seen> = []
  let rules: Array<{ method: string; path: string; actions: Array<Action> }> = []

  const forward = async (request: http.IncomingMessage, body: Buffer) => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      if (!HOP_BY_HOP.has(name) && typeof value === "string") headers[name] = value
    }
    const response = await fetch(`${target}${request.url}`, {
      method: request.method!,
      headers,
      ...(body.length > 0 ? { body: new Uint8Array(body) } : {})
    })
    const out: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name)) out[name] = value
    })
    return { status: response.status, headers: out, body: Buffer.from(await response.arrayBuffer()) }
  }

  const server = http.createServer(async (request, response) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const path = request.url ?? "/"
    seen.push({ method: request.method!, path, headers: request.headers, body: body.toString("utf8"), at: Date.now() })
    const rule = rules.find((r) => r.method === request.method && path.startsWith(r.path) && r.actions.length > 0)
    const action: Action = rule?.actions.shift() ?? { kind: "pass" }
    try {
      switch (action.kind) {
        case "respond":
          response.writeHead(action.status, action.headers ?? {})
          response.end(action.body ?? "")
          return
        case "drop":
          request.socket.destroy()
          return
        case "drop-after-forward":
          await forward(request, body)
          request.socket.destroy()
          return
        case "delay":
          await sleep(action.ms)
          break
        case "pass":
          break
      }
      const answer = await forward(request, body)
      if (!response.writableEnded && !request.socket.destroyed) {
        response.writeHead(answer.status, answer.headers)
        response.end(answer.body)
      }
    } catch (error) {
      if (!response.headersSent && !request.socket.destroyed) {
        response.writeHead(599, { "content-type": "text/plain" })
        response.end(`proxy failure: ${String(error)}`)
      }
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    baseUrl: `${origin}/api/v1`,
    seen,
    count: (method, path) => seen.filter((s) => s.method === method && s.path.startsWith(path)).length,
    script: (method, path, ...actions) => {
      rules.push({ method, path, actions: [...actions] })
    },
    reset: () => {
      rules = []
      seen.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
