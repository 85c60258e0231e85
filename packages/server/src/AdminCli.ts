/**
 * The operator's `admin` commands: each leaf is one call of the admin API through the client
 * derived from the contract. `--json` prints the call's response body; otherwise the output
 * is text for people. Every leaf takes `--json`, `--url` and `--token` after the whole command.
 */
import { Account, AdminApi, ApiError, ApiKey, Catalog, Money, Order, RateLimit, Wallet } from "@databundle/contract"
import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { FileSystem, HttpClientError } from "@effect/platform"
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Console, Data, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import type { Redacted } from "effect"
import type * as AST from "effect/SchemaAST"
import * as AdminClient from "./AdminClient.js"
import * as Logging from "./Logging.js"

/**
 * A failed admin command whose message is already on stderr (and, with `--json`, its body on
 * stdout): the binary exits with status 1 without printing it again.
 */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}

// ---------------------------------------------------------------------------------------------
// Options and their checks: a value the server would refuse is a usage error here (exit 2)
// ---------------------------------------------------------------------------------------------

const usage = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))

const formatPath = (path: ReadonlyArray<PropertyKey>) =>
  path.map((key, i) => typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`).join("")

/** The message of the first problem of a ParseError. */
const firstIssue = (error: ParseResult.ParseError) => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issue === undefined ? error.message : issue.message
}

/** Decodes a value with a schema of the contract, failing with the schema's message. */
const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (input: unknown): Either.Either<A, string> => Either.mapLeft(decode(input), firstIssue)
}

/** Checks a decoded value against a schema of the contract (its refinements included). */
const validateWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const validate = Schema.validateEither(schema)
  return (value: A): Either.Either<A, string> => Either.mapLeft(validate(value), firstIssue)
}

/** Checks an option's value, turning a failed check into a usage error naming the option. */
const checked = <A, B>(name: string, check: (a: A) => Either.Either<B, string>) =>
  Options.mapEffect((a: A) => Either.mapLeft(check(a), (message) => usage(`--${name} ${message}`)))

const accountIdOption = Options.integer("account").pipe(
  Options.withDescription("The account's id"),
  checked("account", decodeWith(Account.AccountId))
)

const accountIdArg = Args.integer({ name: "ID" }).pipe(
  Args.withDescription("The account's id"),
  Args.mapEffect((n) => Either.mapLeft(decodeWith(Account.AccountId)(n), (message) => HelpDoc.p(`ID ${message}`)))
)

const orderNumberArg = Args.text({ name: "ORDER_NUMBER" }).pipe(Args.withDescription("The order's number (ORD-...)"))

const walletOption = Options.choice("wallet", Wallet.WalletKind.literals).pipe(
  Options.withDescription("Which wallet (default main)"),
  Options.optional
)

const nameOption = Options.text("name").pipe(
  Options.withDescription("The account's name"),
  checked("name", decodeWith(AdminApi.CreateAccountPayload.fields.name))
)

const priceGroupOption = (none: boolean) =>
  Options.text("price-group").pipe(
    Options.withDescription(
      none ? "The account's price group, or none for base prices" : "The account's price group (default: base prices)"
    ),
    checked("price-group", (text: string) =>
      none && text === "none" ? Either.right(null) : decodeWith(Account.PriceGroupName)(text)),
    Options.optional
  )

/** `--amount`: cedis with at most two decimals, parsed without floats, checked by the payload's schema. */
const amountOption = (schema: Schema.Schema<bigint, number>, description: string) =>
  Options.text("amount").pipe(
    Options.withDescription(description),
    checked("amount", (text: string) => Either.flatMap(Money.parseCedis(text), validateWith(schema)))
  )

const noteOption = Options.text("note").pipe(
  Options.withDescription("Why the wallet moves; kept in the ledger"),
  checked("note", decodeWith(AdminApi.AdjustWalletPayload.fields.note))
)

/** An endpoint of the contract, for its URL parameters' schema. */
interface Endpoint {
  readonly urlParamsSchema: Option.Option<{ readonly ast: AST.AST }>
}

/** The URL parameters a client method takes. */
type UrlParamsOf<F extends (request: any) => any> = Parameters<F>[0] extends { readonly urlParams: infer U } ? U
  : never

/**
 * The listing options of an endpoint (`--page`, `--per-page`), checked by its URL parameters'
 * schema, and the builder of its URL parameters: given as on the wire (text) and decoded by that
 * schema, which applies the contract's defaults.
 */
const listing = <Params>(endpoint: Endpoint) => {
  const decode = Schema.decodeUnknownEither(
    Schema.make<Params, unknown>(Option.getOrThrow(endpoint.urlParamsSchema).ast)
  )
  const check = (option: string, param: string) => (n: number) =>
    Either.mapBoth(decode({ [param]: String(n) }), {
      onLeft: (error) => usage(`--${option} ${firstIssue(error)}`),
      onRight: () => n
    })
  return {
    options: {
      page: Options.integer("page").pipe(
        Options.withDescription("Page number (default 1)"),
        Options.mapEffect(check("page", "page")),
        Options.optional
      ),
      perPage: Options.integer("per-page").pipe(
        Options.withDescription("Entries per page"),
        Options.mapEffect(check("per-page", "per_page")),
        Options.optional
      )
    },
    params: (
      given: { readonly page: Option.Option<number>; readonly perPage: Option.Option<number> },
      filters: { readonly [param: string]: Option.Option<string | number> }
    ): Effect.Effect<Params, Problem> =>
      fromWire(decode, { ...filters, page: given.page, per_page: given.perPage }, String)
  }
}

/**
 * Builds a request part from its wire form with the contract's decoder (which applies the
 * contract's defaults); options that were not given are left out.
 */
const fromWire = <A>(
  decode: (input: unknown) => Either.Either<A, ParseResult.ParseError>,
  wire: { readonly [key: string]: Option.Option<unknown> },
  encode: (value: unknown) => unknown = (value) => value
): Effect.Effect<A, Problem> => {
  const present: { [key: string]: unknown } = {}
  for (const [key, value] of Object.entries(wire)) {
    if (Option.isSome(value)) present[key] = encode(value.value)
  }
  return Either.mapLeft(decode(present), (error) => problem(`Invalid request: ${firstIssue(error)}`))
}

/** `--limit SCOPE=N` (repeatable): a number sets an override, `default` removes it. */
const limitsOption = Options.text("limit").pipe(
  Options.withDescription(
    `SCOPE=N sets the account's per-minute limit of a scope (${
      RateLimit.RATE_LIMIT_SCOPES.join(", ")
    }); SCOPE=default removes it. Repeatable.`
  ),
  Options.repeated,
  Options.optional,
  Options.mapEffect((items) => parseLimits(Option.getOrElse(items, () => [])))
)

const parseLimits = (
  items: ReadonlyArray<string>
): Either.Either<Option.Option<RateLimit.RateLimitsPatch>, ValidationError.ValidationError> => {
  if (items.length === 0) return Either.right(Option.none())
  const patch: Record<string, number | null> = {}
  for (const item of items) {
    const at = item.indexOf("=")
    const scope = at < 0 ? item : item.slice(0, at)
    const value = at < 0 ? "" : item.slice(at + 1)
    if (!Schema.is(RateLimit.RateLimitScope)(scope)) {
      return Either.left(usage(`--limit ${item}: the scope must be one of ${RateLimit.RATE_LIMIT_SCOPES.join(", ")}`))
    }
    if (scope in patch) return Either.left(usage(`--limit ${scope} is given more than once`))
    if (value === "default") {
      patch[scope] = null
    } else if (/^\d+$/.test(value)) {
      patch[scope] = Number(value)
    } else {
      return Either.left(usage(`--limit ${item}: give ${scope}=N requests per minute, or ${scope}=default`))
    }
  }
  return Schema.decodeUnknownEither(RateLimit.RateLimitsPatch)(patch).pipe(
    Either.mapBoth({
      onLeft: (error) => {
        const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
        return usage(`--limit ${issue ? `${formatPath(issue.path)}: ${issue.message}` : error.message}`)
      },
      onRight: Option.some
    })
  )
}

/** What every leaf command accepts, after the whole command. */
const shared = {
  json: Options.boolean("json").pipe(
    Options.withDescription("Print the response body as one JSON document on stdout, and nothing else there")
  ),
  url: Options.text("url").pipe(
    Options.withDescription(`The server's base URL (env BUNDLES_ADMIN_URL, default ${AdminClient.DEFAULT_URL})`),
    checked(
      "url",
      (text: string) => Either.fromOption(AdminClient.parseUrl(text), () => "must be an http or https URL")
    ),
    Options.optional
  ),
  token: Options.redacted("token").pipe(
    Options.withDescription("The admin token (env BUNDLES_ADMIN_TOKEN, else the data directory's token file)"),
    Options.optional
  )
}

/** The values of the shared options. */
interface Shared {
  readonly json: boolean
  readonly url: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted>
}

// ---------------------------------------------------------------------------------------------
// Running a call: one request, its output, or its failure
// ---------------------------------------------------------------------------------------------

/** Why a command failed: the line(s) for stderr, and the body `--json` prints on stdout. */
interface Problem {
  readonly message: string
  readonly body: unknown
}

const problem = (message: string): Problem => ({ message, body: { success: false, message } })

/** The innermost reason of a transport failure (`ECONNREFUSED`, `fetch failed`, ...). */
const transportReason = (cause: unknown): string => {
  let reason = "no response"
  let current: unknown = cause
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown }
    if (typeof code === "string") return code
    if (typeof message === "string" && message.length > 0) reason = message
    current = (current as { cause?: unknown }).cause
  }
  return reason
}

/** Describes a failed call of the admin API at `url`. */
const describe = (url: string, error: unknown): Problem => {
  if (AdminClient.isApiFailure(error)) {
    const body = Schema.encodeUnknownEither(AdminClient.ApiFailure)(error)
    return { message: error.message, body: Either.getOrElse(body, () => problem(error.message).body) }
  }
  if (HttpClientError.isHttpClientError(error)) {
    return error._tag === "RequestError"
      ? problem(`Cannot reach the server at ${url} (${transportReason(error.cause)})`)
      : problem(`Unexpected response from the server at ${url}: HTTP ${error.response.status}`)
  }
  if (ParseResult.isParseError(error)) {
    return problem(`The server at ${url} answered with a body this CLI cannot read: ${firstIssue(error)}`)
  }
  return problem(`The call to ${url} failed: ${String(error)}`)
}

/** One call of the admin API, with the connection resolved from the shared options. */
const request = <A, E>(
  options: Shared,
  f: (client: AdminClient.Client) => Effect.Effect<A, E>
): Effect.Effect<A, Problem, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const connection = yield* AdminClient.resolve(options).pipe(Effect.mapError((error) => problem(error.message)))
    const client = yield* AdminClient.make(connection)
    return yield* f(client).pipe(Effect.mapError((error) => describe(connection.url, error)))
  })

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** Prints a failure (stderr, and its body on stdout with `--json`) and fails with `CliFailure`. */
const fail = (options: Shared, { body, message }: Problem) =>
  Effect.gen(function*() {
    yield* Console.error(message)
    if (options.json) yield* printJson(body)
    return yield* new CliFailure({ message })
  })

/**
 * Runs `program` and prints its result: with `--json`, the value encoded by the contract's
 * response schema; otherwise `text`. `verdict` may turn a successful call into a failure
 * (exit 1) after printing it, as an audit that found problems.
 */
const execute = <A, I, R>(
  options: Shared,
  program: Effect.Effect<A, Problem, R>,
  schema: Schema.Schema<A, I>,
  text: (value: A) => ReadonlyArray<string>,
  verdict: (value: A) => Option.Option<string> = () => Option.none()
): Effect.Effect<void, CliFailure, R> =>
  program.pipe(
    Effect.flatMap((value) =>
      Effect.gen(function*() {
        if (options.json) {
          const body = yield* Schema.encode(schema)(value).pipe(
            Effect.mapError((error) => problem(`Cannot encode the response: ${firstIssue(error)}`))
          )
          yield* printJson(body)
        } else {
          yield* Console.log(text(value).join("\n"))
        }
        return verdict(value)
      })
    ),
    Effect.matchEffect({
      onFailure: (failure) => fail(options, failure),
      onSuccess: Option.match({
        onNone: () => Effect.void,
        // The body is out already: only the reason goes to stderr.
        onSome: (message) => Effect.zipRight(Console.error(message), new CliFailure({ message }))
      })
    })
  )

// ---------------------------------------------------------------------------------------------
// Text output
// ---------------------------------------------------------------------------------------------

const ghs = Money.formatGhs

const date = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z")

const orNone = (value: string | null, none = "none") => value ?? none

const indented = (lines: ReadonlyArray<string>) => lines.map((line) => `  ${line}`)

/** Aligned `key  value` lines. */
const fields = (pairs: ReadonlyArray<readonly [string, string]>, indent = "  ") => {
  const width = Math.max(...pairs.map(([key]) => key.length))
  return pairs.map(([key, value]) => `${indent}${key.padEnd(width)}  ${value}`)
}

interface Column<A> {
  readonly title: string
  readonly value: (row: A) => string
  readonly right?: boolean
}

/** An aligned table with a header line; numbers (money) aligned right. */
const table = <A>(columns: ReadonlyArray<Column<A>>, rows: ReadonlyArray<A>): Array<string> => {
  const cells = rows.map((row) => columns.map((column) => column.value(row)))
  const widths = columns.map((column, i) => Math.max(column.title.length, ...cells.map((line) => line[i]!.length)))
  const line = (values: ReadonlyArray<string>) =>
    values.map((value, i) => columns[i]!.right ? value.padStart(widths[i]!) : value.padEnd(widths[i]!)).join("  ")
      .trimEnd()
  return [line(columns.map((column) => column.title)), ...cells.map(line)]
}

const pageLine = (pagination: Order.Pagination, noun: string) =>
  `Page ${pagination.current_page} of ${Math.max(pagination.last_page, 1)} (${pagination.total} ${noun} in all)`

const balanceText = (balance: Wallet.Balance) =>
  `main ${ghs(balance.main)}, referral ${ghs(balance.referral)}, agent ${ghs(balance.agent)}`

const limitsText = (limits: RateLimit.RateLimits) => {
  const set = RateLimit.RATE_LIMIT_SCOPES.flatMap((scope) =>
    limits[scope] === undefined ? [] : [`${scope}=${limits[scope]}/min`]
  )
  return set.length === 0 ? "server defaults" : `${set.join(", ")} (other scopes: server defaults)`
}

const accountText = (account: AdminApi.AccountDetail) => [
  `Account ${account.id}: ${account.name}`,
  ...fields([
    ["status", account.status],
    ["price group", orNone(account.price_group, "none (base prices)")],
    ["balance", balanceText(account.balance)],
    ["rate limits", limitsText(account.limits)],
    ["webhook url", orNone(account.webhook_url)],
    ["webhook secret", orNone(account.webhook_secret)],
    ["created", date(account.created_at)]
  ]),
  ...(account.keys.length === 0 ? ["No API keys."] : [
    "API keys:",
    ...table<AdminApi.ApiKeyView>([
      { title: "ID", value: (key) => String(key.id), right: true },
      { title: "PREFIX", value: (key) => key.prefix },
      { title: "CREATED", value: (key) => date(key.created_at) },
      { title: "LAST USED", value: (key) => key.last_used_at === null ? "never" : date(key.last_used_at) },
      { title: "REVOKED", value: (key) => key.revoked_at === null ? "-" : date(key.revoked_at) }
    ], account.keys).map((line) => `  ${line}`)
  ])
]

const orderText = (order: AdminApi.AdminOrder) =>
  fields([
    ["order", order.order_number],
    ["status", order.status],
    ["account", String(order.account_id)],
    ["network", order.network],
    ["bundle", order.bundle],
    ["phone", order.phone_number],
    ["amount paid", ghs(order.amount_paid)],
    ["reference", orNone(order.reference)],
    ["created", date(order.created_at)]
  ], "")

const movementText = (headline: string, movement: typeof AdminApi.WalletMovement.Type) => [
  `${headline} (ledger entry ${movement.entry.id}).`,
  "Balance:",
  ...fields([
    ["main", ghs(movement.balance.main)],
    ["referral", ghs(movement.balance.referral)],
    ["agent", ghs(movement.balance.agent)]
  ])
]

// ---------------------------------------------------------------------------------------------
// catalog
// ---------------------------------------------------------------------------------------------

/** Reads and decodes a catalogue file, reporting every problem with its place in the file. */
const readCatalog = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => problem(`Cannot read ${file}: ${error.message}`))
    )
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => problem(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`)
    })
    return yield* Schema.decodeUnknown(Catalog.CatalogFile, { errors: "all" })(json).pipe(
      Effect.mapError((error): Problem => {
        const errors: Record<string, Array<string>> = {}
        for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
          const place = issue.path.length === 0 ? "(file)" : formatPath(issue.path)
          errors[place] = [...(errors[place] ?? []), issue.message]
        }
        const headline = `${file} is not a valid catalogue file`
        const lines = Object.entries(errors).flatMap(([place, messages]) => messages.map((m) => `  ${place}: ${m}`))
        return {
          message: [`${headline}:`, ...lines].join("\n"),
          body: Schema.encodeSync(ApiError.ValidationError)(new ApiError.ValidationError({ message: headline, errors }))
        }
      })
    )
  })

const importColumns: ReadonlyArray<Column<readonly [kind: string, counts: Catalog.ImportCounts]>> = [
  { title: "", value: ([kind]) => kind },
  { title: "CREATED", value: ([, counts]) => String(counts.created), right: true },
  { title: "UPDATED", value: ([, counts]) => String(counts.updated), right: true },
  { title: "UNCHANGED", value: ([, counts]) => String(counts.unchanged), right: true }
]

const catalogImport = Command.make("import", {
  ...shared,
  file: Args.file({ name: "FILE", exists: "yes" }).pipe(Args.withDescription("The catalogue file (JSON)"))
}, (options) =>
  execute(
    options,
    Effect.flatMap(readCatalog(options.file), (payload) =>
      request(options, (client) => client.catalogFile.import({ payload }))),
    AdminApi.ImportResponse,
    (summary) => [
      `Imported ${options.file}:`,
      ...indented(table(importColumns, [
        ["price groups", summary.price_groups],
        ["networks", summary.networks],
        ["bundles", summary.bundles]
      ]))
    ]
  )).pipe(Command.withDescription("Upsert networks, bundles, price groups and prices from a catalogue file"))

const encodeCatalogFile = Schema.encodeSync(Catalog.CatalogFile)

const catalogExport = Command.make("export", shared, (options) =>
  execute(
    options,
    request(options, (client) => client.catalogFile.export()),
    AdminApi.CatalogExport,
    (catalog) => [JSON.stringify(encodeCatalogFile(catalog), null, 2)]
  )).pipe(Command.withDescription("Print the catalogue in the import file's format"))

const catalog = Command.make("catalog").pipe(
  Command.withDescription("The catalogue: networks, bundles, price groups and prices"),
  Command.withSubcommands([catalogImport, catalogExport])
)

// ---------------------------------------------------------------------------------------------
// accounts
// ---------------------------------------------------------------------------------------------

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
    (account) => [
      `Account ${account.id} created.`,
      ...fields([
        ["name", account.name],
        ["price group", orNone(account.price_group, "none (base prices)")],
        ["status", account.status],
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
    ({ accounts, pagination }) =>
      accounts.length === 0 ? ["No accounts."] : [
        ...table<AdminApi.AccountSummary>([
          { title: "ID", value: (a) => String(a.id), right: true },
          { title: "NAME", value: (a) => a.name },
          { title: "STATUS", value: (a) => a.status },
          { title: "PRICE GROUP", value: (a) => orNone(a.price_group, "-") },
          { title: "MAIN", value: (a) => ghs(a.balance.main), right: true },
          { title: "REFERRAL", value: (a) => ghs(a.balance.referral), right: true },
          { title: "AGENT", value: (a) => ghs(a.balance.agent), right: true }
        ], accounts),
        pageLine(pagination, "accounts")
      ]
  )).pipe(Command.withDescription("List accounts with their balances"))

const accountsShow = Command.make("show", { ...shared, id: accountIdArg }, (options) =>
  execute(
    options,
    request(options, (client) => client.accounts.show({ path: { account_id: options.id } })),
    AdminApi.AccountResponse,
    accountText
  )).pipe(Command.withDescription("Show an account: balances, limits, webhook, API keys"))

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
    Options.withDescription("Where order updates are posted, or none"),
    checked(
      "webhook-url",
      (text: string) => text === "none" ? Either.right(null) : decodeWith(AdminApi.WebhookUrl)(text)
    ),
    Options.optional
  ),
  rotateWebhookSecret: Options.boolean("rotate-webhook-secret").pipe(
    Options.withDescription("Replace the secret that signs webhook deliveries")
  ),
  limits: limitsOption
}, (options) => {
  const set = <K extends string, A>(key: K, value: Option.Option<A>) =>
    Option.match(value, { onNone: () => ({}), onSome: (a) => ({ [key]: a } as { [P in K]: A }) })
  const payload: AdminApi.UpdateAccountPayload = {
    ...set("name", options.name),
    ...set("price_group", options.priceGroup),
    ...set("status", options.status),
    ...set("webhook_url", options.webhookUrl),
    ...(options.rotateWebhookSecret ? { rotate_webhook_secret: true } : {}),
    ...set("limits", options.limits)
  }
  return execute(
    options,
    request(options, (client) => client.accounts.update({ path: { account_id: options.id }, payload })),
    AdminApi.AccountResponse,
    (account) => [`Account ${account.id} updated.`, ...accountText(account)]
  )
}).pipe(Command.withDescription("Change an account's name, price group, status, webhook or rate limits"))

const accounts = Command.make("accounts").pipe(
  Command.withDescription("Reseller accounts"),
  Command.withSubcommands([accountsCreate, accountsList, accountsShow, accountsUpdate])
)

// ---------------------------------------------------------------------------------------------
// keys
// ---------------------------------------------------------------------------------------------

const keysCreate = Command.make("create", { ...shared, account: accountIdOption }, (options) =>
  execute(
    options,
    request(options, (client) => client.apiKeys.create({ path: { account_id: options.account } })),
    AdminApi.ApiKeyCreated,
    (key) => [
      `API key ${key.id} created for account ${options.account} (prefix ${key.prefix}):`,
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

const keys = Command.make("keys").pipe(
  Command.withDescription("API keys of an account"),
  Command.withSubcommands([keysCreate, keysRevoke])
)

// ---------------------------------------------------------------------------------------------
// wallet, audit
// ---------------------------------------------------------------------------------------------

/** An amount as the wire carries it: a JSON number of cedis, from its exact decimal text. */
const wireAmount = (pesewas: bigint) => Option.some(Number(Money.formatCedis(pesewas)))

const decodeFund = Schema.decodeUnknownEither(AdminApi.FundWalletPayload)
const decodeAdjust = Schema.decodeUnknownEither(AdminApi.AdjustWalletPayload)

const walletFund = Command.make("fund", {
  ...shared,
  account: accountIdOption,
  amount: amountOption(AdminApi.FundWalletPayload.fields.amount, "The amount in cedis (10.50), greater than 0"),
  wallet: walletOption,
  note: noteOption.pipe(Options.optional)
}, (options) =>
  execute(
    options,
    fromWire(decodeFund, { amount: wireAmount(options.amount), wallet: options.wallet, note: options.note }).pipe(
      Effect.flatMap((payload) =>
        request(options, (client) => client.wallets.fund({ path: { account_id: options.account }, payload }))
      )
    ),
    AdminApi.WalletMovement,
    (movement) =>
      movementText(
        `Funded the ${movement.entry.wallet} wallet of account ${options.account} with ${ghs(movement.entry.amount)}`,
        movement
      )
  )).pipe(Command.withDescription("Credit a wallet"))

const walletAdjust = Command.make("adjust", {
  ...shared,
  account: accountIdOption,
  amount: amountOption(AdminApi.AdjustWalletPayload.fields.amount, "A signed amount in cedis (-5.00), not 0"),
  wallet: walletOption,
  note: noteOption
}, (options) =>
  execute(
    options,
    fromWire(decodeAdjust, {
      amount: wireAmount(options.amount),
      wallet: options.wallet,
      note: Option.some(options.note)
    }).pipe(
      Effect.flatMap((payload) =>
        request(options, (client) => client.wallets.adjust({ path: { account_id: options.account }, payload }))
      )
    ),
    AdminApi.WalletMovement,
    (movement) =>
      movementText(
        `Adjusted the ${movement.entry.wallet} wallet of account ${options.account} by ${ghs(movement.entry.amount)}`,
        movement
      )
  )).pipe(Command.withDescription("Correct a wallet by a signed amount, with the reason"))

const ledgerListing = listing<UrlParamsOf<AdminClient.Client["wallets"]["ledger"]>>(
  AdminApi.WalletsGroup.endpoints.ledger
)

const walletLedger = Command.make("ledger", {
  ...shared,
  account: accountIdOption,
  wallet: walletOption,
  ...ledgerListing.options
}, (options) =>
  execute(
    options,
    ledgerListing.params(options, { wallet: options.wallet }).pipe(
      Effect.flatMap((urlParams) =>
        request(options, (client) => client.wallets.ledger({ path: { account_id: options.account }, urlParams }))
      )
    ),
    AdminApi.LedgerPage,
    ({ entries, pagination }) =>
      entries.length === 0 ? ["No ledger entries."] : [
        ...table<typeof entries[number]>([
          { title: "ID", value: (e) => String(e.id), right: true },
          { title: "DATE", value: (e) => date(e.created_at) },
          { title: "WALLET", value: (e) => e.wallet },
          { title: "REASON", value: (e) => e.reason },
          { title: "AMOUNT", value: (e) => ghs(e.amount), right: true },
          { title: "BALANCE", value: (e) => ghs(e.balance_after), right: true },
          { title: "ORDER", value: (e) => orNone(e.order_number, "-") },
          { title: "NOTE", value: (e) => orNone(e.note, "") }
        ], entries),
        pageLine(pagination, "entries")
      ]
  )).pipe(Command.withDescription("An account's ledger, newest first"))

const wallet = Command.make("wallet").pipe(
  Command.withDescription("Funding, adjustments and the ledger of an account's wallets"),
  Command.withSubcommands([walletFund, walletAdjust, walletLedger])
)

const audit = Command.make("audit", shared, (options) =>
  execute(
    options,
    request(options, (client) => client.wallets.audit()),
    AdminApi.AuditResponse,
    (report) => {
      const checked = `${report.wallets} wallets, ${report.ledger_entries} ledger entries, ${report.orders} orders`
      if (report.ok) return [`Audit OK: ${checked} checked, no problems.`]
      return [
        `Audit FAILED: ${checked} checked.`,
        ...fields([
          ["wallets off their ledger", String(report.mismatches.length)],
          ["negative balances", String(report.negative_balances)],
          ["orders without a debit", String(report.orders_without_debit)],
          ["failed orders without a refund", String(report.failed_orders_without_refund)],
          ["refunds without a failed order", String(report.refunds_without_failed_order)]
        ]),
        ...(report.mismatches.length === 0 ? [] : table<typeof report.mismatches[number]>([
          { title: "ACCOUNT", value: (m) => String(m.account_id), right: true },
          { title: "WALLET", value: (m) => m.wallet },
          { title: "BALANCE", value: (m) => ghs(m.balance), right: true },
          { title: "LEDGER SUM", value: (m) => ghs(m.ledger_sum), right: true }
        ], report.mismatches).map((line) => `  ${line}`))
      ]
    },
    (report) => report.ok ? Option.none() : Option.some("The audit found problems")
  )).pipe(Command.withDescription("Check every wallet against its ledger and every order against its payments"))

// ---------------------------------------------------------------------------------------------
// orders
// ---------------------------------------------------------------------------------------------

const ordersListing = listing<UrlParamsOf<AdminClient.Client["ordersAdmin"]["list"]>>(
  AdminApi.OrdersAdminGroup.endpoints.list
)

const ordersList = Command.make("list", {
  ...shared,
  status: Options.choice("status", Order.OrderStatus.literals).pipe(
    Options.withDescription("Only orders with this status"),
    Options.optional
  ),
  account: accountIdOption.pipe(Options.optional),
  ...ordersListing.options
}, (options) =>
  execute(
    options,
    ordersListing.params(options, { status: options.status, account_id: options.account }).pipe(
      Effect.flatMap((urlParams) => request(options, (client) => client.ordersAdmin.list({ urlParams })))
    ),
    AdminApi.AdminOrdersPage,
    ({ orders, pagination }) =>
      orders.length === 0 ? ["No orders."] : [
        ...table<AdminApi.AdminOrder>([
          { title: "ORDER", value: (o) => o.order_number },
          { title: "DATE", value: (o) => date(o.created_at) },
          { title: "ACCOUNT", value: (o) => String(o.account_id), right: true },
          { title: "NETWORK", value: (o) => o.network },
          { title: "BUNDLE", value: (o) => o.bundle },
          { title: "PHONE", value: (o) => o.phone_number },
          { title: "AMOUNT", value: (o) => ghs(o.amount_paid), right: true },
          { title: "STATUS", value: (o) => o.status },
          { title: "REFERENCE", value: (o) => orNone(o.reference, "") }
        ], orders),
        pageLine(pagination, "orders")
      ]
  )).pipe(Command.withDescription("Orders of every account, newest first"))

const ordersShow = Command.make("show", { ...shared, orderNumber: orderNumberArg }, (options) =>
  execute(
    options,
    request(options, (client) => client.ordersAdmin.get({ path: { order_number: options.orderNumber } })),
    AdminApi.AdminOrderResponse,
    ({ order }) => orderText(order)
  )).pipe(Command.withDescription("One order, with its account"))

const ordersResolve = Command.make("resolve", {
  ...shared,
  orderNumber: orderNumberArg,
  status: Options.choice("status", ["successful", "failed"] as const).pipe(
    Options.withDescription("How the order ended; failing it refunds the main wallet")
  )
}, (options) =>
  execute(
    options,
    request(options, (client) =>
      client.ordersAdmin.resolve({
        path: { order_number: options.orderNumber },
        payload: { status: options.status }
      })),
    AdminApi.AdminOrderResponse,
    ({ order }) => [`Order ${order.order_number} resolved: ${order.status}.`, ...orderText(order)]
  )).pipe(Command.withDescription("Settle a stuck pending order"))

const orders = Command.make("orders").pipe(
  Command.withDescription("Orders of every account"),
  Command.withSubcommands([ordersList, ordersShow, ordersResolve])
)

/**
 * `bundles-server admin ...`: the operator's commands. They bring their own HttpClient (Node's
 * http, whose agent closes with the command, and which reaches any port, unlike fetch).
 */
export const command = Command.make("admin").pipe(
  Command.withDescription("Operate a running server through its admin API"),
  Command.withSubcommands([catalog, accounts, keys, wallet, audit, orders]),
  Command.provide(Layer.mergeAll(NodeHttpClient.layer, Logging.toStderr))
)
