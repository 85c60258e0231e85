/**
 * What the server learns about a request while handling it, for its log line and its 500s.
 */
import type { ApiKeys } from "@databundle/core"
import { FiberRef, type Option } from "effect"
import { randomBytes } from "node:crypto"

/** A request's id and, once authenticated, its account. */
export interface RequestInfo {
  readonly id: string
  accountId: number | undefined
  /** The API key's lookup, once the gateway made it, so the security middleware need not repeat it. */
  principal: Option.Option<ApiKeys.Principal> | undefined
}

/** The current request's info; the request pipeline sets a fresh one per request. */
export const current: FiberRef.FiberRef<RequestInfo> = FiberRef.unsafeMake<RequestInfo>({
  id: "none",
  accountId: undefined,
  principal: undefined
})

/** A new request id: `req_` and 16 random hex characters. */
export const newId = (): string => `req_${randomBytes(8).toString("hex")}`

/**
 * The path of a request target as the router sees it: the origin-form path without its query,
 * dot segments kept (the router does not resolve them either). An absolute-form target
 * (`GET http://host/path`) gives its path, and one that does not parse gives "/".
 */
export const pathOf = (target: string): string => {
  if (target.startsWith("/")) {
    const query = target.indexOf("?")
    return query < 0 ? target : target.slice(0, query)
  }
  try {
    return new URL(target).pathname
  } catch {
    return "/"
  }
}
