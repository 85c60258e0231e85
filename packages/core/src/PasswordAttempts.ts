/**
 * Attempts at a password (a sign-in, the current password of a change) counted before they
 * are judged. Each attempt takes a slot of every limit it falls under, atomically, before the
 * password is looked at, so a burst of guesses sent at once is held to the limit as surely as
 * guesses sent one by one; an attempt refused by any limit takes none and is answered 429. A
 * right password gives its slots back: only failures are counted.
 *
 * Sign-in counts per email address and client address together (`PAIR_LIMIT`) and per email
 * address from everywhere (`EMAIL_LIMIT`). A browser the user signed in with before (a known
 * browser, `KnownBrowsers`) counts on its own instead (`PAIR_LIMIT` per email and browser), so
 * guesses from elsewhere cannot lock its owner out.
 */
import { ApiError } from "@databundle/contract"
import { Effect, Exit, Option } from "effect"
import type { KnownBrowsers, Principal } from "./KnownBrowsers.js"
import * as Passwords from "./Passwords.js"
import { type Quota, RateLimiter } from "./RateLimiter.js"

/** Sign-in failures allowed per minute for one email address from one client address (or one known browser). */
export const PAIR_LIMIT = 5

/** Sign-in failures allowed per minute for one email address from everywhere but its known browsers. */
export const EMAIL_LIMIT = 20

/** Wrong current passwords allowed per minute for one signed-in user or operator. */
export const CHECK_LIMIT = 5

/** One limit an attempt takes a slot of: its subject, its limit, and what a refusal says. */
export interface Slot {
  readonly subject: string
  readonly limit: number
  /** Why it was refused, completed with when to retry. */
  readonly refusal: string
}

/**
 * The limits of a sign-in to `area` (the dashboard's and the console's are counted apart):
 * per email from a known browser when it comes from one, else per email and client address
 * and per email.
 */
const signInSlots = (
  area: "dashboard" | "console",
  email: string,
  from: { readonly address: string; readonly knownBrowser?: string | undefined }
): ReadonlyArray<Slot> => {
  const kind = area === "dashboard" ? "signin" : "console-signin"
  return from.knownBrowser !== undefined
    ? [{
      subject: `${kind}:${email}|browser:${from.knownBrowser}`,
      limit: PAIR_LIMIT,
      refusal: "Too many failed sign-ins for this email address from this browser"
    }]
    : [
      {
        subject: `${kind}:${email}|${from.address}`,
        limit: PAIR_LIMIT,
        refusal: "Too many failed sign-ins for this email address from your network"
      },
      {
        subject: `${kind}:${email}`,
        limit: EMAIL_LIMIT,
        refusal: "Too many failed sign-ins for this email address. A browser you signed in with before " +
          "still can, and resetting the password makes this one such a browser"
      }
    ]
}

/** The limit of checks of a signed-in principal's current password (`user:12`, `operator:3`). */
export const checkSlots = (principal: string): ReadonlyArray<Slot> => [{
  subject: `password-check:${principal}`,
  limit: CHECK_LIMIT,
  refusal: "Too many wrong current passwords"
}]

const quotasOf = (slot: Slot): ReadonlyArray<Quota> => [{ scope: "auth", limit: slot.limit }]

/**
 * Runs `judge` (which fails when the password is wrong) after taking a slot of every limit in
 * `slots`; past any of them a 429, without running it. The slots are given back when it
 * succeeds, and kept when it fails or is cut short (a client that hangs up still spent its guess).
 */
export const attempt = <A, E, R>(
  slots: ReadonlyArray<Slot>,
  judge: Effect.Effect<A, E, R>
): Effect.Effect<A, E | ApiError.RateLimited, R | RateLimiter> =>
  Effect.flatMap(RateLimiter, (limiter) => {
    const giveBack = (taken: ReadonlyArray<Slot>) =>
      Effect.forEach(taken, (slot) => limiter.release(slot.subject, quotasOf(slot)), { discard: true })
    const take = Effect.gen(function*() {
      const taken: Array<Slot> = []
      for (const slot of slots) {
        const decision = yield* limiter.consume(slot.subject, quotasOf(slot))
        if (!decision.allowed) {
          yield* giveBack(taken)
          return yield* new ApiError.RateLimited({
            message: `${slot.refusal}; retry in ${decision.retryAfterSeconds} s`,
            retry_after: decision.retryAfterSeconds
          })
        }
        taken.push(slot)
      }
    })
    return Effect.zipRight(
      take,
      Effect.onExit(judge, (exit) => Exit.isSuccess(exit) ? giveBack(slots) : Effect.void)
    )
  })

/** Who signs in with an email address, as `signIn` checks them. */
export interface Candidate<A> {
  readonly principal: Principal
  readonly passwordHash: string
  /** False for one who may not sign in (a disabled operator): answered as a wrong password. */
  readonly usable: boolean
  readonly value: A
}

/**
 * A sign-in's password check to `area`, counted as above: from a known browser of the
 * candidate (`from.browser`, its cookie) per email and browser, else per email and address and
 * per email. The candidate when the password is right; a 401 when it is wrong, nobody signs in
 * with the email (`decoy`'s hash is checked then, so timing tells nothing) or the candidate
 * may not sign in; a 429 past a limit.
 */
export const signIn = <A>(
  browsers: KnownBrowsers,
  area: "dashboard" | "console",
  email: string,
  password: string,
  from: { readonly address: string; readonly browser?: string | undefined },
  candidate: Candidate<A> | undefined,
  decoy: Effect.Effect<string>
) =>
  Effect.gen(function*() {
    const knownBrowser = candidate === undefined
      ? Option.none<string>()
      : yield* browsers.recognize(from.browser, candidate.principal)
    const slots = signInSlots(area, email, { address: from.address, knownBrowser: Option.getOrUndefined(knownBrowser) })
    return yield* attempt(
      slots,
      Effect.gen(function*() {
        const valid = yield* Passwords.verify(password, candidate?.passwordHash ?? (yield* decoy))
        if (candidate === undefined || !valid || !candidate.usable) {
          return yield* new ApiError.Unauthorized({ message: "Wrong email address or password" })
        }
        return candidate.value
      })
    )
  })
