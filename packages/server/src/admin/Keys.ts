/**
 * `admin keys`: an account's API keys. A new key is shown once, here, and never again.
 */
import { AdminApi, ApiKey } from "@databundle/contract"
import { Command, Options } from "@effect/cli"
import { Option } from "effect"
import { execute, request } from "./Call.js"
import { accountIdOption, checked, decodeWith, modeOption, shared } from "./Options.js"
import { date } from "./Text.js"

const keysCreate = Command.make("create", {
  ...shared,
  account: accountIdOption,
  mode: modeOption("test: a key on the account's test wallet that only ever reaches the simulator (default live)")
}, (options) =>
  execute(
    options,
    request(
      options,
      (client) =>
        client.apiKeys.create({
          path: { account_id: options.account },
          urlParams: Option.match(options.mode, { onNone: () => ({}), onSome: (mode) => ({ mode }) })
        })
    ),
    AdminApi.ApiKeyCreated,
    (key) => [
      `${
        key.mode === "test" ? "Test" : "Live"
      } API key ${key.id} created for account ${options.account} (prefix ${key.prefix}):`,
      "",
      `  ${key.api_key}`,
      "",
      "Store it now: it will not be shown again."
    ]
  )).pipe(Command.withDescription("Create an API key; the key is shown only once"))

const keysRevoke = Command.make("revoke", {
  ...shared,
  account: accountIdOption,
  key: Options.integer("key").pipe(
    Options.withDescription("The key's id (not the key itself)"),
    checked("key", decodeWith(ApiKey.ApiKeyId))
  )
}, (options) =>
  execute(
    options,
    request(options, (client) => client.apiKeys.revoke({ path: { account_id: options.account, key_id: options.key } })),
    AdminApi.ApiKeyRevoked,
    ({ key }) => [
      `API key ${key.id} (prefix ${key.prefix}) of account ${options.account} revoked${
        key.revoked_at === null ? "" : ` at ${date(key.revoked_at)}`
      }.`
    ]
  )).pipe(Command.withDescription("Revoke an API key"))

/** `admin keys`: create, revoke. */
export const keys = Command.make("keys").pipe(
  Command.withDescription("API keys of an account"),
  Command.withSubcommands([keysCreate, keysRevoke])
)
