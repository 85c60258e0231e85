/**
 * The client address that per-address rate limits count against. Behind a reverse proxy every
 * connection comes from the proxy, so the proxy's addresses can be trusted to report the
 * client in `X-Forwarded-For`; from anyone else that header is ignored, since a client could
 * otherwise name a new address on every request.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"

/** Which peers may report the client address: a set of addresses, or every peer (`*`). */
export type TrustedProxies = ReadonlySet<string> | "any"

/** Parses `BUNDLES_TRUSTED_PROXIES`: a comma-separated list of addresses, or `*`. */
export const parseTrusted = (text: string): TrustedProxies => {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  return items.includes("*") ? "any" : new Set(items.map(normalize))
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
const normalize = (address: string) => address.startsWith("::ffff:") ? address.slice(7) : address

const isTrusted = (trusted: TrustedProxies, address: string) => trusted === "any" || trusted.has(address)

/** The request's client: its peer, or the nearest untrusted hop its trusted proxies reported. */
export const of = (request: HttpServerRequest.HttpServerRequest, trusted: TrustedProxies): string => {
  const peer = normalize(Option.getOrElse(request.remoteAddress, () => "unknown"))
  if (!isTrusted(trusted, peer)) return peer
  const hops = (request.headers["x-forwarded-for"] ?? "").split(",").map((s) => normalize(s.trim()))
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (hop.length > 0 && hop.length <= 64 && !isTrusted(trusted, hop)) return hop
  }
  return peer
}
