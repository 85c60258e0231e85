/**
 * `bulk FILE.csv`: buys every row of a spreadsheet, once.
 *
 * 1. Reads the file and checks every row against the catalogue; all problems are reported
 *    together, with their lines, and nothing is bought while there are any.
 * 2. Looks up which rows the batch already bought (by their references) and skips them.
 * 3. Checks the cost of the rest against the main wallet. `--dry-run` stops here.
 * 4. Buys the rest one by one, paced under the rate limit, with a progress line; a 429 is
 *    waited out and the row tried again. Ctrl-C lets the order in flight finish, then stops.
 * 5. Writes the results CSV (every row of the file) and a summary.
 *
 * Exit status: 0 when every row has an order that did not fail, 1 otherwise, 130 after Ctrl-C.
 */
import { BundlesClient, formatGhs, MAX_PER_PAGE } from "@databundle/client"
import * as BulkFile from "@databundle/client/Bulk"
import { failed, Problem, problem } from "@databundle/terminal/Failure"
import * as Progress from "@databundle/terminal/Progress"
import { confirm, Tty } from "@databundle/terminal/Tty"
import { FileSystem, Path } from "@effect/platform"
import { Clock, Console, Effect, Either, Fiber, Option, Predicate } from "effect"
import * as Catalogue from "./Catalogue.js"
import type * as Config from "./Config.js"
import { describe } from "./Failure.js"
import type { ListedOrder } from "./Orders.js"
import * as Output from "./Output.js"
import * as Pacing from "./Pacing.js"
import * as Results from "./Results.js"
import * as Session from "./Session.js"

/** The options of `bulk`. */
export interface BulkInput extends Config.Shared {
  readonly file: string
  readonly dryRun: boolean
  /** The batch name; by default the file's name without its extension. */
  readonly batch: Option.Option<string>
  /** Where the results CSV goes; by default beside the file, as `<name>.results.csv`. */
  readonly results: Option.Option<string>
  readonly yes: boolean
}

/** Errors after which the next rows cannot go better: no money, no key, or no working server. */
const stopsTheBatch = (error: unknown): boolean =>
  !(Predicate.isTagged(error, "ValidationError") || Predicate.isTagged(error, "BundleUnavailable") ||
    Predicate.isTagged(error, "NotFound") || Predicate.isTagged(error, "BadRequest"))

const plural = (n: number, noun: string) => Output.count(n, noun)

const issuesText = (issues: ReadonlyArray<BulkFile.Issue>) =>
  issues.map((issue) => `  line ${issue.line}: ${issue.message}`)

/** `bundles bulk FILE.csv [--dry-run] [--batch NAME] [--results FILE] [--yes]`. */
export const bulk = (options: BulkInput) =>
  Effect.suspend(() => {
    const pacer = Pacing.make()
    // The client's own 429 waits would hold a Ctrl-C for up to a minute; this command waits itself.
    return Session.run(options, (connection) => run(options, pacer, connection), {
      retry: { onRateLimit: false },
      transform: pacer.observe
    })
  })

const run = (options: BulkInput, pacer: Pacing.Pacer, connection: Config.Connection) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const tty = yield* Tty
    const client = yield* BundlesClient
    const { err, out } = yield* Output.styles

    const bytes = yield* fs.readFile(options.file).pipe(
      Effect.mapError((error) => problem(`Cannot read ${options.file}: ${error.message}`))
    )
    const decoded = BulkFile.decodeFile(bytes, options.file)
    if (decoded._tag === "Refused") return yield* problem(decoded.message)
    const { text } = decoded
    const batch = Option.getOrElse(options.batch, () => BulkFile.defaultBatch(options.file)).trim()
    if (batch === "") return yield* problem("The batch name is empty")
    // Beside the file, named after it, or after the batch when one is named: runs of two batches
    // of one file keep their own results.
    const resultsFile = Option.getOrElse(options.results, () => {
      const parsed = path.parse(options.file)
      const name = Option.isSome(options.batch) ? BulkFile.batchSlug(batch) : parsed.name
      return path.join(parsed.dir, `${name}.results.csv`)
    })

    /** A wait shown as a countdown on the status line (and once in the log off a terminal). */
    const waitShown =
      (status: Progress.StatusLine, render: (text: string) => Effect.Effect<string>) => (millis: number, why: string) =>
        Effect.zipRight(
          tty.stderrIsTty ? Effect.void : status.log(`${why}: waiting ${Progress.duration(millis)}`),
          Pacing.countdown(
            millis,
            (left) => Effect.flatMap(render(`${why}: waiting ${Progress.duration(left)}`), status.set)
          )
        )

    // 1-3: check the file, find what the batch already bought, check the money.
    const checks = Effect.scoped(Effect.gen(function*() {
      const status = yield* Progress.statusLine
      const wait = waitShown(status, Effect.succeed)
      const reader = Pacing.patient(client, (millis) => wait(millis, "rate limited by the server"))
      yield* status.set("reading the catalogue")
      const catalogue = yield* Catalogue.load(reader)
      const checked = yield* Effect.promise(() => BulkFile.check(text, catalogue.byId, batch))
      for (const warning of checked.warnings) yield* status.warn(`line ${warning.line}: ${warning.message}`)
      if (checked.errors.length > 0) {
        return yield* rejected(options.file, checked.errors, checked.warnings)
      }
      yield* status.set(`looking up what batch ${batch} already bought`)
      const found = yield* alreadyBought(reader, checked.rows, batch, status)
      const conflicts = BulkFile.reusedReferences(checked.rows, found)
      if (conflicts.length > 0) return yield* rejected(options.file, conflicts, checked.warnings)
      const { main } = yield* reader.balance()
      return { checked, found, main }
    }))
    const { checked, found, main } = yield* checks.pipe(
      Effect.onInterrupt(() => Console.error("Stopped by Ctrl-C before buying anything."))
    )

    const rows = checked.rows
    const results: Array<Results.Result> = rows.map((row) => {
      const order = found.get(row.reference)
      return { row, outcome: order === undefined ? { _tag: "NotBought" } : { _tag: "Earlier", order } }
    })
    const toBuy = results.flatMap((result, index) => result.outcome._tag === "NotBought" ? [index] : [])
    const total = toBuy.reduce((sum, index) => sum + rows[index]!.entry.bundle.price, 0n)
    const earlier = [...found.values()].map((order) => order.created_at.getTime())
    const when = () => {
      const [first, last] = [Math.min(...earlier), Math.max(...earlier)].map((t) => Output.date(new Date(t)))
      return first === last ? first : `${first} to ${last}`
    }
    yield* Output.note(
      earlier.length === 0
        ? `Batch ${batch}: none of the ${plural(rows.length, "row")} bought yet.`
        : `Batch ${batch}: ${earlier.length} of ${plural(rows.length, "row")} already bought (${when()}); ` +
          `skipping them.${toBuy.length === 0 ? " To buy them again, give another --batch name." : ""}`
    )
    const summary = {
      batch,
      file: options.file,
      rows: rows.length,
      already_bought: rows.length - toBuy.length,
      to_buy: toBuy.length,
      total,
      balance: main,
      warnings: checked.warnings
    }
    if (total > main) {
      return yield* new Problem({
        message: `Not enough money: the ${plural(toBuy.length, "row")} to buy cost ${formatGhs(total)}, the main ` +
          `wallet has ${formatGhs(main)} (${formatGhs(total - main)} short); nothing was bought`,
        body: Output.toWire({ success: false, message: "Insufficient balance for the batch", ...summary })
      })
    }
    const plan = `${plural(toBuy.length, "row")} to buy for ${formatGhs(total)}; the main wallet has ${
      formatGhs(main)
    } (${formatGhs(main - total)} after)`
    if (options.dryRun) {
      if (options.json) return yield* Output.printJson({ success: true, dry_run: true, ...summary })
      return yield* Output.printLines([
        `${options.file}: ${plural(rows.length, "row")}, all valid (batch ${batch}).`,
        `${plan}.`,
        "Dry run: nothing was bought."
      ])
    }
    if (toBuy.length > 0 && !options.yes && tty.interactive) {
      const question = `Buy ${plural(toBuy.length, "row")} for ${formatGhs(total)} from the main wallet (${
        formatGhs(main)
      } → ${formatGhs(main - total)})?`
      if (!(yield* confirm(question))) return yield* problem("Cancelled: nothing was bought")
    }

    // 4: buy, one row at a time.
    let done = 0
    let spent = 0n
    let stoppedBy: string | undefined

    /** One attempt at a row, recorded before anything else can happen; a 429 is left to the caller. */
    const attempt = (index: number) =>
      Effect.gen(function*() {
        const { row } = results[index]!
        const start = yield* Clock.currentTimeMillis
        const result = yield* Effect.either(client.placeOrder({
          bundle_id: row.entry.bundle.id,
          phone_number: row.phone,
          reference: row.reference
        }))
        pacer.took((yield* Clock.currentTimeMillis) - start)
        if (Either.isLeft(result) && Predicate.isTagged(result.left, "RateLimited")) return yield* result.left
        results[index] = {
          row,
          outcome: Either.isRight(result)
            ? { _tag: "Bought", order: result.right.order, replayed: result.right.replayed }
            : { _tag: "Error", message: describe(result.left, connection.baseUrl).message }
        }
        return result
      })

    /**
     * The attempt runs in a fiber of its own: Ctrl-C interrupts this one, which then waits for
     * the order in flight to finish and be recorded, instead of cutting the request off.
     */
    const inFlight = (index: number) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkDaemon(attempt(index))
        return yield* Fiber.join(fiber).pipe(Effect.onInterrupt(() => Fiber.await(fiber)))
      })

    const buying = Effect.scoped(Effect.gen(function*() {
      const status = yield* Progress.statusLine
      const line = (extra?: string) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const eta = pacer.eta(toBuy.length - done, now)
          return `${Progress.bar(done, toBuy.length)} ${done}/${toBuy.length}  ${formatGhs(spent)} spent  ETA ${
            eta === undefined ? "…" : Progress.duration(eta)
          }${extra === undefined ? "" : `  ${extra}`}`
        })
      const wait = waitShown(status, line)
      for (const index of toBuy) {
        yield* Effect.flatMap(line(), status.set)
        const delay = pacer.delay(yield* Clock.currentTimeMillis)
        if (delay > 0) yield* wait(delay, `rate limit reached (${pacer.window()?.limit ?? "?"} a minute)`)
        const result = yield* Pacing.untilAdmitted(inFlight(index), (millis) => wait(millis, "rate limited"))
        done++
        const { outcome, row } = results[index]!
        const where = `line ${row.line}: ${Output.clean(row.entry.bundle.name)} for ${row.phone}`
        if (outcome._tag === "Bought") {
          const { order, replayed } = outcome
          if (!replayed && order.status !== "failed") spent += order.amount_paid
          const text = `${where}: ${order.order_number} ${order.status} ${formatGhs(order.amount_paid)}${
            replayed ? " (bought before; not charged again)" : ""
          }`
          if (order.status === "failed") yield* status.log(`${err.red("failed:")} ${text} (refunded)`)
          else if (!tty.stderrIsTty) yield* status.log(`[${done}/${toBuy.length}] ${text}`)
        } else if (outcome._tag === "Error") {
          yield* status.log(`${err.red("error:")} ${where}: ${outcome.message}`)
          if (Either.isLeft(result) && stopsTheBatch(result.left)) {
            stoppedBy = outcome.message
            return
          }
        }
      }
    }))

    /** Writes the results CSV and prints the summary; after Ctrl-C too. */
    const report = (interrupted: boolean) =>
      Effect.gen(function*() {
        const written = yield* Effect.either(Results.write(resultsFile, results))
        if (Either.isLeft(written)) yield* Output.error(written.left.message)
        const counts = BulkFile.tally(results)
        const ok = !interrupted && results.every((r) => BulkFile.isDone(r.outcome))
        if (options.json) {
          yield* Output.printJson({
            success: ok,
            ...summary,
            bought: counts.boughtNow,
            spent,
            failed: counts.failedOrders,
            errors: counts.errors,
            not_bought: counts.notBought,
            interrupted,
            results_file: Either.isRight(written) ? resultsFile : null,
            results: results.map(BulkFile.resultFields)
          })
        } else {
          const red = (n: number) => n === 0 ? "0" : out.red(String(n))
          yield* Output.printLines([
            `Batch ${batch}: ${plural(rows.length, "row")}`,
            ...Output.fields([
              ["bought now", `${counts.boughtNow}  (${formatGhs(spent)})`],
              ["bought before", String(counts.boughtBefore)],
              ["failed", red(counts.failedOrders)],
              ["errors", red(counts.errors)],
              ["not bought", String(counts.notBought)]
            ]),
            ...(Either.isRight(written) ? [`Results: ${resultsFile}`] : [])
          ])
        }
        if (interrupted) {
          yield* Console.error(
            `Stopped by Ctrl-C after ${done} of ${plural(toBuy.length, "row")}. Run the same command again to ` +
              "buy the rest: rows already bought are skipped."
          )
        }
        return ok
      })

    yield* buying.pipe(Effect.onInterrupt(() => report(true)))
    const ok = yield* report(false)
    if (ok) return
    return yield* failed(
      stoppedBy !== undefined
        ? `The batch stopped: ${stoppedBy}. Run the same command again once that is fixed; bought rows are skipped.`
        : `Some rows were not bought, or their orders failed: see ${resultsFile}`
    )
  })

/** Every problem of the file, as one failure; nothing is bought. */
const rejected = (
  file: string,
  errors: ReadonlyArray<BulkFile.Issue>,
  warnings: ReadonlyArray<BulkFile.Issue>
) => {
  const headline = `${file} has ${plural(errors.length, "problem")}; nothing was bought`
  return Effect.fail(
    new Problem({
      message: [`${headline}:`, ...issuesText(errors)].join("\n"),
      body: Output.toWire({ success: false, message: headline, errors, warnings })
    })
  )
}

/** The orders of the batch that exist already, by reference, found as `Bulk.batchLookup` plans. */
const alreadyBought = (
  client: BundlesClient.Service,
  rows: ReadonlyArray<Results.Row>,
  batch: string,
  status: Progress.StatusLine
) =>
  Effect.gen(function*() {
    const found = new Map<string, ListedOrder>()
    const keep = (wanted: ReadonlySet<string>, orders: ReadonlyArray<ListedOrder>) => {
      for (const order of orders) {
        if (order.reference !== null && wanted.has(order.reference)) found.set(order.reference, order)
      }
    }
    const total = BulkFile.needsOrderCount(rows) ? (yield* client.listOrders({ per_page: 1 })).pagination.total : 0
    const plan = BulkFile.batchLookup(rows, batch, total, MAX_PER_PAGE)
    for (const { filter, wanted } of plan.listings) {
      for (let page = 1, last = 1; page <= last; page++) {
        yield* status.set(`looking up the batch's orders: page ${page} of ${last}`)
        const result = yield* client.listOrders({ ...filter, per_page: MAX_PER_PAGE, page })
        keep(wanted, result.orders)
        last = result.pagination.last_page
      }
    }
    const wanted = new Set(plan.single)
    for (const [i, reference] of plan.single.entries()) {
      yield* status.set(`looking up the batch's orders: row ${i + 1} of ${plan.single.length}`)
      keep(wanted, (yield* client.listOrders({ reference, per_page: 1 })).orders)
    }
    return found
  })
