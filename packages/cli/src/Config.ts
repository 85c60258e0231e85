/**
 * Where the API key and base URL come from: `--api-key`/`--base-url`, else `BUNDLES_API_KEY`/
 * `BUNDLES_BASE_URL`, else the config file `bundles login` wrote. The file's key is used only
 * for the file's own base URL, so pointing the CLI at another server never sends it there.
 */
import { type Problem, problem } from "@databundle/terminal/Failure"
import type { Tty } from "@databundle/terminal/Tty"
import { FileSystem, Path } from "@effect/platform"
import { Config, Effect, Either, Option, Redacted, Schema } from "effect"
import * as os from "node:os"
import * as Output from "./Output.js"
import { DEFAULT_BASE_URL, type Shared } from "./SharedOptions.js"

/** A saved login, as the config file holds it. */
export const Saved = Schema.Struct({ base_url: Schema.String, api_key: Schema.String })

/** The type of `Saved`. */
export type Saved = typeof Saved.Type

export { DEFAULT_BASE_URL, type Shared }

/** What a command connects with. */
export interface Connection {
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
}

const nonEmpty = <A extends string | Redacted.Redacted>(config: Config.Config<A>) =>
  Config.option(config).pipe(
    Config.map(Option.filter((value) => (typeof value === "string" ? value : Redacted.value(value)).trim() !== ""))
  )

/** `BUNDLES_API_KEY` and `BUNDLES_BASE_URL`, when set and not empty. */
const environment = Config.all({
  apiKey: nonEmpty(Config.redacted("BUNDLES_API_KEY")),
  baseUrl: nonEmpty(Config.string("BUNDLES_BASE_URL"))
})

/**
 * The config file: `BUNDLES_CONFIG`, else `$XDG_CONFIG_HOME/bundles/config.json`, else
 * `~/.config/bundles/config.json`.
 */
export const configPath: Effect.Effect<string, never, Path.Path> = Effect.gen(function*() {
  const path = yield* Path.Path
  const env = yield* Config.all({
    file: nonEmpty(Config.string("BUNDLES_CONFIG")),
    xdg: nonEmpty(Config.string("XDG_CONFIG_HOME")),
    home: nonEmpty(Config.string("HOME"))
  }).pipe(Effect.orDie)
  if (Option.isSome(env.file)) return path.resolve(env.file.value)
  // The XDG spec ignores a relative XDG_CONFIG_HOME.
  const base = Option.filter(env.xdg, path.isAbsolute).pipe(
    Option.getOrElse(() => path.join(Option.getOrElse(env.home, () => os.homedir()), ".config"))
  )
  return path.join(base, "bundles", "config.json")
})

/** The same server: equal origins and paths, with or without the API's `/api/v1`. */
export const sameServer = (a: string, b: string): boolean => {
  const normal = (text: string) => {
    try {
      const url = new URL(text)
      return `${url.origin}${url.pathname.replace(/\/+$/, "").replace(/\/api\/v1$/, "")}`
    } catch {
      return text
    }
  }
  return normal(a) === normal(b)
}

/**
 * How an API key is shown: its first characters only, like the server's display prefix (the
 * mode of a `dbk_live_` or `dbk_test_` key and 8 characters, else 12 characters).
 */
export const keyHint = (key: Redacted.Redacted<string> | string): string => {
  const text = typeof key === "string" ? key : Redacted.value(key)
  const shown = /^dbk_(live|test)_/.test(text) ? 17 : 12
  return text.length >= 20 ? `${text.slice(0, shown)}…` : "…"
}

/** Reads the saved login; none when there is no file. Warns when others can read it. */
export const readSaved = (file: string): Effect.Effect<Option.Option<Saved>, Problem, FileSystem.FileSystem | Tty> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* Effect.either(fs.stat(file))
    if (Either.isLeft(info)) {
      if (info.left._tag === "SystemError" && info.left.reason === "NotFound") return Option.none()
      return yield* Effect.fail(problem(`Cannot read the config file ${file}: ${info.left.message}`))
    }
    if ((info.right.mode & 0o077) !== 0) {
      yield* Output.warn(
        `the config file ${file} can be read by others (mode ${
          (info.right.mode & 0o777).toString(8)
        }): run chmod 600 ${file}`
      )
    }
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => problem(`Cannot read the config file ${file}: ${error.message}`))
    )
    const saved = yield* Schema.decodeUnknown(Schema.parseJson(Saved))(text).pipe(
      Effect.mapError(() =>
        problem(`The config file ${file} is not a saved login ({ "base_url", "api_key" }): run bundles login again`)
      )
    )
    return Option.some(saved)
  })

/**
 * Writes a login readable by its owner only: the file 0600, written whole and renamed into
 * place, and its directory 0700 when this creates it.
 */
export const save = (file: string, saved: Saved): Effect.Effect<void, Problem, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const temporary = `${file}.${process.pid}.tmp`
    yield* fs.makeDirectory(path.dirname(file), { recursive: true, mode: 0o700 })
    yield* fs.writeFileString(temporary, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 })
    // The mode of a new file is masked by the umask; chmod makes it exact, before the key is in place.
    yield* fs.chmod(temporary, 0o600)
    yield* fs.rename(temporary, file)
  }).pipe(Effect.mapError((error) => problem(`Cannot write the config file ${file}: ${error.message}`)))

/** Removes the saved login; false when there was none. */
export const remove = (file: string): Effect.Effect<boolean, Problem, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(file))) return false
    yield* fs.remove(file)
    return true
  }).pipe(Effect.mapError((error) => problem(`Cannot remove the config file ${file}: ${error.message}`)))

/** The key and base URL given by flags, else by the environment. */
export const given = (options: Shared) =>
  Effect.map(Effect.orDie(environment), (env) => ({
    apiKey: Option.orElse(options.apiKey, () => env.apiKey),
    baseUrl: Option.orElse(options.baseUrl, () => env.baseUrl)
  }))

/** The base URL and key a command uses: flags, else the environment, else the saved login. */
export const resolve = (
  options: Shared
): Effect.Effect<Connection, Problem, FileSystem.FileSystem | Path.Path | Tty> =>
  Effect.gen(function*() {
    const { apiKey: givenKey, baseUrl: givenUrl } = yield* given(options)
    if (Option.isSome(givenUrl) && Option.isSome(givenKey)) return { baseUrl: givenUrl.value, apiKey: givenKey.value }
    const file = yield* configPath
    const saved = yield* readSaved(file)
    const baseUrl = Option.getOrElse(
      Option.orElse(givenUrl, () => Option.map(saved, (s) => s.base_url)),
      () => DEFAULT_BASE_URL
    )
    if (Option.isSome(givenKey)) return { baseUrl, apiKey: givenKey.value }
    if (Option.isSome(saved) && sameServer(saved.value.base_url, baseUrl)) {
      return { baseUrl, apiKey: Redacted.make(saved.value.api_key) }
    }
    if (Option.isSome(saved)) {
      return yield* Effect.fail(
        problem(
          `No API key for ${baseUrl}: the saved login (${file}) is for ${saved.value.base_url}; ` +
            "pass --api-key or set BUNDLES_API_KEY"
        )
      )
    }
    return yield* Effect.fail(
      problem("No API key: pass --api-key, set BUNDLES_API_KEY, or run `bundles login` to save one")
    )
  })
