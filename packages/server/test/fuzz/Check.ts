/**
 * Checking a response to a probe (status, envelope, headers, leaks) and the state after it, and
 * running a property of probes.
 */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import * as RequestContext from "../../src/RequestContext.js"
import { clip, type Observed, type Probe, send } from "./Probe.js"
import { changedTables, fingerprint, Fixture, PUBLIC, type World } from "./World.js"

export const LEAKS: ReadonlyArray<readonly [string, RegExp]> = [
  ["a stack trace", /(?:\n|\\n)\s*at [^\s]+ \(|\bat [^\s"]+ \([^)]*:\d+:\d+\)/],
  ["SQL", /\bSELECT\b|\bINSERT\b|SqlError/],
  ["SQL", /relation "|syntax error|violates .*constraint|out of range for type/i],
  ["a file path", /\/work\/|node_modules|\.ts:\d|\.js:\d|file:\/\//]
]

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const header = (r: Observed, name: string) => {
  const value = r.headers[name]
  return Array.isArray(value) ? value.join(", ") : value
}

/** Everything wrong with a response to a probe. */
export const problemsOf = (w: World, p: Probe, r: Observed, allow429: boolean): Array<string> => {
  const problems: Array<string> = []
  const expect = allow429 ? [...p.expect, 429] : p.expect
  if (r.status >= 500) problems.push(`a ${r.status}`)
  else if (!expect.includes(r.status)) problems.push(`status ${r.status}, expected ${expect.join(" or ")}`)
  if (!header(r, "x-request-id")) problems.push("no X-Request-Id")
  if (!/^application\/json\b/i.test(header(r, "content-type") ?? "")) {
    problems.push(`Content-Type ${header(r, "content-type")}`)
  }
  let body: unknown = undefined
  try {
    body = JSON.parse(r.text)
  } catch {
    problems.push("the body is not JSON")
  }
  if (body !== undefined && !isObject(body)) problems.push("the body is not a JSON object")
  if (isObject(body)) {
    if (typeof body.success !== "boolean") problems.push("no boolean `success`")
    if (r.status >= 400) {
      if (body.success !== false) problems.push("`success` is not false")
      if (typeof body.message !== "string" || body.message.length === 0) problems.push("no string `message`")
    }
    if (r.status === 422) {
      const errors = body.errors
      const ok = isObject(errors) && Object.keys(errors).length > 0 &&
        Object.values(errors).every((list) =>
          Array.isArray(list) && list.length > 0 && list.every((m) => typeof m === "string")
        )
      if (!ok) problems.push("a 422 without `errors` as an object of string arrays")
    }
    if (r.status === 429) {
      const after = body.retry_after
      if (typeof after !== "number" || !Number.isInteger(after) || after < 1 || after > 61) {
        problems.push("a 429 without an integer `retry_after` of 1 to 61")
      } else if (header(r, "retry-after") !== String(after)) {
        problems.push("a 429 whose Retry-After differs from `retry_after`")
      }
    }
    if (r.status === 400 && p.insufficient) {
      if (typeof body.balance !== "number" || typeof body.required !== "number") {
        problems.push("an insufficient-balance 400 without numbers `balance` and `required`")
      }
    }
  }
  if (r.status === 405 && p.allow !== undefined) {
    const allow = (header(r, "allow") ?? "").split(",").map((m) => m.trim()).filter((m) => m.length > 0).sort()
    if (allow.join(",") !== [...p.allow].sort().join(",")) {
      problems.push(`Allow is "${header(r, "allow")}", expected ${p.allow.join(", ")}`)
    }
  }
  // The rate-limit headers come with everything under the public prefix as written.
  const path = RequestContext.pathOf(p.target)
  if (path === PUBLIC || path.startsWith(`${PUBLIC}/`)) {
    for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      if (!/^\d+$/.test(header(r, name) ?? "")) problems.push(`no ${name}`)
    }
  }
  for (const [what, pattern] of LEAKS) {
    if (pattern.test(r.text)) problems.push(`the body shows ${what}`)
  }
  for (const secret of w.secrets) {
    if (r.text.includes(secret)) problems.push("the body shows a secret (the admin token or an API key)")
  }
  return problems
}

/** Sends each probe; fails on any problem with the response or any change to the state. */
export const requestsAreHarmless = (w: World, arbitrary: fc.Arbitrary<Probe>, allow429: boolean) =>
  fc.asyncProperty(arbitrary, async (p) => {
    const response = await send(w.port, p)
    const problems = problemsOf(w, p, response, allow429)
    const now = await Effect.runPromise(fingerprint(w.sql))
    const changed = changedTables(w.state.last, now)
    if (changed.length > 0) {
      problems.push(`it changed the state of ${changed.join(", ")}`)
      w.state.last = now
    }
    if (problems.length > 0) {
      const headers = ["allow", "retry-after", "x-request-id"].flatMap((name) =>
        header(response, name) === undefined ? [] : [`${name}: ${header(response, name)}`]
      )
      throw new Error(
        `${problems.join("; ")}\n    observed: ${response.status} ${clip(response.text, 600)}${
          headers.length > 0 ? `\n    headers: ${headers.join(", ")}` : ""
        }`
      )
    }
  })

export const replay: Partial<fc.Parameters<unknown>> = process.env.FUZZ_SEED === undefined ? {} : {
  seed: Number(process.env.FUZZ_SEED),
  ...(process.env.FUZZ_PATH === undefined ? {} : { path: process.env.FUZZ_PATH })
}

/** Runs a property of `numRuns` probes, then checks the database against the baseline. */
export const fuzz = (
  generator: (w: World) => fc.Arbitrary<Probe>,
  numRuns: number,
  options: { readonly allow429?: boolean } = {}
) =>
  Effect.gen(function*() {
    const w = yield* Fixture
    yield* Effect.promise(() =>
      fc.assert(requestsAreHarmless(w, generator(w), options.allow429 ?? false), { numRuns, ...replay })
    )
    assert.deepStrictEqual(yield* fingerprint(w.sql), w.baseline)
  })
