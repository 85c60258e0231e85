/**
 * The families of bad requests at every endpoint: wrong methods, bad path parameters, queries,
 * bodies and credentials, and the mixes the properties send.
 */
import fc from "fast-check"
import { type BrokenBody, placeBody } from "./Bodies.js"
import { badCredentialsOf, operatorSession, validCredentials } from "./Credentials.js"
import { allowedAt, type Api, encode, endpointsOf } from "./Endpoints.js"
import { badFraming } from "./Framing.js"
import { unknownPath } from "./Paths.js"
import { METHODS, type Probe, probe } from "./Probe.js"
import { clip } from "./Probe.js"
import { refusedByState } from "./Refusals.js"
import { request } from "./Requests.js"
import { junk } from "./Values.js"
import type { World } from "./World.js"

/** A method the path does not serve: 405 with Allow, whatever the credentials. */
export const wrongMethod = (w: World, api: Api) => {
  const endpoints = endpointsOf(w)
  return fc.constantFrom(...endpoints.filter((e) => e.api === api)).chain((endpoint) => {
    const allow = allowedAt(endpoints, endpoint)
    const wrong = METHODS.filter((m) => !allow.includes(m))
    return fc.tuple(
      fc.constantFrom(...wrong),
      endpoint.good,
      fc.oneof(fc.constant(validCredentials(w, api)), badCredentialsOf(w, api)),
      endpoint.body ?? placeBody(w)
    ).map(([method, params, creds, body]) =>
      request(endpoint, {
        fault: `${method} is not served there`,
        method,
        params,
        credentials: creds,
        body: ["POST", "PUT", "PATCH"].includes(method) ? body : undefined,
        expect: [405],
        allow
      })
    )
  })
}

/** A path parameter that names nothing: 404 (or the body's 422 first, on a payload endpoint). */
export const badParams = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api && e.path.includes(":"))).chain((endpoint) =>
    fc.tuple(endpoint.bad, endpoint.body ?? fc.constant(undefined)).map(([params, body]) =>
      request(endpoint, {
        fault: params.fault,
        params,
        credentials: validCredentials(w, api),
        body,
        expect: body === undefined ? [404] : [404, 422]
      })
    )
  )

/** Query parameters out of range, of the wrong type or unknown values: 422. */
export const badQueries = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api && e.query !== undefined)).chain((endpoint) => {
    const params = endpoint.query!
    return fc.tuple(
      endpoint.good,
      fc.uniqueArray(fc.constantFrom(...params), { minLength: 1, maxLength: params.length, selector: (q) => q.name }),
      fc.tuple(...params.map((q) => fc.option(q.good))),
      fc.tuple(...params.map((q) => q.odd === undefined ? q.bad : fc.oneof(q.bad, q.odd))),
      fc.tuple(...params.map(() => fc.boolean())),
      fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,10}$/), junk), { maxLength: 2 })
    ).map(([pathParams, broken, goods, bads, twice, unknown]) => {
      const pairs: Array<readonly [string, string]> = []
      const faults: Array<string> = []
      let strict = false
      params.forEach((q, i) => {
        if (broken.includes(q)) {
          const value = bads[i]!
          pairs.push([q.name, value])
          if (twice[i]) pairs.push([q.name, value])
          faults.push(`${q.name}=${JSON.stringify(clip(value, 40))}${twice[i] ? " twice" : ""}`)
          const n = Number(value)
          if (!(q.odd !== undefined && Number.isInteger(n) && n > 0)) strict = true
        } else if (goods[i] !== null) {
          pairs.push([q.name, goods[i]!])
        }
      })
      for (const [name, value] of unknown) {
        if (!params.some((q) => q.name === name)) pairs.push([`x_${name}`, value])
      }
      return request(endpoint, {
        fault: faults.join(", "),
        params: pathParams,
        credentials: validCredentials(w, api),
        query: pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&"),
        // A well-formed unknown account alone may be an empty list.
        expect: strict ? [422] : [200, 422]
      })
    })
  })

/** Bodies that are well-formed JSON but do not decode: 422. */
export const badBodies = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api && e.body !== undefined)).chain((endpoint) =>
    fc.tuple(
      endpoint.good,
      fc.oneof(
        { weight: 15, arbitrary: endpoint.body! },
        { weight: 1, arbitrary: fc.constant<BrokenBody>({ fault: "an empty body", text: "" }) }
      )
    ).map(([params, body]) =>
      request(endpoint, {
        fault: body.fault,
        params,
        credentials: validCredentials(w, api),
        body,
        // An empty body is either malformed JSON or not an object.
        expect: body.text === "" ? [400, 422] : [422]
      })
    )
  )

/** Good requests but for their credentials: 401. */
export const badCredentials = (w: World, api: Api) =>
  fc.constantFrom(...endpointsOf(w).filter((e) => e.api === api && e.declared.authenticated)).chain((endpoint) =>
    fc.tuple(
      endpoint.good,
      badCredentialsOf(w, api),
      endpoint.body ?? fc.constant(undefined)
    ).map(([params, creds, body]) => request(endpoint, { fault: "", params, credentials: creds, body, expect: [401] }))
  )

export const publicWithKey = (w: World) =>
  fc.oneof(
    wrongMethod(w, "public"),
    unknownPath(w, "public"),
    badParams(w, "public"),
    badQueries(w, "public"),
    { weight: 2, arbitrary: badBodies(w, "public") },
    refusedByState(w, "public")
  )

export const adminWithToken = (w: World) =>
  fc.oneof(
    wrongMethod(w, "admin"),
    unknownPath(w, "admin"),
    { weight: 2, arbitrary: badParams(w, "admin") },
    badQueries(w, "admin"),
    { weight: 3, arbitrary: badBodies(w, "admin") },
    { weight: 2, arbitrary: refusedByState(w, "admin") }
  )

export const dashboardWithSession = (w: World) =>
  fc.oneof(
    wrongMethod(w, "dashboard"),
    unknownPath(w, "dashboard"),
    { weight: 2, arbitrary: badParams(w, "dashboard") },
    badQueries(w, "dashboard"),
    { weight: 3, arbitrary: badBodies(w, "dashboard") },
    { weight: 2, arbitrary: withoutCsrf(w) }
  )

/** A signed-in request that would change something, without its CSRF token or with a wrong one: 403. */
export const withoutCsrf = (w: World) =>
  fc.constantFrom(
    ...endpointsOf(w).filter((e) => e.api === "dashboard" && e.declared.authenticated && e.method !== "GET")
  ).chain((endpoint) =>
    fc.tuple(
      endpoint.good,
      fc.oneof(
        fc.constant<string | undefined>(undefined),
        fc.constantFrom("", "x", w.holder.cookie, w.holder.csrf.slice(1), w.holder.csrf.toUpperCase())
      ),
      endpoint.body ?? fc.constant(undefined)
    ).map(([params, csrf, body]) =>
      request(endpoint, {
        fault: csrf === undefined ? "no CSRF token" : `CSRF token ${JSON.stringify(csrf)}`,
        params,
        credentials: {
          label: "a live session",
          headers: {
            cookie: `bundles_session=${w.holder.cookie}`,
            ...(csrf === undefined ? {} : { "x-csrf-token": csrf })
          }
        },
        body,
        // A bad body may be refused first.
        expect: body === undefined ? [403] : [403, 422]
      })
    )
  )

/**
 * The console API with an operator session, and the admin API with that session instead of
 * the token: the same faults, and changes without the session's CSRF token (403).
 */
export const consoleWithSession = (w: World) =>
  fc.oneof(
    wrongMethod(w, "console"),
    unknownPath(w, "console"),
    badBodies(w, "console"),
    { weight: 2, arbitrary: asOperator(w, badParams(w, "admin")) },
    asOperator(w, badQueries(w, "admin")),
    { weight: 2, arbitrary: asOperator(w, badBodies(w, "admin")) },
    { weight: 3, arbitrary: withoutOperatorCsrf(w) }
  )

/** The same requests sent with the operator's session (and its CSRF token) instead of the admin token. */
const asOperator = (w: World, probes: fc.Arbitrary<Probe>) => {
  const session = operatorSession(w)
  return probes.map((p) => {
    const { authorization: _, ...headers } = p.headers
    return probe({ ...p, headers: { ...headers, ...session.headers }, fault: `${p.fault}; ${session.label}` })
  })
}

/** An operator's change to the admin or console API without its CSRF token or with a wrong one: 403. */
export const withoutOperatorCsrf = (w: World) =>
  fc.constantFrom(
    ...endpointsOf(w).filter((e) =>
      (e.api === "admin" || e.api === "console") && e.declared.authenticated && e.method !== "GET"
    )
  ).chain((endpoint) =>
    fc.tuple(
      endpoint.good,
      fc.oneof(
        fc.constant<string | undefined>(undefined),
        fc.constantFrom("", "x", w.operator.cookie, w.operator.csrf.slice(1), w.holder.csrf)
      ),
      endpoint.body ?? fc.constant(undefined)
    ).map(([params, csrf, body]) =>
      request(endpoint, {
        fault: csrf === undefined ? "no CSRF token" : `CSRF token ${JSON.stringify(csrf)}`,
        params,
        credentials: {
          label: "a live operator session",
          headers: {
            cookie: `bundles_operator=${w.operator.cookie}`,
            ...(csrf === undefined ? {} : { "x-csrf-token": csrf })
          }
        },
        body,
        // A bad body may be refused first.
        expect: body === undefined ? [403] : [403, 422]
      })
    )
  )

export const everything = (w: World) =>
  fc.oneof(
    publicWithKey(w),
    badCredentials(w, "public"),
    adminWithToken(w),
    badCredentials(w, "admin"),
    dashboardWithSession(w),
    badCredentials(w, "dashboard"),
    consoleWithSession(w),
    badCredentials(w, "console"),
    badFraming(w)
  )
