/**
 * The client address that per-address limits count against. Behind a reverse proxy every
 * connection comes from the proxy, so the proxy's addresses can be trusted to report the
 * client in `X-Forwarded-For`; from anyone else that header is ignored, since a client could
 * otherwise name a new address on every request.
 *
 * An IPv6 client counts as its /64 network: one host (one home or phone connection) is
 * usually given a whole /64, so counting its addresses apart would give it 2^64 quotas.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"
import * as net from "node:net"

/** Which peers may report the client address: a set of addresses, or every peer (`*`). */
export type TrustedProxies = ReadonlySet<string> | "any"

/** Parses `BUNDLES_TRUSTED_PROXIES`: a comma-separated list of addresses, or `*`. */
export const parseTrusted = (text: string): TrustedProxies => {
  const items = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  return items.includes("*") ? "any" : new Set(items.map(normalize))
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
const normalize = (address: string) => address.startsWith("::ffff:") ? address.slice(7) : address

/** True when `peer` (as the socket reports it) is a trusted proxy. */
export const isTrusted = (trusted: TrustedProxies, peer: string) => trusted === "any" || trusted.has(normalize(peer))

/** The eight groups of an IPv6 address (`::` expanded), or `undefined` when it is not one. */
const groups = (address: string): ReadonlyArray<number> | undefined => {
  const plain = address.split("%")[0]!
  if (net.isIPv6(plain) === false) return undefined
  const [head, tail] = plain.includes("::") ? plain.split("::") as [string, string] : [plain, undefined]
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").flatMap((g) => {
      // An embedded IPv4 address (`::1.2.3.4`) is two groups.
      if (!g.includes(".")) return [parseInt(g, 16)]
      const [a, b, c, d] = g.split(".").map(Number) as [number, number, number, number]
      return [(a << 8) | b, (c << 8) | d]
    })
  const first = parse(head)
  if (tail === undefined) return first
  const last = parse(tail)
  return [...first, ...Array.from({ length: 8 - first.length - last.length }, () => 0), ...last]
}

/**
 * An address as per-address limits count it: IPv4 as it is (an IPv4-mapped one as its IPv4),
 * loopback `::1` as it is, any other IPv6 address as its /64 (`2001:db8:1:2::/64`).
 */
export const counted = (address: string): string => {
  const plain = normalize(address)
  if (plain === "::1") return plain
  const parts = groups(plain)
  return parts === undefined ? plain : `${parts.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`
}

/** The request's client: its peer, or the nearest untrusted hop its trusted proxies reported, as `counted`. */
export const of = (request: HttpServerRequest.HttpServerRequest, trusted: TrustedProxies): string => {
  const peer = normalize(Option.getOrElse(request.remoteAddress, () => "unknown"))
  if (!isTrusted(trusted, peer)) return counted(peer)
  const hops = (request.headers["x-forwarded-for"] ?? "").split(",").map((s) => normalize(s.trim()))
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (hop.length > 0 && hop.length <= 64 && !isTrusted(trusted, hop)) return counted(hop)
  }
  return counted(peer)
}
