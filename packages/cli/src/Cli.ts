/**
 * The `bundles` command tree. Every leaf takes `--json`, `--api-key` and `--base-url`, after
 * the whole command as scripts write them. A leaf's module is loaded only when it runs, so
 * `--help` and `--version` start without the API client: this module and what it imports
 * form the start-up path, hence its deep imports (the `effect` barrel would pull in every
 * module) and no value import of the command modules.
 */
import { EVENT_TYPES } from "@databundle/client/EventTypes"
import {
  DEFAULT_PER_PAGE,
  MAX_PER_PAGE,
  ORDER_STATUSES,
  REFERENCE_PATTERN,
  REFERENCE_RULE
} from "@databundle/client/OrderTerms"
import { parsePhone } from "@databundle/client/Phone"
import * as CommandLine from "@databundle/terminal/CommandLine"
import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { examples } from "./Examples.js"
import { shared } from "./SharedOptions.js"
import { VERSION } from "./Version.js"

/** Runs a command from its module, imported on first use. */
const lazy = <M, A, E, R>(load: () => Promise<M>, run: (module: M) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.promise(load), run)

const invalid = (message: string) => ValidationError.invalidValue(HelpDoc.p(message))

const yes = Options.boolean("yes").pipe(
  Options.withAlias("y"),
  Options.withDescription("Do not ask for confirmation (it is asked only on a terminal)")
)

// ---------------------------------------------------------------------------------------------
// Account: login, logout, balance
// ---------------------------------------------------------------------------------------------

const login = Command.make("login", shared, (options) => lazy(() => import("./Login.js"), (m) => m.login(options)))
  .pipe(Command.withDescription(
    "Check an API key against the API and save it (with the base URL) in a file readable by you only"
  ))

const logout = Command.make(
  "logout",
  { json: shared.json },
  (options) => lazy(() => import("./Login.js"), (m) => m.logout(options))
).pipe(
  Command.withDescription("Remove the saved API key")
)

const balance = Command.make(
  "balance",
  shared,
  (options) => lazy(() => import("./Wallet.js"), (m) => m.balance(options))
).pipe(
  Command.withDescription("The main, referral and agent wallets")
)

// ---------------------------------------------------------------------------------------------
// Catalogue: networks, bundles
// ---------------------------------------------------------------------------------------------

const networks = Command.make(
  "networks",
  shared,
  (options) => lazy(() => import("./Catalogue.js"), (m) => m.networks(options))
).pipe(
  Command.withDescription("The active networks")
)

const bundles = Command.make("bundles", {
  ...shared,
  network: Args.text({ name: "NETWORK" }).pipe(Args.withDescription("The network's id or slug (mtn, telecel, ...)"))
}, (options) => lazy(() => import("./Catalogue.js"), (m) => m.bundles(options))).pipe(
  Command.withDescription("The bundles of a network, with this account's prices")
)

// ---------------------------------------------------------------------------------------------
// Buying: buy, bulk
// ---------------------------------------------------------------------------------------------

const buy = Command.make("buy", {
  ...shared,
  bundleId: Args.integer({ name: "BUNDLE_ID" }).pipe(
    Args.withDescription("The bundle's id (see bundles NETWORK)"),
    Args.mapEffect((id) => id > 0 ? Either.right(id) : Either.left(HelpDoc.p("BUNDLE_ID must be a positive integer")))
  ),
  // Words are joined, so `buy 12 024 123 4567` works like `buy 12 "024 123 4567"`.
  phone: Args.text({ name: "PHONE" }).pipe(
    Args.atLeast(1),
    Args.withDescription("The Ghana number: 0241234567, 233241234567, +233 24 123 4567, 024-123-4567, ..."),
    Args.mapEffect((words) => {
      const text = words.join(" ")
      const phone = parsePhone(text)
      return phone === undefined
        ? Either.left(HelpDoc.p(`PHONE ${JSON.stringify(text)} is not a Ghana mobile number (e.g. 024 123 4567)`))
        : Either.right(phone)
    })
  ),
  reference: Options.text("reference").pipe(
    Options.withDescription("Your own reference; buying again with it returns the same order, never a second one"),
    Options.mapEffect((text) =>
      REFERENCE_PATTERN.test(text)
        ? Either.right(text)
        : Either.left(invalid(`--reference ${REFERENCE_RULE}`))
    ),
    Options.optional
  ),
  yes
}, (options) => lazy(() => import("./Buy.js"), (m) => m.buy(options))).pipe(
  Command.withDescription("Buy a bundle for a phone number, paid from the main wallet")
)

const bulk = Command.make("bulk", {
  ...shared,
  file: Args.file({ name: "FILE.csv", exists: "yes" }).pipe(
    Args.withDescription("Rows of bundle_id,phone_number[,reference], with or without a header row")
  ),
  dryRun: Options.boolean("dry-run").pipe(
    Options.withDescription("Check the file, what the batch already bought and the balance; buy nothing")
  ),
  batch: Options.text("batch").pipe(
    Options.withDescription(
      "The batch's name, part of every derived reference (default: the file's name without extension)"
    ),
    Options.optional
  ),
  results: Options.text("results").pipe(
    Options.withDescription("Where to write the results CSV (default: <file name>.results.csv beside the file)"),
    Options.optional
  ),
  yes
}, (options) => lazy(() => import("./Bulk.js"), (m) => m.bulk(options))).pipe(
  Command.withDescription("Buy every row of a CSV file, once: checked first, paced under the rate limit, resumable")
)

// ---------------------------------------------------------------------------------------------
// Orders: list, get, watch
// ---------------------------------------------------------------------------------------------

const orderNumber = Args.text({ name: "ORDER_NUMBER" }).pipe(Args.withDescription("The order's number (ORD-...)"))

const positive = (name: string, max: number) => (n: number) =>
  Number.isInteger(n) && n >= 1 && n <= max
    ? Either.right(n)
    : Either.left(invalid(`--${name} must be an integer from 1 to ${max}`))

const DATE_BOUND = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/

/** `--from`/`--to`: a day or an instant with its offset, as GET /orders takes them. */
const dateBound = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.withPseudoName("DATE"),
    Options.withDescription(description),
    Options.mapEffect((text) =>
      DATE_BOUND.test(text) && !Number.isNaN(Date.parse(text))
        ? Either.right(text)
        : Either.left(
          invalid(`--${name} must be a date (2026-11-01) or a timestamp with offset (2026-11-01T08:00:00Z)`)
        )
    ),
    Options.optional
  )

const ordersList = Command.make("list", {
  ...shared,
  status: Options.choice("status", ORDER_STATUSES).pipe(
    Options.withDescription("Only orders with this status"),
    Options.optional
  ),
  page: Options.integer("page").pipe(
    Options.withDescription("Page number (default 1)"),
    Options.mapEffect(positive("page", 1_000_000)),
    Options.optional
  ),
  perPage: Options.integer("per-page").pipe(
    Options.withDescription(`Orders per page, 1 to ${MAX_PER_PAGE} (default ${DEFAULT_PER_PAGE})`),
    Options.mapEffect(positive("per-page", MAX_PER_PAGE)),
    Options.optional
  ),
  all: Options.boolean("all").pipe(Options.withDescription("Every page, newest first")),
  phone: Options.text("phone").pipe(
    Options.withDescription("Only orders for this number, written any way (024 123 4567, +233 24 123 4567)"),
    Options.mapEffect((text) => {
      const phone = parsePhone(text)
      return phone === undefined
        ? Either.left(invalid(`--phone ${JSON.stringify(text)} is not a Ghana mobile number (e.g. 024 123 4567)`))
        : Either.right(phone.local)
    }),
    Options.optional
  ),
  reference: Options.text("reference").pipe(
    Options.withDescription("Only the order with this reference"),
    Options.mapEffect((text) =>
      REFERENCE_PATTERN.test(text) ? Either.right(text) : Either.left(invalid(`--reference ${REFERENCE_RULE}`))
    ),
    Options.optional
  ),
  from: dateBound("from", "Only orders placed on or after this day (2026-11-01) or instant (2026-11-01T08:00:00Z)"),
  to: dateBound("to", "Only orders placed on or before this day (2026-11-30, the whole day) or instant")
}, (options) => lazy(() => import("./Orders.js"), (m) => m.list(options))).pipe(
  Command.withDescription("The account's orders, newest first")
)

const ordersGet = Command.make(
  "get",
  { ...shared, orderNumber },
  (options) => lazy(() => import("./Orders.js"), (m) => m.get(options))
).pipe(
  Command.withDescription("One order")
)

/** How long `orders watch` waits by default: ten minutes. */
const WATCH_TIMEOUT_SECONDS = 600

const ordersWatch = Command.make("watch", {
  ...shared,
  orderNumber,
  timeout: Options.float("timeout").pipe(
    Options.withPseudoName("SECONDS"),
    Options.withDescription(
      `Seconds to wait for the order to settle, 0 for no limit (default ${WATCH_TIMEOUT_SECONDS})`
    ),
    Options.mapEffect((seconds) =>
      seconds >= 0 && Number.isFinite(seconds)
        ? Either.right(seconds)
        : Either.left(invalid("--timeout must be 0 or more"))
    ),
    Options.withDefault(WATCH_TIMEOUT_SECONDS)
  )
}, (options) =>
  lazy(
    () => import("./Watch.js"),
    (m) => m.watch({ ...options, timeout: options.timeout === 0 ? Option.none() : Option.some(options.timeout) })
  )).pipe(
    Command.withDescription("Follow an order until it is successful (exit 0) or failed (exit 1)")
  )

const orders = Command.make("orders").pipe(
  Command.withDescription("The account's orders"),
  Command.withSubcommands([ordersList, ordersGet, ordersWatch])
)

// ---------------------------------------------------------------------------------------------
// Events, webhooks and the ledger (extensions of the API)
// ---------------------------------------------------------------------------------------------

const eventType = Options.choice("type", EVENT_TYPES).pipe(
  Options.withDescription("Only events of this type"),
  Options.optional
)

const since = Options.text("since").pipe(
  Options.withDescription("Only events after this cursor (from a previous listing; 0 for all)"),
  Options.mapEffect((text) =>
    /^(0|[1-9]\d{0,18})$/.test(text) ? Either.right(text) : Either.left(invalid("--since must be a cursor (digits)"))
  ),
  Options.optional
)

const pageOption = Options.integer("page").pipe(
  Options.withDescription("Page number (default 1)"),
  Options.mapEffect(positive("page", 1_000_000)),
  Options.optional
)

const perPageOption = (what: string, fallback: number) =>
  Options.integer("per-page").pipe(
    Options.withDescription(`${what} per page, 1 to 100 (default ${fallback})`),
    Options.mapEffect(positive("per-page", 100)),
    Options.optional
  )

const eventsList = Command.make("list", {
  ...shared,
  since,
  type: eventType,
  page: pageOption,
  perPage: perPageOption("Events", 20)
}, (options) => lazy(() => import("./Events.js"), (m) => m.list(options))).pipe(
  Command.withDescription("The account's events (what its webhook receives), newest first, and the cursor after them")
)

const eventsTrigger = Command.make("trigger", {
  ...shared,
  type: Args.choice(EVENT_TYPES.map((type) => [type, type] as const), { name: "TYPE" }).pipe(
    Args.withDescription(`The event type: ${EVENT_TYPES.join(", ")}`)
  )
}, (options) => lazy(() => import("./Events.js"), (m) => m.trigger(options))).pipe(
  Command.withDescription("Send a test event (marked test: true) to the event feed and the webhook URL")
)

const events = Command.make("events").pipe(
  Command.withDescription("The account's events"),
  Command.withSubcommands([eventsList, eventsTrigger])
)

const webhooksListen = Command.make("listen", {
  ...shared,
  forwardTo: Options.text("forward-to").pipe(
    Options.withDescription("The local URL each event is POSTed to, signed as a delivery (http://localhost:3000/hook)"),
    Options.mapEffect((text) => {
      try {
        const url = new URL(text)
        if (url.protocol === "http:" || url.protocol === "https:") return Either.right(text)
      } catch {
        // Refused below.
      }
      return Either.left(invalid(`--forward-to ${JSON.stringify(text)} is not an http or https URL`))
    })
  ),
  since,
  type: eventType,
  interval: Options.float("interval").pipe(
    Options.withDescription("Seconds between looks at the event feed when it is quiet (default 2)"),
    Options.mapEffect((seconds) =>
      seconds >= 0.2 && seconds <= 3600
        ? Either.right(seconds)
        : Either.left(invalid("--interval must be from 0.2 to 3600 seconds"))
    ),
    Options.withDefault(2)
  )
}, (options) => lazy(() => import("./Events.js"), (m) => m.listen(options))).pipe(
  Command.withDescription(
    "Forward the account's events, as they happen, to a local URL, signed with its webhook secret (Ctrl-C stops)"
  )
)

const webhooksDeliveries = Command.make("deliveries", {
  ...shared,
  state: Options.choice("state", ["pending", "retrying", "delivered", "abandoned"] as const).pipe(
    Options.withDescription("Only deliveries in this state"),
    Options.optional
  ),
  type: eventType,
  page: pageOption,
  perPage: perPageOption("Deliveries", 20)
}, (options) => lazy(() => import("./Events.js"), (m) => m.deliveries(options))).pipe(
  Command.withDescription("Deliveries to the webhook URL: attempts, last status, next retry")
)

const webhooksResend = Command.make("resend", {
  ...shared,
  id: Args.text({ name: "DELIVERY_ID" }).pipe(Args.withDescription("The delivery's id (its event's, evt_...)"))
}, (options) => lazy(() => import("./Events.js"), (m) => m.resend(options))).pipe(
  Command.withDescription("Deliver an event to the webhook URL again, now")
)

const webhooks = Command.make("webhooks").pipe(
  Command.withDescription("The account's webhook"),
  Command.withSubcommands([webhooksListen, webhooksDeliveries, webhooksResend])
)

const dateOption = (name: string, what: string) =>
  Options.text(name).pipe(
    Options.withPseudoName("DATE"),
    Options.withDescription(`${what} (2026-11-01, or 2026-11-01T08:00:00Z)`),
    Options.optional
  )

const walletTransactions = Command.make("transactions", {
  ...shared,
  wallet: Options.choice("wallet", ["main", "referral", "agent"] as const).pipe(
    Options.withDescription("Only this wallet"),
    Options.optional
  ),
  reason: Options.choice(
    "reason",
    ["funding", "adjustment", "order", "refund", "commission", "commission_reversal", "transfer"] as const
  ).pipe(
    Options.withDescription("Only movements for this reason"),
    Options.optional
  ),
  from: dateOption("from", "From this day or instant"),
  to: dateOption("to", "To this day (included) or instant"),
  page: pageOption,
  perPage: perPageOption("Entries", 50)
}, (options) => lazy(() => import("./Wallet.js"), (m) => m.transactions(options))).pipe(
  Command.withDescription("Every movement of the account's wallets, newest first, with the balance after it")
)

const walletTransfer = Command.make("transfer", {
  ...shared,
  from: Options.choice("from", ["referral", "agent"] as const).pipe(
    Options.withDescription("The wallet whose earnings move to the main wallet")
  ),
  amount: Args.text({ name: "AMOUNT" }).pipe(
    Args.withDescription("Cedis to move, at most two decimals (10, 2.50)"),
    Args.mapEffect((text) =>
      /^\d{1,12}(\.\d{1,2})?$/.test(text) && /[1-9]/.test(text)
        ? Either.right(text)
        : Either.left(HelpDoc.p("AMOUNT must be a positive amount in cedis with at most two decimals"))
    )
  ),
  idempotencyKey: Options.text("idempotency-key").pipe(
    Options.withPseudoName("KEY"),
    Options.withDescription("Repeat a transfer safely: the same key moves once (one is made when left out)"),
    Options.optional
  )
}, (options) => lazy(() => import("./Wallet.js"), (m) => m.transfer(options))).pipe(
  Command.withDescription("Move referral or agent earnings to the main wallet")
)

const wallet = Command.make("wallet").pipe(
  Command.withDescription("The account's wallets: their ledger, and moving earnings to main"),
  Command.withSubcommands([walletTransactions, walletTransfer])
)

/**
 * The whole command tree. The root's name ends in a space: @effect/cli 0.77 splits the
 * arguments at the first one that names a subcommand, the root's own name (which it puts
 * first) included, so a root named exactly like its `bundles` subcommand never parses. The
 * space keeps them apart and prints the same.
 */
export const command = Command.make("bundles ").pipe(
  Command.withDescription("Buy data bundles for Ghana phone numbers from your reseller wallet"),
  Command.withSubcommands([login, logout, balance, networks, bundles, buy, orders, bulk, wallet, events, webhooks])
)

const cli = Command.run(command, { name: "bundles", version: VERSION })

/**
 * Runs the command line (`process.argv`) on the terminal toolkit's runner: text for a stream
 * that takes no colour (a pipe, `NO_COLOR`) has its colour codes removed, the parser's help
 * and errors included.
 */
export const run = (argv: ReadonlyArray<string>) =>
  CommandLine.run("bundles", cli, argv, { command, version: VERSION, examples })

/** The exit status of a run: 0 success, 1 failure, 2 usage error, 130 stopped by Ctrl-C. */
export const exitCode = (exit: Exit.Exit<unknown, unknown>): number => CommandLine.exitCode(exit)
