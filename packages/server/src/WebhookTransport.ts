/**
 * The HttpClient webhook deliveries go out on: Node's http/https, which never follows a
 * redirect (a 3xx is an answer like any other, and core counts it as a failed attempt), and
 * which refuses to connect to a private, loopback, link-local, unique-local, multicast or
 * unspecified address unless the operator allows it (`BUNDLES_WEBHOOK_ALLOW_PRIVATE=1`).
 *
 * The check is made on the address actually connected to: a DNS lookup of our own on the
 * agents refuses a name that resolves to such an address, so a receiver's DNS record cannot
 * point deliveries at the server's own network. An address written in the URL is checked
 * before connecting, since Node looks nothing up for it.
 */
import { HttpClient, HttpClientError } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as dns from "node:dns"
import * as net from "node:net"
import * as Metrics from "./Metrics.js"
import * as ServerConfig from "./ServerConfig.js"

const v4 = (address: string): Array<number> => address.split(".").map(Number)

/** Why an IPv4 address is not a public destination, or `undefined` when it is one. */
const privateV4 = (address: string): string | undefined => {
  const [a = 0, b = 0] = v4(address)
  if (a === 0) return "an unspecified (0.0.0.0/8) address"
  if (a === 127) return "a loopback address"
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "a private address"
  if (a === 100 && b >= 64 && b <= 127) return "a shared (carrier-grade NAT) address"
  if (a === 169 && b === 254) return "a link-local address"
  if (a === 192 && b === 0 && v4(address)[2] === 0) return "an IETF protocol address"
  if (a === 198 && (b === 18 || b === 19)) return "a benchmarking address"
  if (a >= 224 && a <= 239) return "a multicast address"
  if (a >= 240) return "a reserved or broadcast address"
  return undefined
}

/** The 8 groups of an IPv6 address, with an embedded IPv4 tail turned into two groups. */
const groups6 = (address: string): Array<number> => {
  let text = address.toLowerCase().split("%")[0]!
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (tail !== null) {
    const [a = 0, b = 0, c = 0, d = 0] = v4(tail[1]!)
    text = `${text.slice(0, -tail[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = "", rest] = text.split("::")
  const left = head === "" ? [] : head.split(":")
  const right = rest === undefined || rest === "" ? [] : rest.split(":")
  const fill = rest === undefined ? [] : Array(8 - left.length - right.length).fill("0")
  return [...left, ...fill, ...right].map((group) => parseInt(group, 16))
}

/** Why an IPv6 address is not a public destination, or `undefined` when it is one. */
const privateV6 = (address: string): string | undefined => {
  const g = groups6(address)
  if (g.length !== 8 || g.some((n) => Number.isNaN(n))) return "an unreadable address"
  const [g0 = 0, g1 = 0, , , , g5 = 0, g6 = 0, g7 = 0] = g
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0)
  const embedded = `${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses are their IPv4 address.
  if (zeros(5) && g5 === 0xffff) return privateV4(embedded)
  if (zeros(6)) {
    return g6 === 0 && g7 === 0
      ? "an unspecified address"
      : g6 === 0 && g7 === 1
      ? "a loopback address"
      : privateV4(embedded)
  }
  // NAT64 (64:ff9b::/96) reaches the IPv4 address it embeds.
  if (g0 === 0x64 && g1 === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return privateV4(embedded)
  if ((g0 & 0xfe00) === 0xfc00) return "a unique-local address"
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local address"
  if ((g0 & 0xffc0) === 0xfec0) return "a site-local address"
  if ((g0 & 0xff00) === 0xff00) return "a multicast address"
  if (g0 === 0x2001 && g1 === 0xdb8) return "a documentation address"
  return undefined
}

/**
 * Why `address` (an IP address) is not a public destination, or `undefined` when it is one.
 * Anything that is not an IP address is refused too.
 */
export const refusal = (address: string): string | undefined => {
  switch (net.isIP(address.replace(/^\[|\]$/g, ""))) {
    case 4:
      return privateV4(address)
    case 6:
      return privateV6(address.replace(/^\[|\]$/g, ""))
    default:
      return "not an IP address"
  }
}

/** A destination refused by the policy; its message is what `last_error` records. */
export class RefusedDestination extends Error {
  override readonly name = "RefusedDestination"
  readonly code = "EREFUSEDDESTINATION"
}

const refusedMessage = (host: string, address: string, why: string) =>
  `refused: ${host === address ? address : `${host} resolves to ${address}`}, ${why}; ` +
  "webhooks go to public addresses only (BUNDLES_WEBHOOK_ALLOW_PRIVATE=1 allows private ones)"

/**
 * A `lookup` for http/https agents that resolves as Node does and refuses the connection
 * when any resolved address is not public, so a name with one public and one private
 * record cannot be used to reach the private one.
 */
export const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error !== null) return (callback as any)(error)
    const list = addresses as unknown as Array<dns.LookupAddress>
    for (const { address } of list) {
      const why = refusal(address)
      if (why !== undefined) return (callback as any)(new RefusedDestination(refusedMessage(hostname, address, why)))
    }
    if ((options as dns.LookupOptions).all === true) return (callback as any)(null, list)
    const first = list[0]
    if (first === undefined) {
      return (callback as any)(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }))
    }
    return (callback as any)(null, first.address, first.family)
  })
}

/** The refusal in a request error's causes, if there is one. */
const refusedCause = (error: unknown): RefusedDestination | undefined => {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    if (cause instanceof RefusedDestination) return cause
    cause = (cause as { cause?: unknown }).cause
  }
  return undefined
}

/** The webhook transport for the allow setting: refusing private destinations, or not. */
export const make = (allowPrivate: boolean): Layer.Layer<HttpClient.HttpClient> => {
  if (allowPrivate) return NodeHttpClient.layerWithoutAgent.pipe(Layer.provide(NodeHttpClient.makeAgentLayer()))
  const guarded = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      client.pipe(
        HttpClient.transform((response, request) => {
          const host = new URL(request.url).hostname.replace(/^\[|\]$/g, "")
          const why = net.isIP(host) === 0 ? undefined : refusal(host)
          const refused = (message: string) =>
            new HttpClientError.RequestError({ request, reason: "Transport", description: message })
          if (why !== undefined) return Effect.fail(refused(refusedMessage(host, host, why)))
          return Effect.catchIf(
            response,
            (error) => error._tag === "RequestError" && refusedCause(error.cause) !== undefined,
            (error) => Effect.fail(refused(refusedCause((error as HttpClientError.RequestError).cause)!.message))
          )
        })
      ))
  )
  return guarded.pipe(
    Layer.provide(NodeHttpClient.layerWithoutAgent),
    Layer.provide(NodeHttpClient.makeAgentLayer({ lookup: guardedLookup }))
  )
}

/** The webhook transport as configured (`BUNDLES_WEBHOOK_ALLOW_PRIVATE`). */
export const layer: Layer.Layer<HttpClient.HttpClient> = Layer.unwrapEffect(
  Effect.map(Effect.orDie(ServerConfig.webhookAllowPrivate), make)
)

/** The HttpClient in context with each attempt timed into the metrics (`bundles_webhook_attempt_duration_seconds`). */
export const timed: Layer.Layer<HttpClient.HttpClient, never, HttpClient.HttpClient | Metrics.Metrics> = Layer.effect(
  HttpClient.HttpClient,
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const metrics = yield* Metrics.Metrics
    return HttpClient.transformResponse(client, (response) =>
      Effect.suspend(() => {
        const started = performance.now()
        const seconds = () => (performance.now() - started) / 1000
        return response.pipe(
          Effect.tapBoth({
            onFailure: () => Effect.sync(() => metrics.webhookAttempt("error", seconds())),
            onSuccess: (answer) =>
              Effect.sync(() =>
                metrics.webhookAttempt(answer.status >= 200 && answer.status < 300 ? "success" : "failure", seconds())
              )
          })
        )
      }))
  })
)
