/**
 * The errors the Promise face throws: plain classes a `try/catch` narrows with `instanceof`.
 * Each API error carries what the contract's error carries, in camelCase, plus the HTTP
 * status, the error's stable snake_case `code` (as the server sends it) and the server's
 * request id for support.
 * This module has no dependencies, so importing a class to test against costs nothing.
 */

/** The base of every error this package throws. */
export class BundlesError extends Error {
  override readonly name: string = "BundlesError"
}

/** What every API error is made from. */
export interface ApiErrorFields {
  readonly message: string
  /** The HTTP status. */
  readonly status: number
  /** The error's stable code, as the server's body has it (`insufficient_balance`, `validation_error`, ...). */
  readonly code: string
  /** The server's `X-Request-Id` of the response, when it had one. */
  readonly requestId?: string | undefined
  /** The Effect face's error this one was made from. */
  readonly cause?: unknown
}

/** The server answered with an error. Subclasses name the cases worth handling apart. */
export class ApiError extends BundlesError {
  override readonly name: string = "ApiError"
  /** The HTTP status. */
  readonly status: number
  /** The error's stable code, as the server's body has it (`insufficient_balance`, `validation_error`, ...). */
  readonly code: string
  /** The server's `X-Request-Id` of the response, when it had one: quote it to the operator. */
  readonly requestId: string | undefined
  constructor(fields: ApiErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.status = fields.status
    this.code = fields.code
    this.requestId = fields.requestId
  }
}

/** 400: the request could not be read (malformed JSON, wrong content type). */
export class BadRequestError extends ApiError {
  override readonly name: string = "BadRequestError"
}

/** 400: the main wallet cannot pay for the order. Amounts in pesewas. */
export class InsufficientBalanceError extends ApiError {
  override readonly name: string = "InsufficientBalanceError"
  /** The main wallet's balance, in pesewas. */
  readonly balance: bigint
  /** The price of the order, in pesewas. */
  readonly required: bigint
  constructor(fields: ApiErrorFields & { readonly balance: bigint; readonly required: bigint }) {
    super(fields)
    this.balance = fields.balance
    this.required = fields.required
  }
}

/** 400: the bundle exists but cannot be bought now (inactive bundle or network). */
export class BundleUnavailableError extends ApiError {
  override readonly name: string = "BundleUnavailableError"
}

/**
 * 401: the API key is missing, unknown or revoked, or the account is suspended (then `reason`
 * is `"account_suspended"`: the key is right, the operator must lift the suspension).
 */
export class UnauthorizedError extends ApiError {
  override readonly name: string = "UnauthorizedError"
  readonly reason: "account_suspended" | undefined
  constructor(fields: ApiErrorFields & { readonly reason?: "account_suspended" | undefined }) {
    super(fields)
    this.reason = fields.reason
  }
}

/** 404: what was asked for does not exist, or is not this account's. */
export class NotFoundError extends ApiError {
  override readonly name: string = "NotFoundError"
}

/** 404: no active network with that id. */
export class NetworkNotFoundError extends NotFoundError {
  override readonly name: string = "NetworkNotFoundError"
}

/** 404: no order with that number for this account. */
export class OrderNotFoundError extends NotFoundError {
  override readonly name: string = "OrderNotFoundError"
}

/** 404: no webhook delivery with that id for this account. */
export class DeliveryNotFoundError extends NotFoundError {
  override readonly name: string = "DeliveryNotFoundError"
}

/** 409: the request conflicts with the current state (a delivery in flight, no webhook URL to resend to). */
export class ConflictError extends ApiError {
  override readonly name: string = "ConflictError"
}

/**
 * 422: fields of the request are invalid, from the server or from the client's own check of
 * the input against the contract (then `status` is still 422 and `requestId` is undefined).
 */
export class ValidationError extends ApiError {
  override readonly name: string = "ValidationError"
  /** Messages per field, keyed by the Promise face's camelCase names (`phoneNumber`). */
  readonly errors: Readonly<Record<string, ReadonlyArray<string>>>
  constructor(fields: ApiErrorFields & { readonly errors: Readonly<Record<string, ReadonlyArray<string>>> }) {
    super(fields)
    this.errors = fields.errors
  }
}

/** 429: over a rate limit, after any waiting the retry settings allowed. */
export class RateLimitedError extends ApiError {
  override readonly name: string = "RateLimitedError"
  /** Seconds until a request can succeed. */
  readonly retryAfter: number
  constructor(fields: ApiErrorFields & { readonly retryAfter: number }) {
    super(fields)
    this.retryAfter = fields.retryAfter
  }
}

/** 5xx: the server (or a gateway before it) failed. `requestId` is what the operator needs. */
export class ServerError extends ApiError {
  override readonly name: string = "ServerError"
}

/** A response the contract does not describe (an unknown status, a body of the wrong shape). */
export class UnexpectedResponseError extends BundlesError {
  override readonly name: string = "UnexpectedResponseError"
  /** The HTTP status, when known. */
  readonly status: number | undefined
  constructor(message: string, status: number | undefined, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.status = status
  }
}

/** No response: the connection failed or broke. After an order, it may or may not have been placed. */
export class NetworkError extends BundlesError {
  override readonly name: string = "NetworkError"
}

/** No complete response within the timeout, on the last attempt. */
export class TimeoutError extends NetworkError {
  override readonly name: string = "TimeoutError"
}

/** The call's `AbortSignal` fired; `cause` is the signal's reason. */
export class AbortError extends BundlesError {
  override readonly name: string = "AbortError"
}

/** `createClient` was given options it cannot use (a missing key, a non-HTTPS base URL, ...). */
export class ConfigurationError extends BundlesError {
  override readonly name: string = "ConfigurationError"
}

/** A phone number that is not a Ghana mobile number in any form the helper understands. */
export class PhoneNumberError extends BundlesError {
  override readonly name: string = "PhoneNumberError"
}

/** A webhook delivery whose signature does not check out; `reason` says why. */
export class WebhookSignatureError extends BundlesError {
  override readonly name: string = "WebhookSignatureError"
  /** Why the delivery was refused. */
  readonly reason: "missing" | "malformed" | "expired" | "mismatch" | "body"
  constructor(reason: WebhookSignatureError["reason"], message: string) {
    super(message)
    this.reason = reason
  }
}
