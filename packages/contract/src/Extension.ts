/**
 * Endpoints beyond the specification (api-spec.md): the event feed, webhook deliveries and the
 * account's own ledger. They are marked where they are declared, so the contract says which
 * endpoints the specification promises and which this service adds, and the OpenAPI document
 * carries the mark on each operation as `x-extension: true`.
 */
import { OpenApi } from "@effect/platform"
import { Context } from "effect"

/** True on an endpoint that is not in the specification. */
export class IsExtension extends Context.Tag("@databundle/contract/Extension/IsExtension")<IsExtension, boolean>() {}

/** The OpenAPI vendor field marking an operation as an extension. */
export const OPENAPI_FIELD = "x-extension"

/** The annotations of an extension endpoint: `endpoint.annotateContext(Extension.annotations)`. */
export const annotations: Context.Context<never> = Context.empty().pipe(
  Context.add(IsExtension, true),
  Context.add(OpenApi.Override, { [OPENAPI_FIELD]: true })
) as Context.Context<never>

/** True when an endpoint's annotations mark it as an extension. */
export const isExtension = (context: Context.Context<never>): boolean =>
  Context.getOrElse(context, IsExtension, () => false)
