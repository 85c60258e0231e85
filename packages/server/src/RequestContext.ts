/**
 * What the server learns about a request while handling it, for its log line and its 500s,
 * and who the gateway found the request to come from.
 */
import type { ApiKeys, Operators, Sessions } from "@databundle/core"
import { Effect, FiberRef, Option, Tracer } from "effect"
import { randomBytes } from "node:crypto"

/**
 * Sets an attribute on the request's span, when there is one (tracing on): unlike
 * `Effect.annotateCurrentSpan`, which without a span builds and drops an error with its stack
 * trace, a tenth of a cached read's time.
 */
export const annotateSpan = (key: string, value: unknown): Effect.Effect<void> =>
  Effect.map(Effect.serviceOption(Tracer.ParentSpan), (span) => {
    if (Option.isSome(span) && span.value._tag === "Span") span.value.attribute(key, value)
  })

/** Where a request's status and duration are counted: its route's metrics. */
export interface RouteMetrics {
  readonly observe: (status: number, seconds: number) => void
}

/** A request's id and, once authenticated, its account (for the log line); its route's metrics once decided. */
export interface RequestInfo {
  readonly id: string
  accountId: number | undefined
  /** The client address the gateway decided on (per-address limits, sign-in throttling). */
  address?: string | undefined
  route?: RouteMetrics | undefined
}

/** A request target's path and query, as written. */
export interface Target {
  readonly path: string
  readonly query: string
}

/** The current request's info; the request pipeline sets a fresh one per request. */
export const current: FiberRef.FiberRef<RequestInfo> = FiberRef.unsafeMake<RequestInfo>({
  id: "none",
  accountId: undefined
})

/** Who sent a request, as the gateway established it from its credentials. */
export type Caller =
  | { readonly _tag: "Anonymous" }
  /** Credentials that are not (or no longer) valid; `suspended`: those of an account the operator suspended. */
  | { readonly _tag: "Refused"; readonly suspended: boolean }
  | { readonly _tag: "Reseller"; readonly principal: ApiKeys.Principal }
  /** The operator's admin bearer token. */
  | { readonly _tag: "AdminToken" }
  /** A dashboard user, by the session cookie; `csrf` is the token its state-changing requests must send. */
  | { readonly _tag: "Holder"; readonly session: Sessions.SessionPrincipal; readonly csrf: string }
  /** A console operator, by the operator session cookie; `csrf` as a holder's. */
  | { readonly _tag: "OperatorSession"; readonly session: Operators.OperatorPrincipal; readonly csrf: string }

/**
 * The caller of the current request. The gateway sets it around the handler; where it did
 * not, the request is anonymous, and the security middlewares refuse it.
 */
export const caller: FiberRef.FiberRef<Caller> = FiberRef.unsafeMake<Caller>({ _tag: "Anonymous" })

// Random bytes are drawn 4 KiB at a time: one call to the generator serves 512 ids.
let pool = Buffer.alloc(0)
let used = 0

/** A new request id: `req_` and 16 random hex characters. */
export const newId = (): string => {
  if (used + 8 > pool.length) {
    pool = randomBytes(4096)
    used = 0
  }
  used += 8
  return `req_${pool.toString("hex", used - 8, used)}`
}

const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^?#]*)(\?[^#]*)?/

/**
 * The path and query of a request target, as written: an origin-form target (`/path?q`) as
 * it is, an absolute-form one (`http://host/path?q`) without its scheme and host. Nothing is
 * decoded or resolved. A target of neither form (the asterisk form `*`) is kept as it is: no
 * route and no page has a path without a leading slash, so it is a 404.
 */
export const splitTarget = (target: string): Target => {
  const match = target.startsWith("/") ? undefined : ABSOLUTE.exec(target)
  const origin = target.startsWith("/") ? target : match ? `${match[1] || "/"}${match[2] ?? ""}` : target
  const mark = origin.indexOf("?")
  return mark < 0 ? { path: origin, query: "" } : { path: origin.slice(0, mark), query: origin.slice(mark) }
}

/** The path of a request target, without its query. */
export const pathOf = (target: string): string => splitTarget(target).path
