/**
 * Property-based fuzzing of the three APIs (fast-check): generated bad requests at every endpoint of
 * the public, the admin and the dashboard API, sent over raw HTTP so that any method, request-target, header
 * and body bytes can be sent. Every request is bad by construction and names its fault and the
 * statuses that fault allows.
 *
 * For every response: never a 5xx; the JSON envelope (`success: false`, a `message`, `errors`
 * on a 422, `retry_after` on a 429, `Allow` on a 405) with `X-Request-Id` and, under `/api/v1`,
 * the rate-limit headers; one of the statuses the fault allows; no stack trace, SQL, file path,
 * admin token or API key in the body. After every request the database's money-related state
 * (accounts, keys, wallets, ledger, orders, catalogue) is exactly as before it; after each property
 * it is the state after set-up, and after all of them so is the admin API's view of it (balances,
 * audit, ledger, orders, keys, catalogue).
 *
 * The generators live in `fuzz/`, one module per thing they generate; the endpoints come from
 * the API itself (`fuzz/Endpoints.ts`).
 *
 * A failure prints fast-check's seed and path: replay it with `FUZZ_SEED=<seed> FUZZ_PATH=<path>`.
 */
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { fuzz } from "./fuzz/Check.js"
import { coverageProblems } from "./fuzz/Endpoints.js"
import {
  adminWithToken,
  badCredentials,
  consoleWithSession,
  dashboardWithSession,
  everything,
  publicWithKey
} from "./fuzz/Families.js"
import { badFraming } from "./fuzz/Framing.js"
import { withNoise } from "./fuzz/Requests.js"
import { spellingsAnswerAlike, spellingsCountTowardTheLimits, spellingsKeepTheBodyLimit } from "./fuzz/Spellings.js"
import { adminView, fingerprint, Fixture, fuzzLayer } from "./fuzz/World.js"

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

const UNLIMITED = {
  BUNDLES_RATE_LIMITS: "all=1000000,orders=1000000,balance=1000000",
  BUNDLES_AUTH_FAILURE_LIMIT: "1000000",
  BUNDLES_DASHBOARD_LIMITS: "dashboard=1000000,access=1000000"
}

const TIMEOUT = 180_000

for (const target of targets) {
  describe(`fuzzing on ${target.name}`, () => {
    layer(fuzzLayer(target, UNLIMITED), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("every endpoint of both APIs has its fuzzing data, and all fuzzing data names an endpoint", () =>
        Effect.gen(function*() {
          assert.deepStrictEqual(coverageProblems(yield* Fixture), [])
        }))

      it.effect(
        "public API with a valid key: wrong methods, unknown paths, bad parameters, queries and bodies, refused orders",
        () => fuzz((w) => withNoise(publicWithKey(w)), 250),
        TIMEOUT
      )

      it.effect(
        "public API with a missing, malformed, revoked or suspended key: 401",
        () => fuzz((w) => withNoise(badCredentials(w, "public")), 120),
        TIMEOUT
      )

      it.effect(
        "admin API with the token: wrong methods, unknown paths, bad parameters, queries and bodies, refused changes",
        () => fuzz((w) => withNoise(adminWithToken(w)), 300),
        TIMEOUT
      )

      it.effect(
        "admin API with a missing or wrong token: 401",
        () => fuzz((w) => withNoise(badCredentials(w, "admin")), 120),
        TIMEOUT
      )

      it.effect(
        "dashboard API with a live session: wrong methods, unknown paths, bad parameters, queries, bodies, no CSRF token",
        () => fuzz((w) => withNoise(dashboardWithSession(w)), 300),
        TIMEOUT
      )

      it.effect(
        "dashboard API without a live session, or with another API's credentials: 401",
        () => fuzz((w) => withNoise(badCredentials(w, "dashboard")), 120),
        TIMEOUT
      )

      it.effect(
        "console API and admin API with an operator session: wrong methods, unknown paths, bad input, no CSRF token",
        () => fuzz((w) => withNoise(consoleWithSession(w)), 250),
        TIMEOUT
      )

      it.effect(
        "console API without a live operator session, or with another area's credentials: 401",
        () => fuzz((w) => withNoise(badCredentials(w, "console")), 100),
        TIMEOUT
      )

      it.effect(
        "every payload endpoint: wrong content types, malformed, too deep and oversized bodies",
        () => fuzz((w) => withNoise(badFraming(w)), 150),
        TIMEOUT
      )

      it.effect(
        "every endpoint's path spelled otherwise (case, percent-encoding, slashes, dot segments): the same answer or 404",
        () => spellingsAnswerAlike(150),
        TIMEOUT
      )

      it.effect(
        "a body over the limit sent to a spelling of a payload endpoint's path: 404 or 413 before it is all sent",
        () => spellingsKeepTheBodyLimit(30),
        TIMEOUT
      )

      it.effect("after all of it, the admin API shows the same balances, audit, ledger, orders, keys and catalogue", () =>
        Effect.gen(function*() {
          const w = yield* Fixture
          const view = yield* adminView
          assert.isTrue(view.audit.ok, JSON.stringify(view.audit))
          assert.deepStrictEqual(view, w.view)
          assert.deepStrictEqual(yield* fingerprint(w.sql), w.baseline)
        }))
    })
  })

  describe(`fuzzing at the default rate limits on ${target.name}`, () => {
    layer(fuzzLayer(target, {}), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect(
        "every kind of bad request, with 429 a valid answer once a limit is reached",
        () => fuzz((w) => withNoise(everything(w)), 200, { allow429: true }),
        TIMEOUT
      )
    })
  })

  // A server of its own: the other properties at the default limits use up this address's failed-authentication quota.
  describe(`path spellings at the default rate limits on ${target.name}`, () => {
    layer(fuzzLayer(target, {}), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect(
        "spellings of GET /balance count toward its rate limit as the canonical path does",
        () => spellingsCountTowardTheLimits(3),
        TIMEOUT
      )
    })
  })
}
