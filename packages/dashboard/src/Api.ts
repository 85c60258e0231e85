/**
 * The dashboard's only way to the server: a small `fetch` layer typed from the contract.
 *
 * The client `HttpApiClient` derives from an `HttpApi` carries Effect, Schema and the
 * platform's HTTP client into the page: 141 KB compressed (brotli) for the reseller API alone,
 * over the whole budget of the first page (docs/architecture.md). So the browser gets:
 * - types from the contract's schemas through type-only imports, which cost nothing at run
 *   time (`Endpoints.ts`; each endpoint's name is checked against the `DashboardApi` type);
 * - the method and path of each endpoint from the contract itself, read by the build with
 *   `HttpApi.reflect` and inlined as `DASHBOARD_ROUTES` (the operator's console: `CONSOLE_ROUTES`,
 *   in its own chunk), so a path exists in one place;
 * - the envelope of the API's errors (`success: false`, `message`, the 422's `errors` by field).
 */

import { PageLeft } from "./Life.js"

declare const DASHBOARD_ROUTES: Routes

/** Each endpoint's method and path by `group.endpoint`, as the build read them from the contract. */
export type Routes = Record<string, readonly [method: string, path: string]>

/** A refusal from the API (its envelope) or no answer at all (`status` 0). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly tag: string | undefined,
    readonly errors: Record<string, ReadonlyArray<string>> | undefined,
    readonly body: unknown
  ) {
    super(message)
  }
}

/** What a call takes besides the endpoint. */
export interface CallOptions {
  readonly path?: Record<string, string | number>
  readonly query?: Record<string, string | number | boolean | undefined | null>
  readonly payload?: unknown
  readonly headers?: Record<string, string>
  /** The page's lifetime (`Life.signal`): leaving the page aborts the request (`PageLeft`). */
  readonly signal?: AbortSignal
  /** Shown every response's headers, refusals too (the bulk page paces itself by them). */
  readonly onHeaders?: (headers: Headers) => void
}

/**
 * A client over one table of routes, with the state of one session: its CSRF token and what
 * happens when the server says the session ended. The account holder's pages and the
 * operator's console each have their own, so neither ever sends the other's token.
 */
export const makeClient = (routes: Routes, options: { readonly signIn: string }) => {
  let csrfToken: string | undefined
  let onUnauthorized: (failure: ApiFailure) => void = () => {}

  const urlOf = (endpoint: string, call: CallOptions = {}): string => {
    const route = routes[endpoint]
    if (route === undefined) throw new Error(`unknown endpoint ${endpoint}`)
    let url = route[1].replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(String(call.path?.[name] ?? "")))
    const query = new URLSearchParams()
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null && value !== "") query.set(name, String(value))
    }
    const text = query.toString()
    if (text.length > 0) url += `?${text}`
    return url
  }

  const call = async <A>(endpoint: string, call: CallOptions = {}): Promise<A> => {
    const [method] = routes[endpoint]!
    const headers: Record<string, string> = { accept: "application/json", ...call.headers }
    if (method !== "GET" && method !== "HEAD" && csrfToken !== undefined) headers["x-csrf-token"] = csrfToken
    let body: string | undefined
    if (call.payload !== undefined) {
      headers["content-type"] = "application/json"
      body = JSON.stringify(call.payload)
    }
    let response: Response
    let json: any
    try {
      response = await fetch(urlOf(endpoint, call), {
        method,
        headers,
        body: body ?? null,
        credentials: "same-origin",
        signal: call.signal ?? null
      })
      json = await response.json().catch((error: unknown) => {
        if (call.signal?.aborted) throw error
        return undefined
      })
    } catch {
      if (call.signal?.aborted) throw new PageLeft()
      throw new ApiFailure(
        0,
        "No answer from the server: check your connection and try again (a repeated payment or order is never made twice).",
        undefined,
        undefined,
        undefined
      )
    }
    call.onHeaders?.(response.headers)
    if (response.ok) return json as A
    const message = typeof json?.message === "string" ? json.message : `The server answered ${response.status}`
    const failure = new ApiFailure(response.status, message, json?._tag, json?.errors, json)
    if (response.status === 401 && endpoint !== options.signIn) onUnauthorized(failure)
    throw failure
  }

  return {
    /** The URL of an endpoint with its path parameters and query. */
    urlOf,
    /** Calls an endpoint by its `group.endpoint` name; resolves to the decoded JSON body. */
    call,
    /** Sets the token state-changing requests carry (from the session the server returned). */
    setCsrfToken: (token: string | undefined): void => {
      csrfToken = token
    },
    /** Installs what happens when the server answers 401 to a signed-in page: the session ended (or its account was suspended). */
    whenSignedOut: (f: (failure: ApiFailure) => void): void => {
      onUnauthorized = f
    }
  }
}

const dashboard = makeClient(DASHBOARD_ROUTES, { signIn: "dashboardAccess.signIn" })

/** The account holder's client (the dashboard API). */
export const { call, setCsrfToken, urlOf, whenSignedOut } = dashboard
