/**
 * Requests to an endpoint, and the harmless noise headers added to any probe.
 */
import fc from "fast-check"
import type { BrokenBody } from "./Bodies.js"
import type { Credentials } from "./Credentials.js"
import { latin1 } from "./Credentials.js"
import { type Endpoint, fill, type Params } from "./Endpoints.js"
import { type Method, type Probe, probe } from "./Probe.js"
import { junk } from "./Values.js"

/** Headers a client may send that change nothing about the answer (406 aside, for an Accept without JSON). */
export const noise = fc.record({
  accept: fc.constantFrom<string | undefined>(
    "application/json",
    "application/json",
    undefined,
    "*/*",
    "application/*",
    "application/json; charset=utf-8",
    "text/html",
    "application/xml",
    ""
  ),
  extra: fc.array(
    fc.oneof(
      fc.tuple(fc.constant("x-forwarded-for"), fc.oneof(fc.constantFrom("unknown", ", , ,", "::1", "999.1.1.1"), junk)),
      fc.tuple(fc.constant("x-request-id"), junk),
      fc.tuple(fc.constant("user-agent"), fc.string({ unit: latin1, maxLength: 200 })),
      fc.tuple(
        fc.constant("host"),
        fc.constantFrom("[::1", "evil.example", "localhost:0", "a".repeat(200), "%zz", "é")
      ),
      fc.tuple(fc.constant("cookie"), junk),
      fc.tuple(fc.stringMatching(/^x-fuzz-[a-z0-9-]{1,12}$/), fc.string({ unit: latin1, maxLength: 200 }))
    ),
    { maxLength: 3 }
  )
})

/** Adds noise headers to a probe: they never replace its credentials or body headers. */
export const withNoise = (probes: fc.Arbitrary<Probe>) =>
  fc.tuple(probes, noise).map(([p, n]) => {
    const headers: Record<string, string | ReadonlyArray<string>> = {}
    for (const [name, value] of n.extra) {
      // Node refuses control characters in header values.
      if (/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) headers[name] = value
    }
    if (n.accept !== undefined) headers.accept = n.accept
    const acceptsJson = n.accept === undefined || n.accept === "" || /json|\*\/\*|application\/\*/.test(n.accept)
    return probe({
      ...p,
      headers: { ...headers, ...p.headers },
      expect: acceptsJson ? p.expect : [...p.expect, 406]
    })
  })

export const JSON_TYPE = { "content-type": "application/json" }

/** A request to an endpoint: its path (with query), credentials and an optional body. */
export const request = (
  endpoint: Endpoint,
  fields: {
    readonly fault: string
    readonly method?: Method
    readonly params: Params
    readonly credentials: Credentials
    readonly query?: string
    readonly body?: BrokenBody | undefined
    readonly expect: ReadonlyArray<number>
    readonly allow?: ReadonlyArray<string>
    readonly insufficient?: boolean
  }
): Probe => {
  const query = [fields.query, fields.credentials.query].filter((q) => q !== undefined && q.length > 0).join("&")
  return probe({
    fault: [fields.fault, fields.credentials.label].filter((f) => f.length > 0).join("; "),
    method: fields.method ?? endpoint.method,
    target: `${fill(endpoint, fields.params)}${query.length > 0 ? `?${query}` : ""}`,
    headers: { ...(fields.body === undefined ? {} : JSON_TYPE), ...fields.credentials.headers },
    body: fields.body === undefined ? undefined : Buffer.from(fields.body.text, "utf8"),
    expect: fields.expect,
    allow: fields.allow,
    insufficient: fields.insufficient ?? false
  })
}
