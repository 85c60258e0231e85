/**
 * Requests drawn from the contract's own schemas (effect's `Arbitrary`): for every endpoint of
 * the four APIs, its query, headers and payload drawn from the encoded side of their schemas
 * (the wire's shapes and types: the right fields of the right kinds, whose values the
 * refinements then accept or refuse), as they are or with one field broken; its path parameters
 * naming things of the world or nothing; its credentials the API's own, or none.
 *
 * (The decoded side cannot be drawn: `Arbitrary` meets the contract's filters, such as a Ghana
 * phone number's, by drawing until one passes, which for some never ends.)
 */
import { HttpApi } from "@effect/platform"
import { Arbitrary, FastCheck, Option, Schema } from "effect"
import fc from "fast-check"
import { ServerApi } from "../../src/ServerApi.js"
import { credentials, validCredentials } from "./Credentials.js"
import { type Endpoint, endpointsOf } from "./Endpoints.js"
import type { Probe } from "./Probe.js"
import { request } from "./Requests.js"
import type { World } from "./World.js"

/** What the schemas of one endpoint give: encoded queries, header sets and JSON bodies. */
interface Drawn {
  readonly queries: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly headers: ReadonlyArray<Readonly<Record<string, string>>>
  readonly bodies: ReadonlyArray<unknown>
}

/** How many values are drawn from each schema. */
const DRAWS = 24

/**
 * Values of the encoded side of `schema`, sampled with effect's own fast-check (its `Arbitrary`
 * speaks that one). A schema `Arbitrary` cannot draw gives none.
 */
const draw = (schema: Schema.Schema.AnyNoContext, seed: number): ReadonlyArray<unknown> => {
  try {
    return FastCheck.sample(Arbitrary.make(Schema.encodedSchema(schema)), { numRuns: DRAWS, seed })
  } catch {
    return []
  }
}

/** The drawn values of every endpoint of the server's API, by `METHOD /template`. */
export const drawAll = (seed: number): ReadonlyMap<string, Drawn> => {
  const drawn = new Map<string, Drawn>()
  HttpApi.reflect(ServerApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const of = (schema: Option.Option<Schema.Schema<never, unknown>>) =>
        Option.isSome(schema) ? draw(schema.value as unknown as Schema.Schema.AnyNoContext, seed) : []
      drawn.set(`${endpoint.method} ${endpoint.path}`, {
        queries: of(endpoint.urlParamsSchema) as ReadonlyArray<Record<string, unknown>>,
        // Header values a client can send at all (no control characters).
        headers: (of(endpoint.headersSchema) as ReadonlyArray<Record<string, unknown>>).map((headers) =>
          Object.fromEntries(
            Object.entries(headers).filter((entry): entry is [string, string] =>
              typeof entry[1] === "string" && /^[\t\x20-\x7e]*$/.test(entry[1])
            )
          )
        ),
        bodies: of(endpoint.payloadSchema)
      })
    }
  })
  return drawn
}

/** A query string of an encoded query (arrays as repeated parameters). */
const queryOf = (query: Readonly<Record<string, unknown>>) => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one))
  }
  return params.toString()
}

/** Values of the wrong kind for any field. */
const WRONG = [null, "", "x", -1, 0.5, true, [], {}, "9".repeat(40), "2026-13-45"]

/** An encoded object with one field broken: dropped, or given a value of the wrong kind. */
const broken = (value: unknown): fc.Arbitrary<{ readonly value: unknown; readonly fault: string }> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return fc.constantFrom(...WRONG).map((wrong) => ({ value: wrong, fault: "a value of the wrong kind" }))
  }
  const names = Object.keys(value)
  if (names.length === 0) {
    return fc.constantFrom(...WRONG).map((wrong) => ({ value: { unexpected: wrong }, fault: "an unexpected field" }))
  }
  return fc.tuple(fc.constantFrom(...names), fc.option(fc.constantFrom(...WRONG), { nil: undefined })).map((
    [name, wrong]
  ) => {
    const copy: Record<string, unknown> = { ...value }
    if (wrong === undefined) delete copy[name]
    else copy[name] = wrong
    return { value: copy, fault: wrong === undefined ? `no ${name}` : `${name} ${JSON.stringify(wrong)}` }
  })
}

/** Drawn values, valid mostly, one in four broken; none when the schema gave nothing. */
const validOrBroken = (values: ReadonlyArray<unknown>) =>
  values.length === 0 ? undefined : fc.constantFrom(...values).chain((value) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant({ value, fault: "" }) },
      { weight: 1, arbitrary: broken(value) }
    )
  )

/** A request to `endpoint` from its schemas' values. */
const caseOf = (w: World, endpoint: Endpoint, drawn: Drawn): fc.Arbitrary<Probe> => {
  const query = validOrBroken(drawn.queries)
  const body = endpoint.declared.hasPayload ? validOrBroken(drawn.bodies) : undefined
  return fc.record({
    params: fc.oneof({ weight: 4, arbitrary: endpoint.good }, { weight: 1, arbitrary: endpoint.bad }),
    query: query ?? fc.constant(undefined),
    headers: drawn.headers.length === 0 ? fc.constant({}) : fc.constantFrom(...drawn.headers),
    body: body ?? fc.constant(undefined),
    signedIn: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) })
  }).map(({ body, headers, params, query, signedIn }) => {
    const given = signedIn ? validCredentials(w, endpoint.api) : credentials("no credentials", {})
    const faults = [params.fault, query?.fault ?? "", body?.fault ?? ""].filter((f) => f.length > 0)
    return request(endpoint, {
      fault: faults.length === 0 ? "drawn from the schemas" : faults.join("; "),
      params,
      credentials: credentials(given.label, { ...headers, ...given.headers }),
      ...(query === undefined ? {} : { query: queryOf(query.value as Record<string, unknown>) }),
      body: body === undefined ? undefined : { text: JSON.stringify(body.value), fault: body.fault },
      expect: []
    })
  })
}

/** Requests to every endpoint of `api`'s area, drawn from the contract's schemas. */
export const drawnRequests = (w: World, drawn: ReadonlyMap<string, Drawn>, api: Endpoint["api"]) =>
  fc.oneof(
    ...endpointsOf(w).filter((endpoint) => endpoint.api === api).map((endpoint) =>
      caseOf(w, endpoint, drawn.get(endpoint.declared.key)!)
    )
  )

/** The endpoints whose payload or query schema gave no value to send (their cases carry none). */
export const undrawable = (drawn: ReadonlyMap<string, Drawn>, w: World): ReadonlyArray<string> =>
  endpointsOf(w).flatMap((endpoint) => {
    const d = drawn.get(endpoint.declared.key)!
    const missing = [
      ...(endpoint.declared.hasPayload && d.bodies.length === 0 ? ["payload"] : []),
      ...(endpoint.declared.query.length > 0 && d.queries.length === 0 ? ["query"] : [])
    ]
    return missing.length === 0 ? [] : [`${endpoint.declared.key}: ${missing.join(", ")}`]
  })
