/**
 * The error envelope shared by both APIs.
 *
 * Every error body is a JSON object with `success: false` and a `message` (the spec's
 * envelope), plus three extensions beyond the spec: `_tag` naming the error so typed clients
 * can tell errors of one status apart, `code`, the same name as a stable snake_case string
 * for clients in other languages, and `request_id`, the request's `X-Request-Id`.
 * Errors that belong to one concept (an order, a network) live in that concept's module.
 */
import { type HttpApi, type HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/** `success: false`, filled in by the constructor. */
export const Failed = Schema.Literal(false).pipe(
  Schema.propertySignature,
  Schema.withConstructorDefault(() => false as const)
)

/** `success: true`, filled in by the constructor. */
export const Succeeded = Schema.Literal(true).pipe(
  Schema.propertySignature,
  Schema.withConstructorDefault(() => true as const)
)

/**
 * An error's stable snake_case name (`not_found`, `insufficient_balance`): always sent,
 * filled in by the constructor, and read as that name from a body without one.
 */
export const code = <const C extends string>(value: C) =>
  Schema.optionalWith(Schema.Literal(value), { default: () => value })

/** The response header of every answer that carries the request's id. */
export const REQUEST_ID_HEADER = "x-request-id"

/** The id of the request an error answers (its `X-Request-Id`); the server fills it in. */
export const RequestId = Schema.optional(Schema.String)

/** The extensions every error body carries after the spec's `success` and `message`: `code`, `request_id`. */
export const extensions = <const C extends string>(value: C) => ({
  code: code(value),
  request_id: RequestId
})

/** 400: a request the server cannot read (malformed JSON, wrong content type). */
export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  { success: Failed, message: Schema.String, ...extensions("bad_request") },
  HttpApiSchema.annotations({ status: 400 })
) {}

/**
 * 401: missing, unknown or revoked credentials, or a suspended account (then `reason` says so,
 * and the message says what to do: a key or a session of it is fine, the account is not).
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  {
    success: Failed,
    message: Schema.String,
    ...extensions("unauthorized"),
    reason: Schema.optional(Schema.Literal("account_suspended")).annotations({
      description: "account_suspended: the credentials are right, but the operator suspended the account"
    })
  },
  HttpApiSchema.annotations({ status: 401 })
) {}

/** 403: the caller is known but may not do this (a dashboard request without its CSRF token). */
export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { success: Failed, message: Schema.String, ...extensions("forbidden") },
  HttpApiSchema.annotations({ status: 403 })
) {}

/** 404: an unknown route, or a resource that does not exist or is not visible to the caller. */
export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { success: Failed, message: Schema.String, ...extensions("not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}

/** 405: a known path with a method it does not serve; the response carries `Allow`. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  "MethodNotAllowed",
  { success: Failed, message: Schema.String, ...extensions("method_not_allowed") },
  HttpApiSchema.annotations({ status: 405 })
) {}

/** 409: the request conflicts with the resource's current state. */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { success: Failed, message: Schema.String, ...extensions("conflict") },
  HttpApiSchema.annotations({ status: 409 })
) {}

/** 413: a request body over the size limit. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  { success: Failed, message: Schema.String, ...extensions("payload_too_large") },
  HttpApiSchema.annotations({ status: 413 })
) {}

/** Per-field messages of a 422, keyed by field name (`bundle_id`, `phone_number`, ...). */
export const FieldErrors = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })

/** The type of `FieldErrors`. */
export type FieldErrors = typeof FieldErrors.Type

/** 422: the request was read but its fields are invalid. */
export class ValidationError extends Schema.TaggedError<ValidationError>()(
  "ValidationError",
  { success: Failed, message: Schema.String, ...extensions("validation_error"), errors: FieldErrors },
  HttpApiSchema.annotations({ status: 422 })
) {
  /** A validation error about a single field. */
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ message: `${field} ${message}`, errors: { [field]: [`${field} ${message}`] } })
  }
}

/** 429: over a rate limit; `retry_after` is in seconds, as is the `Retry-After` header. */
export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  { success: Failed, message: Schema.String, ...extensions("rate_limited"), retry_after: Schema.Int },
  HttpApiSchema.annotations({ status: 429 })
) {}

/** 408: the request's body did not arrive in time. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()(
  "RequestTimeout",
  { success: Failed, message: Schema.String, ...extensions("request_timeout") },
  HttpApiSchema.annotations({ status: 408 })
) {}

/** 500: an internal failure; the body holds only a generic message and the request id. */
export class ServerError extends Schema.TaggedError<ServerError>()(
  "ServerError",
  { success: Failed, message: Schema.String, ...extensions("server_error"), request_id: Schema.String },
  HttpApiSchema.annotations({ status: 500 })
) {}

/**
 * Declares the errors any request of an API may get whatever its endpoint (an unknown path
 * or method, a body too large or too slow or invalid, a rate limit, a server error), after
 * the API's credential errors, so every API lists them in the same order.
 */
export const withRequestErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  api
    .addError(NotFound)
    .addError(MethodNotAllowed)
    .addError(PayloadTooLarge)
    .addError(ValidationError)
    .addError(RateLimited)
    .addError(RequestTimeout)
    .addError(ServerError)
