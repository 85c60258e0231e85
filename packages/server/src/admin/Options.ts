/**
 * The options of the operator's commands and their checks: a value the server would refuse
 * is a usage error here (exit status 2), checked by the contract's own schemas. Every leaf
 * takes the shared `--json`, `--url` and `--token` after the whole command.
 */
import { Account, Idempotency, Money, RateLimit, Wallet } from "@databundle/contract"
import { firstIssue, type Problem, problem } from "@databundle/terminal/Failure"
import { Args, HelpDoc, Options, ValidationError } from "@effect/cli"
import { type Effect, Either, Option, ParseResult, type Redacted, Schema } from "effect"
import type * as AST from "effect/SchemaAST"
import * as AdminClient from "../AdminClient.js"

/** A usage error (exit status 2): the parser prints it with the help. */
export const usage = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))

/** A value's place in a decoded document: `networks[0].color`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>) =>
  path.map((key, i) => typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`).join("")

/** Decodes a value with a schema of the contract, failing with the schema's message. */
export const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (input: unknown): Either.Either<A, string> => Either.mapLeft(decode(input), firstIssue)
}

/** Checks a decoded value against a schema of the contract (its refinements included). */
export const validateWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const validate = Schema.validateEither(schema)
  return (value: A): Either.Either<A, string> => Either.mapLeft(validate(value), firstIssue)
}

/** Checks an option's value, turning a failed check into a usage error naming the option. */
export const checked = <A, B>(name: string, check: (a: A) => Either.Either<B, string>) =>
  Options.mapEffect((a: A) => Either.mapLeft(check(a), (message) => usage(`--${name} ${message}`)))

/** `--account ID`. */
export const accountIdOption = Options.integer("account").pipe(
  Options.withDescription("The account's id"),
  checked("account", decodeWith(Account.AccountId))
)

/** The `ID` argument: an account's id. */
export const accountIdArg = Args.integer({ name: "ID" }).pipe(
  Args.withDescription("The account's id"),
  Args.mapEffect((n) => Either.mapLeft(decodeWith(Account.AccountId)(n), (message) => HelpDoc.p(`ID ${message}`)))
)

/** The `ORDER_NUMBER` argument. */
export const orderNumberArg = Args.text({ name: "ORDER_NUMBER" }).pipe(
  Args.withDescription("The order's number (ORD-...)")
)

/** `--wallet main|referral|agent`. */
export const walletOption = Options.choice("wallet", Wallet.WalletKind.literals).pipe(
  Options.withDescription("Which wallet (default main)"),
  Options.optional
)

/** `--name`: an account's name, checked by the contract. */
export const nameOption = Options.text("name").pipe(
  Options.withDescription("The account's name"),
  checked("name", decodeWith(Account.CreateAccountPayload.fields.name))
)

/** `--price-group`; `none` stands for base prices where `none` is allowed. */
export const priceGroupOption = (none: boolean) =>
  Options.text("price-group").pipe(
    Options.withDescription(
      none ? "The account's price group, or none for base prices" : "The account's price group (default: base prices)"
    ),
    checked("price-group", (text: string) =>
      none && text === "none" ? Either.right(null) : decodeWith(Account.PriceGroupName)(text)),
    Options.optional
  )

/** `--amount`: cedis with at most two decimals, parsed without floats, checked by the payload's schema. */
export const amountOption = (schema: Schema.Schema<bigint, number>, description: string) =>
  Options.text("amount").pipe(
    Options.withDescription(description),
    checked("amount", (text: string) => Either.flatMap(Money.parseCedis(text), validateWith(schema)))
  )

/** `--note`: why a wallet moves. */
export const noteOption = Options.text("note").pipe(
  Options.withDescription("Why the wallet moves; kept in the ledger"),
  checked("note", decodeWith(Wallet.AdjustWalletPayload.fields.note))
)

/** An endpoint of the contract, for its URL parameters' schema. */
interface Endpoint {
  readonly urlParamsSchema: Option.Option<{ readonly ast: AST.AST }>
}

/** The URL parameters a client method takes. */
export type UrlParamsOf<F extends (request: any) => any> = Parameters<F>[0] extends { readonly urlParams: infer U } ? U
  : never

/**
 * The listing options of an endpoint (`--page`, `--per-page`), checked by its URL parameters'
 * schema, and the builder of its URL parameters: given as on the wire (text) and decoded by that
 * schema, which applies the contract's defaults.
 */
export const listing = <Params>(endpoint: Endpoint) => {
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
export const fromWire = <A>(
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

/** `--mode live|test`: which of an account's two sets of data a command acts on (default live). */
export const modeOption = (description: string) =>
  Options.choice("mode", ["live", "test"] as const).pipe(Options.withDescription(description), Options.optional)

/** `--limit SCOPE=N` (repeatable): a number sets an override, `default` removes it. */
export const limitsOption = Options.text("limit").pipe(
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
export const shared = {
  json: Options.boolean("json").pipe(
    Options.withDescription("Print the response body as one JSON document on stdout, and nothing else there")
  ),
  url: Options.text("url").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription(
      `The server's base URL (env BUNDLES_ADMIN_URL; default: the server running on the data directory, else ${AdminClient.DEFAULT_URL})`
    ),
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
export interface Shared {
  readonly json: boolean
  readonly url: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted>
}

/** `--idempotency-key`: the Idempotency-Key of a command that moves money (default: a fresh one per run). */
export const idempotencyKeyOption = Options.text("idempotency-key").pipe(
  Options.withPseudoName("KEY"),
  Options.withDescription(
    "Sent as Idempotency-Key (default: a fresh one per run); repeating a command with the same key moves money once"
  ),
  checked("idempotency-key", decodeWith(Idempotency.IdempotencyKey)),
  Options.optional
)
