/**
 * Credentials: the valid ones of each API, and keys and tokens that do not authenticate.
 */
import fc from "fast-check"
import { ADMIN_TOKEN } from "../Harness.js"
import type { Api } from "./Endpoints.js"
import type { World } from "./World.js"

export interface Credentials {
  readonly label: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string>>>
  /** Appended to the query string. */
  readonly query?: string
}

export const credentials = (label: string, headers: Credentials["headers"], query?: string): Credentials =>
  query === undefined ? { label, headers } : { label, headers, query }

export const validCredentials = (w: World, api: Api) =>
  api === "public"
    ? credentials("a valid key", { "x-api-key": w.rich.key })
    : api === "dashboard"
    ? credentials("a live session", { cookie: `bundles_session=${w.holder.cookie}`, "x-csrf-token": w.holder.csrf })
    : api === "console"
    ? operatorSession(w)
    : credentials("the admin token", { authorization: `Bearer ${ADMIN_TOKEN}` })

/** The operator's live session and its CSRF token: valid on the console and the admin API. */
export const operatorSession = (w: World) =>
  credentials("a live operator session", {
    cookie: `bundles_operator=${w.operator.cookie}`,
    "x-csrf-token": w.operator.csrf
  })

/** Credentials of each API that do not authenticate. */
export const badCredentialsOf = (w: World, api: Api): fc.Arbitrary<Credentials> =>
  api === "public"
    ? badKeys(w)
    : api === "dashboard"
    ? badSessions(w)
    : api === "console"
    ? badOperatorSessions(w)
    : badTokens(w)

/** Console credentials that do not authenticate: no operator session, a made-up or mangled one, other areas' secrets. */
export const badOperatorSessions = (w: World): fc.Arbitrary<Credentials> => {
  const cookie = (label: string) => (value: string) =>
    credentials(`operator cookie ${label}`, { cookie: `bundles_operator=${value}`, "x-csrf-token": w.operator.csrf })
  return fc.oneof(
    fc.constant(credentials("no cookie", { "x-csrf-token": w.operator.csrf })),
    fc.constantFrom("", "null", "x").map((v) => cookie(JSON.stringify(v))(v)),
    fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).filter((v) => v !== w.operator.cookie).map(cookie("well formed, unknown")),
    fc.constantFrom(
      w.operator.cookie.slice(0, -1),
      `${w.operator.cookie}x`,
      swapCase(w.operator.cookie),
      w.operator.csrf
    )
      .filter((v) => v !== w.operator.cookie).map(cookie("mangled, or the CSRF token")),
    fc.constant(credentials("a dashboard session as the operator cookie", {
      cookie: `bundles_operator=${w.holder.cookie}`,
      "x-csrf-token": w.holder.csrf
    })),
    fc.constant(credentials("a dashboard session cookie", {
      cookie: `bundles_session=${w.holder.cookie}`,
      "x-csrf-token": w.holder.csrf
    })),
    fc.constant(credentials("the operator session under the dashboard's cookie name", {
      cookie: `bundles_session=${w.operator.cookie}`,
      "x-csrf-token": w.operator.csrf
    })),
    fc.constant(credentials("an API key as x-api-key", { "x-api-key": w.rich.key })),
    fc.constant(credentials("the admin token as a bearer token", { authorization: `Bearer ${ADMIN_TOKEN}` })),
    fc.constant(credentials("the operator session as a bearer token", { authorization: `Bearer ${w.operator.cookie}` }))
  )
}

/** Dashboard credentials that do not authenticate: no session, a made-up or mangled one, other APIs' secrets. */
export const badSessions = (w: World): fc.Arbitrary<Credentials> => {
  const cookie = (label: string) => (value: string) =>
    credentials(`session cookie ${label}`, { cookie: `bundles_session=${value}`, "x-csrf-token": w.holder.csrf })
  return fc.oneof(
    fc.constant(credentials("no cookie", { "x-csrf-token": w.holder.csrf })),
    fc.constantFrom("", "null", "x", "undefined").map((v) => cookie(JSON.stringify(v))(v)),
    fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).filter((v) => v !== w.holder.cookie).map(cookie("well formed, unknown")),
    fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/).filter((v) => v !== w.holder.cookie).map(cookie("random")),
    fc.constantFrom(
      w.holder.cookie.slice(0, -1),
      `${w.holder.cookie}x`,
      swapCase(w.holder.cookie),
      w.holder.csrf
    ).filter((v) => v !== w.holder.cookie).map(cookie("mangled, or the CSRF token")),
    fc.constant(credentials("the session under another cookie name", { cookie: `session=${w.holder.cookie}` })),
    fc.constant(credentials("an API key as x-api-key", { "x-api-key": w.rich.key })),
    fc.constant(credentials("an API key as the cookie", { cookie: `bundles_session=${w.rich.key}` })),
    fc.constant(credentials("the admin token as a bearer token", { authorization: `Bearer ${ADMIN_TOKEN}` })),
    fc.constant(credentials("the session as a bearer token", { authorization: `Bearer ${w.holder.cookie}` })),
    fc.constant(credentials("an operator session", {
      cookie: `bundles_operator=${w.operator.cookie}`,
      "x-csrf-token": w.operator.csrf
    })),
    fc.constant(credentials("an operator session under the dashboard's cookie name", {
      cookie: `bundles_session=${w.operator.cookie}`,
      "x-csrf-token": w.operator.csrf
    }))
  )
}

export const latin1 = fc.integer({ min: 0xa1, max: 0xff }).map((c) => String.fromCharCode(c))

export const swapCase = (s: string) =>
  [...s].map((c) => c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()).join("")

/** Keys that do not authenticate: missing, malformed, revoked, of a suspended account, mangled. */
export const badKeys = (w: World): fc.Arbitrary<Credentials> => {
  const live = new Set([w.rich.key, w.other.key, w.broke.key])
  const key = (label: string) => (k: string) => credentials(`x-api-key ${label}`, { "x-api-key": k })
  return fc.oneof(
    fc.constant(credentials("no x-api-key", {})),
    fc.constantFrom("", "   ", "null", "dbk_", "Bearer").map((k) => key(JSON.stringify(k))(k)),
    fc.string({ minLength: 1, maxLength: 80 }).filter((k) => !live.has(k.trim())).map(key("random")),
    fc.stringMatching(/^dbk_[A-Za-z0-9_-]{40}$/).filter((k) => !live.has(k)).map(key("well formed, unknown")),
    fc.string({ minLength: 1000, maxLength: 10_000 }).map(key("very long")),
    fc.string({ unit: latin1, minLength: 1, maxLength: 60 }).map(key("non-ASCII")),
    fc.constant(credentials("a revoked key", { "x-api-key": w.revokedKey })),
    fc.constant(credentials("the key of a suspended account", { "x-api-key": w.suspendedKey })),
    fc.constant(credentials("the admin token as x-api-key", { "x-api-key": ADMIN_TOKEN })),
    fc.constantFrom(w.rich.key.slice(0, -1), `${w.rich.key}x`, swapCase(w.rich.key), w.rich.key.slice(4))
      .filter((k) => !live.has(k)).map(key("mangled")),
    fc.constant(credentials("x-api-key twice", { "x-api-key": [w.rich.key, w.rich.key] })),
    fc.constant(credentials("the key as a bearer token", { authorization: `Bearer ${w.rich.key}` })),
    fc.constant(credentials("the key in the query string", {}, `api_key=${w.rich.key}`)),
    fc.constant(credentials("the admin token as a bearer token", { authorization: `Bearer ${ADMIN_TOKEN}` })),
    fc.constant(credentials("an operator session", { cookie: `bundles_operator=${w.operator.cookie}` }))
  )
}

/** Admin credentials that do not authenticate. */
export const badTokens = (w: World): fc.Arbitrary<Credentials> => {
  const auth = (label: string) => (value: string) => credentials(`Authorization ${label}`, { authorization: value })
  return fc.oneof(
    fc.constant(credentials("no Authorization", {})),
    fc.constantFrom("", "Bearer", "Bearer ", "Basic", "Bearer null").map((v) => auth(JSON.stringify(v))(v)),
    fc.string({ minLength: 1, maxLength: 80 }).filter((t) => t.trim() !== ADMIN_TOKEN).map((t) =>
      auth("Bearer <random>")(`Bearer ${t}`)
    ),
    fc.string({ minLength: 1000, maxLength: 10_000 }).map((t) => auth("Bearer <very long>")(`Bearer ${t}`)),
    fc.string({ unit: latin1, minLength: 1, maxLength: 60 }).map((t) => auth("Bearer <non-ASCII>")(`Bearer ${t}`)),
    fc.constantFrom(
      ADMIN_TOKEN.slice(0, -1),
      `${ADMIN_TOKEN}x`,
      swapCase(ADMIN_TOKEN),
      `${ADMIN_TOKEN.slice(0, 10)}X${ADMIN_TOKEN.slice(11)}`
    ).map((t) => auth("Bearer <mangled token>")(`Bearer ${t}`)),
    fc.constantFrom(
      `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString("base64")}`,
      `Token ${ADMIN_TOKEN}`,
      ADMIN_TOKEN,
      `Bearer ${w.rich.key}`
    ).map((v) => auth("with the wrong scheme or secret")(v)),
    fc.constant(credentials("the token as x-api-key", { "x-api-key": ADMIN_TOKEN })),
    fc.constant(credentials("the token in the query string", {}, `token=${ADMIN_TOKEN}`)),
    fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).filter((v) => v !== w.operator.cookie).map((v) =>
      credentials("an unknown operator cookie", { cookie: `bundles_operator=${v}`, "x-csrf-token": w.operator.csrf })
    ),
    fc.constant(credentials("a dashboard session as the operator cookie", {
      cookie: `bundles_operator=${w.holder.cookie}`,
      "x-csrf-token": w.holder.csrf
    })),
    fc.constant(credentials("a dashboard session", {
      cookie: `bundles_session=${w.holder.cookie}`,
      "x-csrf-token": w.holder.csrf
    })),
    fc.constant(credentials("the operator session under the dashboard's cookie name", {
      cookie: `bundles_session=${w.operator.cookie}`,
      "x-csrf-token": w.operator.csrf
    }))
  )
}
