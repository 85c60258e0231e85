/**
 * Idempotency of admin requests that move money: the `Idempotency-Key` header. A request
 * repeated with the same key and the same body is answered with the first result and
 * `Idempotent-Replayed: true`, and moves nothing; the same key with another body is a 422.
 */
import { Schema } from "effect"

/** The request header that carries the key (lower case, as HTTP headers are read). */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key"

/** The response header of a replayed result (also of POST /orders replayed by its `reference`). */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed"

/** How long a key is remembered; after that the same key is a new request. */
export const RETENTION_DAYS = 7

/** A key: 1 to 128 characters of `A-Z a-z 0-9 _ . : -` (a UUID fits). */
export const IdempotencyKey = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_.:-]{1,128}$/, {
    message: () => "Idempotency-Key must be 1 to 128 characters of A-Z, a-z, 0-9, _, ., : and -"
  })
).annotations({ identifier: "IdempotencyKey" })

/** The type of `IdempotencyKey`. */
export type IdempotencyKey = typeof IdempotencyKey.Type

/** The headers of an endpoint that honours `Idempotency-Key`. */
export const IdempotencyHeaders = Schema.Struct({
  [IDEMPOTENCY_KEY_HEADER]: Schema.optional(IdempotencyKey).annotations({
    description: `Repeating the request with this key replays the first result for ${RETENTION_DAYS} days`
  })
})

/** The type of `IdempotencyHeaders`. */
export type IdempotencyHeaders = typeof IdempotencyHeaders.Type
