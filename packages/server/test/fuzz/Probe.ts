/**
 * Probes: generated requests, bad by construction, and how they are sent byte for byte.
 */
import fc from "fast-check"
import * as http from "node:http"

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" | "TRACE" | "PROPFIND"

/** Every method the fuzzing uses; HEAD is left out, as its answers have no body to check. */
export const METHODS: ReadonlyArray<Method> = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"]

export type Headers = Readonly<Record<string, string | ReadonlyArray<string>>>

/** A generated request, bad by construction. */
export interface Probe {
  /** What makes it bad. */
  readonly fault: string
  readonly method: Method
  /** The request-target exactly as sent (printable ASCII). */
  readonly target: string
  readonly headers: Headers
  readonly body: Buffer | undefined
  /** Sent with `Transfer-Encoding: chunked` rather than a Content-Length. */
  readonly chunked: boolean
  /** The statuses the fault allows; anything else fails. */
  readonly expect: ReadonlyArray<number>
  /** For a 405: the methods the path serves, which `Allow` must list. */
  readonly allow: ReadonlyArray<string> | undefined
  /** A 400 here is the insufficient-balance error, with `balance` and `required`. */
  readonly insufficient: boolean
}

export const clip = (text: string, max = 200) =>
  text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`

export const describeProbe = (p: Probe) => {
  const headers = Object.fromEntries(
    Object.entries(p.headers).map(([k, v]) => [k, typeof v === "string" ? clip(v, 80) : v.map((x) => clip(x, 80))])
  )
  const body = p.body === undefined
    ? "no body"
    : `body ${JSON.stringify(clip(p.body.toString("utf8"), 240))} (${p.body.length} bytes${
      p.chunked ? ", chunked" : ""
    })`
  return `[${p.fault}] ${p.method} ${clip(p.target, 240)} headers ${JSON.stringify(headers)} ${body} → expected ${
    p.expect.join("|")
  }`
}

/** A probe that fast-check prints in one readable line (bodies and long values clipped). */
export const probe = (
  fields: Omit<Probe, "allow" | "insufficient" | "chunked" | "body"> & Partial<Probe>
): Probe => {
  const p: Probe = { allow: undefined, insufficient: false, chunked: false, body: undefined, ...fields }
  return Object.assign(p, { [fc.toStringMethod]: () => describeProbe(p) })
}

export interface Observed {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
}

/** Sends a probe on a fresh connection, byte for byte; fails only on a transport error. */
export const send = (port: number, p: Probe) => sendOn(port, p, false)

/**
 * Sends a probe on a connection kept alive, then `GET /healthz` after it on the same agent:
 * the probe's answer, and whether the second request went on the same connection (the
 * server kept it) or on a new one (the server closed it).
 */
export const sendKeptAlive = async (port: number, p: Probe) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const first = await sendOn(port, p, agent)
    const next = await sendOn(
      port,
      probe({ fault: "none", method: "GET", target: "/healthz", headers: {}, expect: [200] }),
      agent
    )
    return { first, next: next.status, kept: next.reused }
  } finally {
    agent.destroy()
  }
}

const sendOn = (port: number, p: Probe, agent: http.Agent | false) =>
  new Promise<Observed & { readonly reused: boolean }>((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {}
    for (const [name, value] of Object.entries(p.headers)) {
      headers[name] = typeof value === "string"
        ? value
        : [...value]
    }
    if (p.body !== undefined && p.chunked) headers["transfer-encoding"] = "chunked"
    const request = http.request({ host: "127.0.0.1", port, method: p.method, path: p.target, headers, agent })
    request.setTimeout(20_000, () => request.destroy(new Error("no response within 20 s")))
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8"),
          reused: request.reusedSocket
        }))
      response.on("error", reject)
    })
    request.on("error", reject)
    if (p.body === undefined) {
      request.end()
    } else if (p.chunked) {
      for (let i = 0; i < p.body.length; i += 16_384) request.write(p.body.subarray(i, i + 16_384))
      request.end()
    } else {
      request.end(p.body)
    }
  })
