/**
 * What the aggregator adapters (Reloadly, DT One) share when they speak HTTP to their
 * supplier: failures in the seller port's terms, an answer read by a schema or taken as
 * unknown, a deadline, a 429's wait, and our network slug for an operator's name.
 */
import { parseRetryAfter, RETRY_AFTER_HEADER } from "@databundle/client"
import type { HttpClientResponse } from "@effect/platform"
import { type Duration, Effect, Schema } from "effect"
import { type Failure, SellerFailure } from "./Seller.js"

/** Fails with a seller failure. */
export const fail = (failure: Failure) => Effect.fail(new SellerFailure({ failure }))

/** The answer's JSON read by `schema`; one `supplier` answered that cannot be read is an unknown outcome. */
export const readJson =
  (supplier: string) => <A, I>(schema: Schema.Schema<A, I>, response: HttpClientResponse.HttpClientResponse) =>
    response.json.pipe(
      Effect.flatMap(Schema.decodeUnknown(schema)),
      Effect.catchAll((error) =>
        fail({ _tag: "Unknown", message: `an answer of ${supplier} we cannot read: ${error.message}` })
      )
    )

/** `self` within `timeout`, else an unknown outcome (it may have happened at the supplier). */
export const within = (supplier: string, timeout: Duration.Duration) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(self, {
    duration: timeout,
    onTimeout: () => new SellerFailure({ failure: { _tag: "Unknown", message: `${supplier} did not answer in time` } })
  })

/** How long a 429 asks us to wait, in milliseconds (a second when it does not say). */
export const waitOf = (response: HttpClientResponse.HttpClientResponse): number =>
  parseRetryAfter(response.headers[RETRY_AFTER_HEADER], Date.now()) ?? 1000

/** Our network slug for an operator's name: "MTN Ghana Data" → `mtn`, "Vodafone Ghana" → `telecel`. */
export const slugOf = (name: string): string =>
  name.toLowerCase().replace(/vodafone/g, "telecel").replace(/\b(ghana|data|bundles?)\b/g, " ")
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "operator"
