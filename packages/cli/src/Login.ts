/**
 * `login` and `logout`: the API key kept in a config file readable by its owner only. The key
 * is checked against the API (GET /balance) before it is saved, and never printed back whole.
 */
import { BundlesClient, formatGhs } from "@databundle/client"
import { fail, problem } from "@databundle/terminal/Failure"
import { Tty } from "@databundle/terminal/Tty"
import { Effect, Option, Redacted } from "effect"
import * as Config from "./Config.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

/** `bundles login [--api-key K] [--base-url U]`: asks for the key when not given (or reads it from stdin). */
export const login = (options: Config.Shared) =>
  Effect.gen(function*() {
    const tty = yield* Tty
    const file = yield* Config.configPath
    const given = yield* Config.given(options)
    const saved = yield* Effect.option(Config.readSaved(file))
    const baseUrl = Option.getOrElse(
      Option.orElse(given.baseUrl, () => Option.map(Option.flatten(saved), (s) => s.base_url)),
      () => Config.DEFAULT_BASE_URL
    )
    const typed = Option.isSome(given.apiKey) ? Option.none() : yield* tty.askHidden(`API key for ${baseUrl}: `)
    const apiKey = Option.orElse(given.apiKey, () =>
      Option.map(Option.filter(typed, (key) => key.trim() !== ""), (key) => Redacted.make(key.trim())))
    if (Option.isNone(apiKey)) {
      return yield* fail(options.json, problem("No API key given: pass --api-key, set BUNDLES_API_KEY, or type it"))
    }
    const connection: Config.Connection = { baseUrl, apiKey: apiKey.value }
    const balance = yield* Session.runWith(options.json, connection, () =>
      Effect.gen(function*() {
        const wallets = yield* (yield* BundlesClient).balance()
        yield* Config.save(file, { base_url: baseUrl, api_key: Redacted.value(connection.apiKey) })
        return wallets
      }))
    const key = Config.keyHint(connection.apiKey)
    if (options.json) {
      return yield* Output.printJson({ success: true, base_url: baseUrl, key, config_file: file, balance })
    }
    yield* Output.printLines([
      `Logged in to ${baseUrl} (key ${key}).`,
      `Saved to ${file} (readable by you only).`,
      `Main wallet: ${formatGhs(balance.main)}`
    ])
  })

/** `bundles logout`: removes the saved login. */
export const logout = (options: { readonly json: boolean }) =>
  Effect.gen(function*() {
    const file = yield* Config.configPath
    const removed = yield* Config.remove(file).pipe(Effect.catchAll((error) => fail(options.json, error)))
    if (options.json) return yield* Output.printJson({ success: true, config_file: file, removed })
    yield* Output.printLines([removed ? `Logged out: removed ${file}.` : `Not logged in (no ${file}).`])
  })
