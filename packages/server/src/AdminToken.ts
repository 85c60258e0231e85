/**
 * The admin token: `BUNDLES_ADMIN_TOKEN` when set, else a random token generated on first
 * start into the data directory (readable by its owner only), where the admin CLI finds it.
 */
import { Effect, Option, Redacted } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as ServerConfig from "./ServerConfig.js"

/** The token file inside a data directory. */
export const tokenFile = (dir: string) => path.join(dir, "admin-token")

/** Reads the token from the data directory, if one was written there. */
export const readFromDataDir = (dir: string) =>
  Effect.promise(() => fs.readFile(tokenFile(dir), "utf8").then((s) => s.trim(), () => "")).pipe(
    Effect.map((token) => token.length > 0 ? Option.some(Redacted.make(token)) : Option.none())
  )

/** The configured token, or the data directory's, generating and writing it the first time. */
export const resolve = Effect.gen(function*() {
  const configured = yield* ServerConfig.adminToken
  if (Option.isSome(configured)) return configured.value
  const dir = yield* ServerConfig.dataDir
  const existing = yield* readFromDataDir(dir)
  if (Option.isSome(existing)) return existing.value
  const token = `adm_${randomBytes(32).toString("base64url")}`
  yield* Effect.promise(async () => {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 })
    // wx: if another process wrote it first, keep theirs.
    await fs.writeFile(tokenFile(dir), `${token}\n`, { mode: 0o600, flag: "wx" }).catch(() => undefined)
  })
  return Option.getOrThrow(yield* readFromDataDir(dir))
})

const digest = (value: string) => createHash("sha256").update(value).digest()

/** Compares two secrets in constant time (hashing first makes the lengths equal). */
export const secretsEqual = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b))
