/**
 * Password hashing with scrypt, a memory-hard key derivation: N = 2^15, r = 8, p = 1 (32 MiB
 * and roughly 50 to 100 ms per hash on a server core), a 16-byte random salt, a 32-byte key.
 * The parameters are stored with each hash (`scrypt$N$r$p$salt$key`, base64url), so they can
 * be raised later and old hashes still verify. Comparison is constant-time.
 */
import { Effect } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

const N = 2 ** 15
const R = 8
const P = 1
const KEY_LENGTH = 32

const derive = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { N: n, r, p, maxmem: 256 * n * r }, (error, key) => {
      resume(error ? Effect.die(error) : Effect.succeed(key))
    })
  })

/** A new hash of `password`. */
export const hash = (password: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, N, R, P)
    return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`
  }).pipe(Effect.withSpan("Passwords.hash"))

/** True when `password` matches `stored`; false for a hash it cannot read. */
export const verify = (password: string, stored: string): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const [scheme, n, r, p, salt, key] = stored.split("$")
    if (scheme !== "scrypt" || key === undefined) return false
    const expected = Buffer.from(key, "base64url")
    const actual = yield* derive(password, Buffer.from(salt!, "base64url"), Number(n), Number(r), Number(p))
    return actual.length === expected.length && timingSafeEqual(actual, expected)
  }).pipe(Effect.withSpan("Passwords.verify"))
