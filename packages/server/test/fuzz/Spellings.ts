/**
 * Spellings of every endpoint's canonical path (case, percent-encoded unreserved characters,
 * doubled slashes, a trailing slash, dot segments): each is answered as the canonical path is,
 * or is an unknown path (404); never does a spelling slip past the body limit or the rate limits.
 */
import type { HttpClient } from "@effect/platform"
import { assert } from "@effect/vitest"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import * as http from "node:http"
import { newAccount } from "../Harness.js"
import { header, isObject, problemsOf, replay } from "./Check.js"
import { validCredentials } from "./Credentials.js"
import { type Endpoint, endpointsOf, fill } from "./Endpoints.js"
import { spelling } from "./Paths.js"
import { clip, type Observed, type Probe, probe, send } from "./Probe.js"
import { request } from "./Requests.js"
import { changedTables, fingerprint, Fixture, type World } from "./World.js"

/** A request the canonical path answers without changing anything: good parameters, or a broken body. */
const canonical = (w: World, endpoint: Endpoint): fc.Arbitrary<Probe> =>
  fc.tuple(
    // A mutation without a body (a new key, a revocation) is sent to a path that names nothing.
    endpoint.method === "GET" || endpoint.body !== undefined ? endpoint.good : endpoint.bad,
    endpoint.body ?? fc.constant(undefined)
  ).map(([params, body]) => {
    const credentials = validCredentials(w, endpoint.api)
    // A dashboard mutation without a body or a path to break (sign-out, a new webhook secret) is
    // sent without its CSRF token: refused alike, whatever the spelling.
    const refused = (endpoint.api === "dashboard" || endpoint.api === "console") && endpoint.method !== "GET" &&
      endpoint.body === undefined &&
      endpoint.declared.params.length === 0
    return request(endpoint, {
      fault: refused ? "no CSRF token" : "",
      params,
      credentials: refused ? { label: "no CSRF token", headers: { cookie: credentials.headers.cookie! } } : credentials,
      body,
      expect: []
    })
  })

/** Status, `success`, `code` and the top-level fields: what must match between two answers. */
const envelopeOf = (r: Observed) => {
  let body: unknown
  try {
    body = JSON.parse(r.text)
  } catch {
    body = undefined
  }
  return JSON.stringify({
    status: r.status,
    success: isObject(body) ? body.success : undefined,
    code: isObject(body) ? body.code : undefined,
    fields: isObject(body) ? Object.keys(body).sort() : undefined
  })
}

const fail = (problems: ReadonlyArray<string>, r: Observed) => {
  if (problems.length > 0) throw new Error(`${problems.join("; ")}\n    observed: ${r.status} ${clip(r.text, 600)}`)
}

/** Every spelling of every endpoint's path is answered as the canonical path is (status and envelope), or 404. */
export const spellingsAnswerAlike = (numRuns: number) =>
  Effect.gen(function*() {
    const w = yield* Fixture
    const cases = fc.constantFrom(...endpointsOf(w)).chain((endpoint) =>
      canonical(w, endpoint).chain((p) =>
        spelling(p.target).map((s) => [p, probe({ ...p, fault: s.how, target: s.path })] as const)
      )
    )
    const property = fc.asyncProperty(cases, async ([canon, spelled]) => {
      const expected = await send(w.port, canon)
      const response = await send(w.port, spelled)
      const problems = problemsOf(w, probe({ ...spelled, expect: [expected.status, 404] }), response, false)
      if (response.status !== 404 && envelopeOf(response) !== envelopeOf(expected)) {
        problems.push(`answered ${envelopeOf(response)}, the canonical path ${envelopeOf(expected)}`)
      }
      const now = await Effect.runPromise(fingerprint(w.sql))
      const changed = changedTables(w.state.last, now)
      if (changed.length > 0) {
        problems.push(`it changed the state of ${changed.join(", ")}`)
        w.state.last = now
      }
      fail(problems, response)
    })
    yield* Effect.promise(() => fc.assert(property, { numRuns, ...replay }))
    assert.deepStrictEqual(yield* fingerprint(w.sql), w.baseline)
  })

/**
 * Sends `path` a body announced (or chunked) well past `limit`, but only `limit` plus 16 KiB of
 * it; resolves with the answer, or `"closed"` when the server hangs up first. A server that
 * waits for the rest of the body (buffering it) never answers: `"waited"` after 5 s.
 */
const sendOversized = (
  port: number,
  method: string,
  path: string,
  headers: http.OutgoingHttpHeaders,
  limit: number,
  chunked: boolean
) =>
  new Promise<Observed | "closed" | "waited">((resolve) => {
    const request = http.request({
      host: "127.0.0.1",
      port,
      method,
      path,
      agent: false,
      headers: {
        ...headers,
        "content-type": "application/json",
        ...(chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(limit * 4) })
      }
    })
    const timer = setTimeout(() => {
      request.destroy()
      resolve("waited")
    }, 5_000)
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        clearTimeout(timer)
        request.destroy()
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString() })
      })
      response.on("error", () => {})
    })
    request.on("error", () => {
      clearTimeout(timer)
      resolve("closed")
    })
    request.write(`{"note":"${" ".repeat(limit + 16 * 1024)}`)
  })

/** A body over the endpoint's limit sent to a spelling of its path: 404 or 413 before the body is all sent. */
export const spellingsKeepTheBodyLimit = (numRuns: number) =>
  Effect.gen(function*() {
    const w = yield* Fixture
    const endpoints = endpointsOf(w).filter((e) => e.body !== undefined)
    const cases = fc.tuple(fc.constantFrom(...endpoints), fc.boolean()).chain(([endpoint, chunked]) =>
      endpoint.good.chain((params) =>
        fc.oneof(
          { weight: 1, arbitrary: fc.constant({ how: "the canonical path", path: fill(endpoint, params) }) },
          { weight: 6, arbitrary: spelling(fill(endpoint, params)) }
        ).map((s) =>
          Object.assign({ endpoint, chunked, ...s }, {
            [fc.toStringMethod]: () => `${endpoint.method} ${s.path} (${s.how}${chunked ? ", chunked" : ""})`
          })
        )
      )
    )
    const property = fc.asyncProperty(cases, async ({ chunked, endpoint, how, path }) => {
      const creds = validCredentials(w, endpoint.api).headers as http.OutgoingHttpHeaders
      const limit = endpoint.declared.policy.bodyLimit
      const answer = await sendOversized(w.port, endpoint.method, path, creds, limit, chunked)
      if (answer === "closed") return
      if (answer === "waited") {
        throw new Error(
          `${endpoint.method} ${path} (${how}): no answer before the whole ${limit * 4}-byte body was sent`
        )
      }
      const problems = problemsOf(
        w,
        probe({ fault: how, method: endpoint.method, target: path, headers: creds as any, expect: [404, 413] }),
        answer,
        false
      )
      fail(problems.map((p) => `${endpoint.method} ${path} (${how}): ${p}`), answer)
    })
    yield* Effect.promise(() => fc.assert(property, { numRuns, ...replay }))
  })

/** Spellings of GET /balance count toward its own rate limit, as the canonical path does. */
export const spellingsCountTowardTheLimits = (numRuns: number) =>
  Effect.gen(function*() {
    const w = yield* Fixture
    const runtime = yield* Effect.runtime<HttpClient.HttpClient>()
    const balance = endpointsOf(w).find((e) => e.declared.key === "GET /api/v1/balance")!
    const path = fill(balance, { values: {}, fault: "" })
    const property = fc.asyncProperty(
      fc.array(fc.option(spelling(path), { nil: undefined }), { minLength: 40, maxLength: 40 }),
      async (spellings) => {
        const account = await Runtime.runPromise(runtime)(newAccount(0n))
        const get = (target: string) =>
          send(w.port, probe({ fault: "", method: "GET", target, headers: { "x-api-key": account.key }, expect: [] }))
        const first = await get(path)
        const limit = Number(header(first, "x-ratelimit-limit"))
        let served = 1
        for (const s of spellings) {
          const r = await get(s?.path ?? path)
          const what = `${s?.how ?? "the canonical path"} ${s?.path ?? path} after ${served} served of ${limit}`
          if (r.status === 404 && s !== undefined) continue
          const expected = served < limit ? 200 : 429
          if (r.status !== expected) throw new Error(`${what}: status ${r.status}, expected ${expected}`)
          if (header(r, "x-ratelimit-limit") !== String(limit)) {
            throw new Error(`${what}: X-RateLimit-Limit ${header(r, "x-ratelimit-limit")}, expected ${limit}`)
          }
          if (r.status === 200) {
            served++
            const remaining = header(r, "x-ratelimit-remaining")
            if (remaining !== String(limit - served)) {
              throw new Error(`${what}: X-RateLimit-Remaining ${remaining}, expected ${limit - served}`)
            }
          }
        }
      }
    )
    yield* Effect.promise(() => fc.assert(property, { numRuns, ...replay }))
  })
