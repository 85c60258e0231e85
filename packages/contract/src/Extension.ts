/**
 * Endpoints beyond the specification (api-spec.md): the event feed, webhook deliveries and the
 * account's own ledger. They are marked where they are declared, so the contract says which
 * endpoints the specification promises and which this service adds, and the OpenAPI document
 * carries the mark on each operation as `x-extension: true`.
 */
import { OpenApi } from "@effect/platform"
import { Context } from "effect"

/** The OpenAPI vendor field marking an operation as an extension. */
export const OPENAPI_FIELD = "x-extension"

/** The annotations of an extension endpoint: `endpoint.annotateContext(Extension.annotations)`. */
export const annotations: Context.Context<never> = Context.make(OpenApi.Override, {
  [OPENAPI_FIELD]: true
}) as Context.Context<never>
