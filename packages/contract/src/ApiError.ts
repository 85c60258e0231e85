/**
 * The error envelope shared by both APIs.
 *
 * Every error body is a JSON object with `success: false` and a `message` (the spec's
 * envelope), plus three extensions beyond the spec: `_tag` naming the error so typed clients
 * can tell errors of one status apart, `code`, the same name as a stable snake_case string
 * for clients in other languages, and `request_id`, the request's `X-Request-Id`.
 * Errors that belong to one concept (an order, a network) live in that concept's module.
 */
import { HttpApiSchema } from "@effect/platform"
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

/** The id of the request an error answers (its `X-Request-Id`); the server fills it in. */
export const RequestId = Schema.optional(Schema.String)

/** The fields every error body carries besides its message: `success`, `code`, `request_id`. */
export const envelope = <const C extends string>(value: C) => ({
  success: Failed,
  code: code(value),
  request_id: RequestId
})

/** 400: a request the server cannot read (malformed JSON, wrong content type). */
export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  { ...envelope("bad_request"), message: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {}

/** 401: missing, unknown or revoked credentials, or a suspended account. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { ...envelope("unauthorized"), message: Schema.String },
  HttpApiSchema.annotations({ status: 401 })
) {}

/** 403: the caller is known but may not do this (a dashboard request without its CSRF token). */
export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { success: Failed, message: Schema.String },
  HttpApiSchema.annotations({ status: 403 })
) {}

/** 404: an unknown route, or a resource that does not exist or is not visible to the caller. */
export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { ...envelope("not_found"), message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

/** 405: a known path with a method it does not serve; the response carries `Allow`. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  "MethodNotAllowed",
  { ...envelope("method_not_allowed"), message: Schema.String },
  HttpApiSchema.annotations({ status: 405 })
) {}

/** 409: the request conflicts with the resource's current state. */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { ...envelope("conflict"), message: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {}

/** 413: a request body over the size limit. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  { ...envelope("payload_too_large"), message: Schema.String },
  HttpApiSchema.annotations({ status: 413 })
) {}

/** Per-field messages of a 422, keyed by field name (`bundle_id`, `phone_number`, ...). */
export const FieldErrors = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })

/** The type of `FieldErrors`. */
export type FieldErrors = typeof FieldErrors.Type

/** 422: the request was read but its fields are invalid. */
export class ValidationError extends Schema.TaggedError<ValidationError>()(
  "ValidationError",
  { ...envelope("validation_error"), message: Schema.String, errors: FieldErrors },
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
  { ...envelope("rate_limited"), message: Schema.String, retry_after: Schema.Int },
  HttpApiSchema.annotations({ status: 429 })
) {}

/** 408: the request's body did not arrive in time. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()(
  "RequestTimeout",
  { ...envelope("request_timeout"), message: Schema.String },
  HttpApiSchema.annotations({ status: 408 })
) {}

/** 500: an internal failure; the body holds only a generic message and the request id. */
export class ServerError extends Schema.TaggedError<ServerError>()(
  "ServerError",
  { ...envelope("server_error"), message: Schema.String, request_id: Schema.String },
  HttpApiSchema.annotations({ status: 500 })
) {}
