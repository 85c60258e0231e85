/**
 * The options every `bundles` command takes, after the whole command, and their values. Below
 * the command tree (`Cli.ts`) so the commands' modules read them without importing the tree.
 * On the start-up path: deep imports only.
 */
import { Options } from "@effect/cli"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

/** Where the CLI looks for the server when nothing says otherwise: the server's own default. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080"

/** The options every command takes, after the whole command. */
export const shared = {
  json: Options.boolean("json").pipe(
    Options.withDescription("Print one JSON document on stdout and nothing else there")
  ),
  apiKey: Options.redacted("api-key").pipe(
    Options.withPseudoName("KEY"),
    Options.withDescription("The account's API key (env BUNDLES_API_KEY, else the key saved by bundles login)"),
    Options.optional
  ),
  baseUrl: Options.text("base-url").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription(`The API's address (env BUNDLES_BASE_URL, else the saved one, else ${DEFAULT_BASE_URL})`),
    Options.optional
  )
}

/** The values of the shared options. */
export interface Shared {
  readonly json: boolean
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly baseUrl: Option.Option<string>
}
