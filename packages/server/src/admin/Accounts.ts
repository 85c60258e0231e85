/**
 * `admin accounts`: reseller accounts, with their balances, limits, webhook and API keys.
 */
import { Account, AdminApi, ApiKey, RateLimit, type Wallet } from "@databundle/contract"
import * as Output from "@databundle/terminal/Output"
import { Command, Options } from "@effect/cli"
import { Effect, Either, Option } from "effect"
import type * as AdminClient from "../AdminClient.js"
import { execute, request } from "./Call.js"
import {
  accountIdArg,
  checked,
  decodeWith,
  limitsOption,
  listing,
  nameOption,
  priceGroupOption,
  shared,
  type UrlParamsOf
} from "./Options.js"
import { date, ghs, orNone, pageLine } from "./Text.js"

const balanceText = (balance: Wallet.Balance) =>
  `main ${ghs(balance.main)}, referral ${ghs(balance.referral)}, agent ${ghs(balance.agent)}`

const limitsText = (limits: RateLimit.RateLimits) => {
  const set = RateLimit.RATE_LIMIT_SCOPES.flatMap((scope) =>
    limits[scope] === undefined ? [] : [`${scope}=${limits[scope]}/min`]
  )
  return set.length === 0 ? "server defaults" : `${set.join(", ")} (other scopes: server defaults)`
}

const accountText = (account: ApiKey.AccountDetail, s: Output.Style) => [
  `Account ${account.id}: ${account.name}`,
  ...Output.fields([
    ["status", Output.status(account.status, s)],
    ["price group", orNone(account.price_group, "none (base prices)")],
    ["balance", balanceText(account.balance)],
    ["rate limits", limitsText(account.limits)],
    ["webhook url", orNone(account.webhook_url)],
    ["agent", account.agent_id === null ? "none" : `account ${account.agent_id}`],
    ["referred by", account.referred_by === null ? "none" : `account ${account.referred_by}`],
    ["referral code", account.referral_code],
    [
      "webhook secret",
      account.webhook_secret_prefix === null ? "none" : `${account.webhook_secret_prefix}… (its account reads it)`
    ],
    ["created", date(account.created_at)]
  ]),
  ...(account.keys.length === 0 ? ["No API keys."] : [
    "API keys:",
    ...Output.table<ApiKey.ApiKeyView>(
      [
        { title: "ID", value: (key) => String(key.id), right: true },
        { title: "PREFIX", value: (key) => key.prefix },
        { title: "MODE", value: (key) => key.mode },
        { title: "CREATED", value: (key) => date(key.created_at) },
        { title: "LAST USED", value: (key) => key.last_used_at === null ? "never" : date(key.last_used_at) },
        { title: "REVOKED", value: (key) => key.revoked_at === null ? "-" : date(key.revoked_at) }
      ],
      account.keys,
      s
    ).map((line) => `  ${line}`)
  ])
]

const accountsCreate = Command.make("create", { ...shared, name: nameOption, priceGroup: priceGroupOption(false) }, (
  options
) =>
  execute(
    options,
    request(options, (client) =>
      client.accounts.create({
        payload: {
          name: options.name,
          ...Option.match(options.priceGroup, { onNone: () => ({}), onSome: (price_group) => ({ price_group }) })
        }
      })),
    AdminApi.AccountCreated,
    (account, s) => [
      `Account ${account.id} created.`,
      ...Output.fields([
        ["name", account.name],
        ["price group", orNone(account.price_group, "none (base prices)")],
        ["status", Output.status(account.status, s)],
        ["created", date(account.created_at)]
      ])
    ]
  )).pipe(Command.withDescription("Register an account"))

const accountsListing = listing<UrlParamsOf<AdminClient.Client["accounts"]["list"]>>(
  AdminApi.AccountsGroup.endpoints.list
)

const accountsList = Command.make("list", {
  ...shared,
  status: Options.choice("status", Account.AccountStatus.literals).pipe(
    Options.withDescription("Only accounts with this status"),
    Options.optional
  ),
  ...accountsListing.options
}, (options) =>
  execute(
    options,
    accountsListing.params(options, { status: options.status }).pipe(
      Effect.flatMap((urlParams) => request(options, (client) => client.accounts.list({ urlParams })))
    ),
    AdminApi.AccountsPage,
    ({ accounts, pagination }, s) =>
      accounts.length === 0 ? ["No accounts."] : [
        ...Output.table<Account.AccountSummary>(
          [
            { title: "ID", value: (a) => String(a.id), right: true },
            { title: "NAME", value: (a) => a.name },
            { title: "STATUS", value: (a) => Output.status(a.status, s) },
            { title: "PRICE GROUP", value: (a) => orNone(a.price_group, "-") },
            { title: "MAIN", value: (a) => ghs(a.balance.main), right: true },
            { title: "REFERRAL", value: (a) => ghs(a.balance.referral), right: true },
            { title: "AGENT", value: (a) => ghs(a.balance.agent), right: true }
          ],
          accounts,
          s
        ),
        pageLine(pagination, "account")
      ]
  )).pipe(Command.withDescription("List accounts with their balances"))

const accountsShow = Command.make("show", { ...shared, id: accountIdArg }, (options) =>
  execute(
    options,
    request(options, (client) => client.accounts.show({ path: { account_id: options.id } })),
    AdminApi.AccountResponse,
    accountText
  )).pipe(Command.withDescription("Show an account: balances, limits, webhook, API keys"))

/** `--agent ID|none` and `--referred-by ID|none`: another account, or none to remove it. */
const earnerOption = (name: string, pseudo: string, description: string) =>
  Options.text(name).pipe(
    Options.withPseudoName(`${pseudo}|none`),
    Options.withDescription(description),
    checked(
      name,
      (text: string) =>
        text === "none" ? Either.right(null) : /^\d{1,10}$/.test(text)
          ? decodeWith(Account.AccountId)(Number(text))
          : Either.left("must be an account id or none")
    ),
    Options.optional
  )

const accountsUpdate = Command.make("update", {
  ...shared,
  id: accountIdArg,
  name: nameOption.pipe(Options.optional),
  priceGroup: priceGroupOption(true),
  status: Options.choice("status", Account.AccountStatus.literals).pipe(
    Options.withDescription("Suspend or reactivate the account"),
    Options.optional
  ),
  webhookUrl: Options.text("webhook-url").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription("Where order updates are posted, or none"),
    checked(
      "webhook-url",
      (text: string) => text === "none" ? Either.right(null) : decodeWith(Account.WebhookUrl)(text)
    ),
    Options.optional
  ),
  rotateWebhookSecret: Options.boolean("rotate-webhook-secret").pipe(
    Options.withDescription("Replace the secret that signs webhook deliveries")
  ),
  limits: limitsOption,
  agent: earnerOption("agent", "AGENT_ID", "The agent the account sells under (its agent wallet earns), or none"),
  referredBy: earnerOption(
    "referred-by",
    "ACCOUNT_ID",
    "The account that referred it (its referral wallet earns), or none"
  )
}, (options) => {
  const set = <K extends string, A>(key: K, value: Option.Option<A>) =>
    Option.match(value, { onNone: () => ({}), onSome: (a) => ({ [key]: a } as { [P in K]: A }) })
  const payload: Account.UpdateAccountPayload = {
    ...set("name", options.name),
    ...set("price_group", options.priceGroup),
    ...set("status", options.status),
    ...set("webhook_url", options.webhookUrl),
    ...(options.rotateWebhookSecret ? { rotate_webhook_secret: true } : {}),
    ...set("limits", options.limits),
    ...set("agent_id", options.agent),
    ...set("referred_by", options.referredBy)
  }
  return execute(
    options,
    request(options, (client) => client.accounts.update({ path: { account_id: options.id }, payload })),
    AdminApi.AccountResponse,
    (account, s) => [`Account ${account.id} updated.`, ...accountText(account, s)]
  )
}).pipe(
  Command.withDescription("Change an account's name, price group, status, webhook, rate limits, agent or referrer")
)

/** `admin accounts`: create, list, show, update. */
export const accounts = Command.make("accounts").pipe(
  Command.withDescription("Reseller accounts"),
  Command.withSubcommands([accountsCreate, accountsList, accountsShow, accountsUpdate])
)
