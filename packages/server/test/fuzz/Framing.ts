/**
 * Bodies the gateway refuses before anything else: wrong content type, malformed, too deep, too large.
 */
import fc from "fast-check"
import { badCredentialsOf, validCredentials } from "./Credentials.js"
import { endpointsOf } from "./Endpoints.js"
import { probe } from "./Probe.js"
import { request } from "./Requests.js"
import type { World } from "./World.js"

/** Bodies the gateway refuses before anything else: wrong content type, malformed, too deep, too large. */
export const badFraming = (w: World) => {
  const endpoints = endpointsOf(w).filter((e) => e.body !== undefined)
  return fc.constantFrom(...endpoints).chain((endpoint) => {
    const limit = endpoint.declared.policy.bodyLimit
    const creds = fc.oneof(
      fc.constant(validCredentials(w, endpoint.api)),
      badCredentialsOf(w, endpoint.api)
    )
    const base = endpoint.body!
    const contentType = fc.tuple(
      base,
      fc.constantFrom<string | null>(
        null,
        "text/plain",
        "TEXT/PLAIN",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "text/json",
        "application/jsonp",
        "application/json-patch+json",
        "application/vnd.api+json",
        "json",
        "application",
        "*/*",
        "application/ json"
      )
    ).map(([body, type]) => ({
      fault: `Content-Type ${type ?? "missing"}`,
      body: Buffer.from(body.text),
      type,
      chunked: false,
      expect: [400]
    }))
    const malformed = fc.tuple(
      base,
      fc.oneof(
        fc.nat().map((n) => (t: string) => t.slice(0, n % Math.max(1, t.length - 1))),
        fc.constantFrom(
          (t: string) => `${t}}`,
          (t: string) => `${t},`,
          (t: string) => t.replace(/"/g, "'"),
          (t: string) => `\uFEFF${t}`,
          (t: string) => `${t} // comment`,
          (t: string) => t.replace(/^\{"/, "{"),
          (t: string) => `${t.slice(0, -1)},}`,
          () => "NaN",
          () => "{\"bundle_id\": NaN}",
          () => "{\"amount\": Infinity}",
          () => "undefined",
          () => "\"unterminated",
          () => "{\"a\":1}{\"b\":2}"
        )
      )
    ).map(([body, corrupt]) => corrupt(body.text)).filter((text) => {
      // An empty body is no body (a 422 for a missing object), tried with the bad bodies.
      if (text.trim().length === 0) return false
      try {
        JSON.parse(Buffer.from(text, "utf8").toString("utf8"))
        return false
      } catch {
        return true
      }
    }).map((text) => ({
      fault: "malformed JSON",
      body: Buffer.from(text),
      type: "application/json" as string | null,
      chunked: false,
      expect: [400]
    }))
    const invalidUtf8 = base.map((body) => ({
      fault: "bytes that are not UTF-8 outside strings",
      body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(body.text)]),
      type: "application/json" as string | null,
      chunked: false,
      expect: [400]
    }))
    const deep = fc.tuple(
      fc.oneof(fc.integer({ min: 33, max: 64 }), fc.integer({ min: 1000, max: Math.floor(limit / 6) - 10 })),
      fc.constantFrom("array", "object"),
      fc.boolean()
    ).map(([depth, kind, inField]) => {
      const open = kind === "array" ? "[" : "{\"a\":"
      const close = kind === "array" ? "]" : "}"
      const value = `${open.repeat(depth - (inField ? 1 : 0))}1${close.repeat(depth - (inField ? 1 : 0))}`
      return {
        fault: `JSON nested ${depth} deep`,
        body: Buffer.from(inField ? `{"bundle_id":${value}}` : value),
        type: "application/json" as string | null,
        chunked: false,
        expect: [400]
      }
    })
    const oversized = fc.tuple(base, fc.integer({ min: 1, max: limit / 4 }), fc.boolean()).map((
      [body, over, chunked]
    ) => ({
      fault: `a body ${over} bytes over ${limit / 1024} KiB`,
      body: Buffer.from(body.text.replace(/\}$|$/, `${" ".repeat(Math.max(0, limit + over - body.text.length))}$&`)),
      type: "application/json" as string | null,
      chunked,
      expect: [413]
    }))
    return fc.tuple(
      endpoint.good,
      creds,
      fc.oneof(contentType, malformed, invalidUtf8, deep, oversized)
    ).map(([params, creds, framing]) => {
      const p = request(endpoint, { fault: framing.fault, params, credentials: creds, expect: framing.expect })
      return probe({
        ...p,
        headers: { ...(framing.type === null ? {} : { "content-type": framing.type }), ...p.headers },
        body: framing.body,
        chunked: framing.chunked
      })
    })
  })
}
