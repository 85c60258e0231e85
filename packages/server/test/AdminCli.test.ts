/**
 * The `admin` commands end to end: the CLI runs in-process (`Cli.run`, as the binary runs it)
 * against the whole server on a real port, with stdout and stderr captured through `Console`.
 */
import { targets } from "@databundle/core/testing"
import { capturingConsole } from "@databundle/terminal/testing"
import { ValidationError } from "@effect/cli"
import { HttpServer } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit, Option } from "effect"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { CliFailure } from "../src/AdminCli.js"
import * as Cli from "../src/Cli.js"
import * as Demo from "../src/Demo.js"
import { ADMIN_TOKEN, adminClient, mailed, raw, resellerClient, seedCatalog, serverLayer } from "./Harness.js"

/** What one run of the command line printed, and how it ended. */
interface Run {
  readonly stdout: string
  readonly stderr: string
  readonly exit: Exit.Exit<void, unknown>
}

/** Runs `bundles-server ...args` in-process with `env` as its whole environment, capturing its output. */
const runCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const { console: capturing, stderr, stdout } = yield* capturingConsole
    const exit = yield* Cli.run(["node", "bundles-server", ...args]).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.withConsole(capturing),
      Effect.exit
    )
    return { stdout: stdout.join("\n"), stderr: stderr.join("\n"), exit } satisfies Run
  })

/** The test server's base URL, from its listening address. */
const serverUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address
  if (address._tag !== "TcpAddress") throw new Error("the test server does not listen on TCP")
  return `http://127.0.0.1:${address.port}`
})

/** `bundles-server admin ...args --url <test server> --token <admin token>`. */
const admin = (...args: ReadonlyArray<string>) =>
  Effect.flatMap(serverUrl, (url) => runCli(["admin", ...args, "--url", url, "--token", ADMIN_TOKEN]))

/** Asserts a run succeeded, showing its stderr when not. */
const succeeded = (run: Run) => {
  assert.isTrue(Exit.isSuccess(run.exit), `expected success, got ${String(run.exit)}\nstderr: ${run.stderr}`)
  return run
}

/** The typed failure a run ended with. */
const failure = (run: Run): unknown => {
  assert.isTrue(Exit.isFailure(run.exit), `expected a failure; stdout: ${run.stdout}`)
  const error = Exit.isFailure(run.exit) ? Cause.failureOption(run.exit.cause) : Option.none()
  assert.isTrue(Option.isSome(error), `expected a typed failure, got ${String(run.exit)}`)
  return Option.getOrThrow(error)
}

/** Asserts a run failed as a command (exit 1) and printed `message` on stderr. */
const failedWith = (run: Run, message: string) => {
  const error = failure(run)
  assert.instanceOf(error, CliFailure)
  assert.include(run.stderr, message)
  return run
}

/** Asserts a run was refused as bad usage (exit 2) without calling anything, mentioning `text` on stderr. */
const usageError = (run: Run, text: string) => {
  assert.isTrue(ValidationError.isValidationError(failure(run)), `expected a ValidationError, got ${String(run.exit)}`)
  assert.include(run.stderr, text)
  assert.strictEqual(run.stdout, "")
}

/** The one JSON document a `--json` run printed. */
const json = (run: Run): any => JSON.parse(run.stdout)

const catalogFile = Demo.catalogPath

/** A port nothing listens on: one the system just handed out and took back. */
const closedPort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "bundles-admin-cli-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

for (const target of targets) {
  describe(`admin CLI on ${target.name}`, () => {
    // Orders ending in 9999 stay pending long enough to resolve them by hand.
    layer(serverLayer(target, { BUNDLES_SIMULATOR_PENDING_SECONDS: "600" }), { timeout: 60_000 })((it) => {
      it.scoped("sets up a server from scratch", () =>
        Effect.gen(function*() {
          const file = JSON.parse(yield* Effect.promise(() => fs.readFile(catalogFile, "utf8")))
          const counts = {
            price_groups: file.price_groups.length,
            networks: file.networks.length,
            bundles: file.networks.reduce((n: number, network: any) => n + network.bundles.length, 0)
          }

          // A dry run says what the import would create, and changes nothing.
          const preview = succeeded(yield* admin("catalog", "import", catalogFile, "--dry-run"))
          assert.include(preview.stdout, `Dry run of ${catalogFile}: nothing was changed.`)
          assert.include(preview.stdout, `create network ${file.networks[0].slug}`)
          assert.include(preview.stdout, `create bundle ${file.networks[0].bundles[0].key}`)
          const previewJson = json(succeeded(yield* admin("catalog", "import", catalogFile, "--dry-run", "--json")))
          assert.strictEqual(previewJson.dry_run, true)
          assert.strictEqual(previewJson.bundles.created, counts.bundles)
          assert.strictEqual(previewJson.changes.length, counts.price_groups + counts.networks + counts.bundles)
          assert.deepStrictEqual(json(succeeded(yield* admin("catalog", "export", "--json"))).networks, [])

          // Catalogue: the first import creates everything, a second one changes nothing.
          const first = succeeded(yield* admin("catalog", "import", catalogFile))
          assert.include(first.stdout, `Imported ${catalogFile}`)
          assert.match(first.stdout, new RegExp(`bundles\\s+${counts.bundles}\\s+0\\s+0`))
          const again = json(succeeded(yield* admin("catalog", "import", catalogFile, "--json")))
          assert.deepStrictEqual(again, {
            success: true,
            price_groups: { created: 0, updated: 0, unchanged: counts.price_groups },
            networks: { created: 0, updated: 0, unchanged: counts.networks },
            bundles: { created: 0, updated: 0, unchanged: counts.bundles },
            changes: []
          })
          assert.include(
            succeeded(yield* admin("catalog", "import", catalogFile)).stdout,
            "The import changed nothing."
          )

          // The export is the file format: it re-imports without changing anything.
          const exported = succeeded(yield* admin("catalog", "export"))
          const exportedFile = JSON.parse(exported.stdout)
          assert.isUndefined(exportedFile.success)
          assert.deepStrictEqual(exportedFile.networks.map((n: any) => n.slug), file.networks.map((n: any) => n.slug))
          assert.strictEqual(exportedFile.networks[0].bundles[0].price, file.networks[0].bundles[0].price)
          const dir = yield* tempDir
          const copy = path.join(dir, "exported.json")
          yield* Effect.promise(() => fs.writeFile(copy, exported.stdout))
          const reimported = json(succeeded(yield* admin("catalog", "import", copy, "--json")))
          assert.strictEqual(reimported.bundles.unchanged, counts.bundles)
          assert.strictEqual(reimported.bundles.created + reimported.bundles.updated, 0)
          const exportJson = json(succeeded(yield* admin("catalog", "export", "--json")))
          assert.strictEqual(exportJson.success, true)
          assert.deepStrictEqual(exportJson.networks, exportedFile.networks)

          // Accounts: create prints the response body with --json.
          const created = json(
            succeeded(yield* admin("accounts", "create", "--name", "Kofi Data", "--price-group", "agent", "--json"))
          )
          assert.deepStrictEqual(Object.keys(created).sort(), [
            "created_at",
            "id",
            "name",
            "price_group",
            "status",
            "success"
          ])
          assert.strictEqual(created.success, true)
          assert.strictEqual(created.name, "Kofi Data")
          assert.strictEqual(created.price_group, "agent")
          assert.strictEqual(created.status, "active")
          assert.isTrue(Number.isInteger(created.id) && created.id > 0)
          assert.isFalse(Number.isNaN(Date.parse(created.created_at)))
          const id = String(created.id)

          const createdText = succeeded(yield* admin("accounts", "create", "--name", "Ama Bundles"))
          assert.match(createdText.stdout, /^Account \d+ created\./)
          assert.include(createdText.stdout, "none (base prices)")

          const shown = succeeded(yield* admin("accounts", "show", id))
          assert.include(shown.stdout, `Account ${id}: Kofi Data`)
          assert.include(shown.stdout, "main GHS 0.00, referral GHS 0.00, agent GHS 0.00")
          assert.include(shown.stdout, "rate limits     server defaults")

          // Update: limits set, one removed with =default, status, webhook.
          const limited = json(succeeded(
            yield* admin(
              "accounts",
              "update",
              id,
              "--limit",
              "all=600",
              "--limit",
              "orders=120",
              "--limit",
              "balance=300",
              "--json"
            )
          ))
          assert.deepStrictEqual(limited.limits, { all: 600, orders: 120, balance: 300 })
          assert.strictEqual(limited.success, true)
          const suspended = json(succeeded(
            yield* admin("accounts", "update", id, "--limit", "orders=default", "--status", "suspended", "--json")
          ))
          assert.deepStrictEqual(suspended.limits, { all: 600, balance: 300 })
          assert.strictEqual(suspended.status, "suspended")
          const reactivated = succeeded(
            yield* admin("accounts", "update", id, "--status", "active", "--webhook-url", "https://example.com/hook")
          )
          assert.include(reactivated.stdout, `Account ${id} updated.`)
          assert.include(reactivated.stdout, "status          active")
          assert.include(reactivated.stdout, "webhook url     https://example.com/hook")
          assert.include(reactivated.stdout, "all=600/min, balance=300/min")
          const admin_ = yield* adminClient
          const detail = yield* admin_.accounts.show({ path: { account_id: created.id } })
          assert.deepStrictEqual(detail.limits, { all: 600, balance: 300 })
          assert.strictEqual(detail.webhook_url, "https://example.com/hook")
          const cleared = json(succeeded(yield* admin("accounts", "update", id, "--webhook-url", "none", "--json")))
          assert.isNull(cleared.webhook_url)

          // Keys: the key is shown once; revoking marks it.
          const key = json(succeeded(yield* admin("keys", "create", "--account", id, "--json")))
          assert.deepStrictEqual(Object.keys(key).sort(), ["api_key", "id", "mode", "prefix", "success"])
          assert.isTrue(key.api_key.startsWith(key.prefix))
          const keyText = succeeded(yield* admin("keys", "create", "--account", id))
          assert.include(keyText.stdout, "it will not be shown again")
          assert.match(keyText.stdout, new RegExp(`API key \\d+ created for account ${id}`))
          const revoked = succeeded(yield* admin("keys", "revoke", "--account", id, "--key", String(key.id)))
          assert.include(revoked.stdout, `API key ${key.id} (prefix ${key.prefix}) of account ${id} revoked at`)
          const keys = (yield* admin_.accounts.show({ path: { account_id: created.id } })).keys
          assert.strictEqual(keys.length, 2)
          assert.isNotNull(keys.find((k) => k.id === key.id)!.revoked_at)
          assert.isNull(keys.find((k) => k.id !== key.id)!.revoked_at)

          // Wallet: exact amounts, no floats.
          const funded = succeeded(
            yield* admin("wallet", "fund", "--account", id, "--amount", "10.50", "--note", "MoMo")
          )
          assert.include(funded.stdout, `Funded the main wallet of account ${id} with GHS 10.50`)
          assert.match(funded.stdout, /main\s+GHS 10\.50/)
          const afterFunding = yield* admin_.accounts.show({ path: { account_id: created.id } })
          assert.strictEqual(afterFunding.balance.main, 1050n)
          const agentFunding = json(succeeded(
            yield* admin("wallet", "fund", "--account", id, "--amount", "0.07", "--wallet", "agent", "--json")
          ))
          assert.deepStrictEqual(agentFunding.balance, { main: 10.5, referral: 0, agent: 0.07 })
          assert.strictEqual(agentFunding.entry.amount, 0.07)
          assert.strictEqual(agentFunding.entry.reason, "funding")

          // An adjustment past the balance fails (exit 1) with the API's message, and its body with --json.
          const overdrawn = failedWith(
            yield* admin("wallet", "adjust", "--account", id, "--amount", "-20.00", "--note", "Reversal"),
            ""
          )
          assert.isNotEmpty(overdrawn.stderr)
          assert.strictEqual(overdrawn.stdout, "")
          const overdrawnJson = yield* admin(
            "wallet",
            "adjust",
            "--account",
            id,
            "--amount",
            "-20.00",
            "--note",
            "Reversal",
            "--json"
          )
          failedWith(overdrawnJson, "")
          const body = json(overdrawnJson)
          assert.strictEqual(body._tag, "InsufficientBalance")
          assert.strictEqual(body.success, false)
          assert.strictEqual(body.balance, 10.5)
          assert.strictEqual(body.required, 20)
          assert.strictEqual(body.code, "insufficient_balance")
          // The message on stderr names the request, for the server's log.
          assert.strictEqual(overdrawnJson.stderr, `${body.message} (request id ${body.request_id})`)
          assert.strictEqual((yield* admin_.accounts.show({ path: { account_id: created.id } })).balance.main, 1050n)

          const adjusted = succeeded(
            yield* admin("wallet", "adjust", "--account", id, "--amount", "-0.50", "--note", "Fee correction")
          )
          assert.include(adjusted.stdout, `Adjusted the main wallet of account ${id} by GHS -0.50`)
          assert.strictEqual((yield* admin_.accounts.show({ path: { account_id: created.id } })).balance.main, 1000n)

          // Ledger and audit.
          const ledger = succeeded(yield* admin("wallet", "ledger", "--account", id))
          assert.match(ledger.stdout, /adjustment\s+GHS -0\.50\s+GHS 10\.00\s+-\s+Fee correction/)
          assert.match(ledger.stdout, /funding\s+GHS 10\.50\s+GHS 10\.50\s+-\s+MoMo/)
          assert.include(ledger.stdout, "Page 1 of 1 (3 entries in all)")
          const mainLedger = json(
            succeeded(
              yield* admin("wallet", "ledger", "--account", id, "--wallet", "main", "--per-page", "1", "--json")
            )
          )
          assert.strictEqual(mainLedger.entries.length, 1)
          assert.deepStrictEqual(mainLedger.pagination, { current_page: 1, per_page: 1, total: 2, last_page: 2 })
          assert.strictEqual(mainLedger.entries[0].amount, -0.5)

          const list = json(succeeded(yield* admin("accounts", "list", "--json")))
          const listed = list.accounts.find((a: any) => a.id === created.id)
          assert.deepStrictEqual(listed.balance, { main: 10, referral: 0, agent: 0.07 })
          assert.strictEqual(list.pagination.total, 2)
          const listText = succeeded(yield* admin("accounts", "list", "--status", "active"))
          assert.match(
            listText.stdout,
            new RegExp(`${id}\\s+Kofi Data\\s+active\\s+agent\\s+GHS 10\\.00\\s+GHS 0\\.00`)
          )

          const audit = succeeded(yield* admin("audit"))
          assert.match(audit.stdout, /^Audit OK: \d+ wallets, \d+ ledger entries, \d+ orders checked, no problems\.$/)
          const auditJson = json(succeeded(yield* admin("audit", "--json")))
          assert.strictEqual(auditJson.ok, true)
          assert.deepStrictEqual(auditJson.mismatches, [])
        }))

      it.effect("shows the email outbox; lists, approves and declines manual transfers, crediting once", () =>
        Effect.gen(function*() {
          const email = `cli-${Date.now().toString(36)}@example.com`
          const password = "a long enough password"
          yield* raw("POST", "/dashboard/v1/register", {
            body: { name: "Efua Boateng", email, phone: "0201234567", password }
          })
          const outbox = succeeded(yield* admin("emails", "--to", email))
          // The operator sees the email and where its link goes, never the link's live token.
          assert.match(outbox.stdout, /https?:\/\/\S+#\/verify-email\?token=\[hidden\]/)
          const { link } = yield* mailed(email)
          assert.notInclude(outbox.stdout, /token=([A-Za-z0-9_-]+)/.exec(link!)![1]!)
          assert.include(outbox.stdout, "(1 email in all)")
          // Without an SMTP server nothing can be queued again (the email was kept): refused, with why.
          const kept = json(succeeded(yield* admin("emails", "--to", email, "--json"))).emails[0]
          failedWith(yield* admin("emails", "requeue", String(kept.id)), "No SMTP server is configured")
          failedWith(yield* admin("emails", "requeue", "2147483647"), "No email with id 2147483647")
          usageError(yield* admin("emails", "requeue", "0"), "ID")
          yield* raw("POST", "/dashboard/v1/email/verify", {
            body: { token: /token=([A-Za-z0-9_-]+)/.exec(link!)![1] }
          })
          const signedIn = yield* raw("POST", "/dashboard/v1/session", { body: { email, password } })
          const headers = {
            cookie: `bundles_session=${/bundles_session=([^;]+)/.exec(signedIn.headers["set-cookie"]!)![1]}`,
            "x-csrf-token": signedIn.json.csrf_token
          }
          const transfer = (key: string, amount: number) =>
            Effect.map(
              raw("POST", "/dashboard/v1/payments", {
                body: { method: "manual_transfer", amount, note: "GCB transfer" },
                headers: { ...headers, "idempotency-key": key }
              }),
              (r) => r.json.payment.payment_number as string
            )
          const first = yield* transfer("cli-1", 75)
          const second = yield* transfer("cli-2", 20)

          const pending = succeeded(yield* admin("payments", "list", "--status", "pending", "--json"))
          const numbers = JSON.parse(pending.stdout).payments.map((p: { payment_number: string }) => p.payment_number)
          assert.includeMembers(numbers, [first, second])
          // Nothing was reversed after its credit (Paystack.test.ts reverses one).
          const reversed = JSON.parse(succeeded(yield* admin("payments", "list", "--reversed", "--json")).stdout)
          assert.deepStrictEqual(reversed.payments, [])

          const approved = succeeded(yield* admin("payments", "approve", first))
          assert.include(approved.stdout, "GHS 75.00 credited")
          failedWith(yield* admin("payments", "approve", first), "already successful")
          succeeded(yield* admin("payments", "decline", second, "--reason", "No transfer arrived"))
          const shown = JSON.parse(succeeded(yield* admin("payments", "show", second, "--json")).stdout)
          assert.strictEqual(shown.payment.status, "failed")
          assert.include(shown.payment.failure_reason, "No transfer arrived")
          const accountId = JSON.parse(succeeded(yield* admin("payments", "show", first, "--json")).stdout).payment
            .account_id
          const client = yield* adminClient
          const ledger = yield* client.wallets.ledger({ path: { account_id: accountId }, urlParams: {} })
          assert.deepStrictEqual(ledger.entries.map((e) => e.amount), [7_500n])
          assert.include(ledger.entries[0]!.note!, first)
        }))

      it.effect("lists, shows and resolves a stuck order", () =>
        Effect.gen(function*() {
          yield* seedCatalog
          const api = yield* adminClient
          const account = yield* api.accounts.create({ payload: { name: "Pending Orders Ltd" } })
          yield* api.wallets.fund({
            headers: {},
            path: { account_id: account.id },
            payload: { amount: 10_000n, wallet: "main" }
          })
          const key = yield* api.apiKeys.create({ path: { account_id: account.id }, urlParams: {} })
          const reseller = yield* resellerClient(key.api_key)
          const { networks } = yield* reseller.catalog.networks()
          const { bundles } = yield* reseller.catalog.bundles({ path: { network_id: networks[0]!.id } })
          const bundle = bundles.find((b) => b.is_active)!
          const placed = yield* reseller.orders.place({
            payload: { bundle_id: bundle.id, phone_number: "0249999999", reference: "stuck-1" }
          })
          assert.strictEqual(placed.order.status, "pending")
          const number = placed.order.order_number
          const id = String(account.id)
          const afterOrder = (yield* api.accounts.show({ path: { account_id: account.id } })).balance.main

          const pending = json(succeeded(yield* admin("orders", "list", "--status", "pending", "--json")))
          const listed = pending.orders.find((o: any) => o.order_number === number)
          assert.strictEqual(listed.account_id, account.id)
          assert.strictEqual(listed.status, "pending")
          const mine = succeeded(yield* admin("orders", "list", "--account", id))
          assert.match(
            mine.stdout,
            new RegExp(
              `${number}\\s+\\d{4}-\\d{2}-\\d{2} \\S+Z\\s+${id}\\s+.*0249999999\\s+GHS \\d+\\.\\d{2}\\s+pending\\s+stuck-1`
            )
          )
          assert.include(mine.stdout, "Page 1 of 1 (1 order in all)")
          // Found by its number, written any way, and by its reference; another number finds nothing.
          for (
            const search of [["--phone", "+233 24 999 9999"], ["--phone", "0249999999"], ["--reference", "stuck-1"]]
          ) {
            const found = json(succeeded(yield* admin("orders", "list", ...search, "--json")))
            assert.deepStrictEqual(found.orders.map((o: any) => o.order_number), [number], search.join(" "))
          }
          const none = succeeded(yield* admin("orders", "list", "--phone", "0201111111"))
          assert.strictEqual(none.stdout, "No orders.")
          usageError(yield* admin("orders", "list", "--phone", "12345"), "--phone")
          usageError(
            yield* admin("orders", "resolve", number, "--status", "successful", "--note", "why"),
            "--note is kept on the refund"
          )

          const shown = succeeded(yield* admin("orders", "show", number))
          assert.match(shown.stdout, new RegExp(`order\\s+${number}`))
          assert.match(shown.stdout, /status\s+pending/)
          assert.match(shown.stdout, /reference\s+stuck-1/)

          const resolved = json(
            succeeded(
              yield* admin("orders", "resolve", number, "--status", "failed", "--note", "MTN ticket 88121", "--json")
            )
          )
          assert.strictEqual(resolved.success, true)
          assert.strictEqual(resolved.order.order_number, number)
          assert.strictEqual(resolved.order.status, "failed")
          const refunded = (yield* api.accounts.show({ path: { account_id: account.id } })).balance.main
          assert.strictEqual(refunded, 10_000n)
          assert.isTrue(afterOrder < refunded)
          // The operator's note is kept in the ledger, on the refund.
          const ledger = json(succeeded(yield* admin("wallet", "ledger", "--account", id, "--json")))
          const refund = ledger.entries.find((e: any) => e.reason === "refund")
          assert.strictEqual(refund.order_number, number)
          assert.strictEqual(refund.note, "MTN ticket 88121")

          // A settled order cannot be resolved again; an unknown one is not found.
          failedWith(yield* admin("orders", "resolve", number, "--status", "successful"), "")
          const unknown = yield* admin("orders", "show", "ORD-000000000000", "--json")
          failedWith(unknown, "")
          assert.strictEqual(json(unknown)._tag, "OrderNotFound")
          assert.strictEqual(`${json(unknown).message} (request id ${json(unknown).request_id})`, unknown.stderr)
          const audit = json(succeeded(yield* admin("audit", "--json")))
          assert.strictEqual(audit.ok, true)
        }))

      it.scoped("fails with the API's message, exit 1", () =>
        Effect.gen(function*() {
          const url = yield* serverUrl

          const wrongToken = yield* runCli(["admin", "audit", "--url", url, "--token", "adm_wrong"])
          failedWith(wrongToken, "")
          assert.isNotEmpty(wrongToken.stderr)
          assert.strictEqual(wrongToken.stdout, "")
          const wrongTokenJson = yield* runCli(["admin", "accounts", "list", "--json", "--url", url, "--token", "nope"])
          failedWith(wrongTokenJson, "")
          assert.strictEqual(json(wrongTokenJson)._tag, "Unauthorized")

          const missing = yield* admin("accounts", "show", "999999")
          const notFound = yield* (yield* adminClient).accounts.show({ path: { account_id: 999999 as any } }).pipe(
            Effect.flip
          )
          failedWith(missing, notFound.message)
          assert.match(missing.stderr, new RegExp(`^${notFound.message} \\(request id req_[0-9a-f]{16}\\)$`))
          const missingJson = yield* admin("accounts", "show", "999999", "--json")
          failedWith(missingJson, notFound.message)
          const missingBody = json(missingJson)
          assert.deepStrictEqual(missingBody, {
            _tag: "AccountNotFound",
            success: false,
            code: "account_not_found",
            message: notFound.message,
            request_id: missingBody.request_id
          })
          assert.match(missingBody.request_id, /^req_[0-9a-f]{16}$/)
          assert.include(missingJson.stderr, missingBody.request_id)
          failedWith(yield* admin("wallet", "fund", "--account", "999999", "--amount", "1"), notFound.message)

          // A server that is not there: one line naming the URL.
          const closed = yield* closedPort
          const unreachable = yield* runCli(["admin", "audit", "--url", `http://127.0.0.1:${closed}`, "--token", "t"])
          failedWith(unreachable, `Cannot reach the server at http://127.0.0.1:${closed} (ECONNREFUSED)`)
          assert.notInclude(unreachable.stderr, "\n")

          // A catalogue file that does not decode: every problem with its place, nothing sent.
          const dir = yield* tempDir
          const bad = path.join(dir, "bad.json")
          yield* Effect.promise(() =>
            fs.writeFile(
              bad,
              JSON.stringify({
                networks: [{
                  slug: "mtn",
                  name: "MTN",
                  color: "yellow",
                  delivery: "now",
                  bundles: [{ key: "mtn-1gb", size: "1GB", name: "MTN 1GB", price: 1.234 }]
                }]
              })
            )
          )
          const invalid = yield* admin("catalog", "import", bad, "--json")
          failedWith(invalid, `${bad} is not a valid catalogue file`)
          assert.include(invalid.stderr, "networks[0].color:")
          assert.include(
            invalid.stderr,
            "networks[0].bundles[0].price: must be an amount in cedis with at most 2 decimals"
          )
          const invalidBody = json(invalid)
          assert.strictEqual(invalidBody._tag, "ValidationError")
          assert.deepStrictEqual(Object.keys(invalidBody.errors).sort(), [
            "networks[0].bundles[0].price",
            "networks[0].color"
          ])
          const notJson = path.join(dir, "not.json")
          yield* Effect.promise(() => fs.writeFile(notJson, "{ networks: "))
          failedWith(yield* admin("catalog", "import", notJson), `${notJson} is not JSON`)
        }))

      it.scoped("finds the token in the environment or the data directory", () =>
        Effect.gen(function*() {
          const url = yield* serverUrl
          const viaEnv = yield* runCli(["admin", "audit", "--json"], {
            BUNDLES_ADMIN_URL: url,
            BUNDLES_ADMIN_TOKEN: ADMIN_TOKEN
          })
          assert.strictEqual(json(succeeded(viaEnv)).ok, true)

          const dir = yield* tempDir
          const empty = yield* runCli(["admin", "audit", "--url", url], { BUNDLES_DATA_DIR: dir })
          failedWith(empty, "No admin token: pass --token, set BUNDLES_ADMIN_TOKEN")
          assert.include(empty.stderr, path.join(dir, "admin-token"))
          assert.notInclude(empty.stderr, "\n")

          yield* Effect.promise(() => fs.writeFile(path.join(dir, "admin-token"), `${ADMIN_TOKEN}\n`))
          const viaFile = yield* runCli(["admin", "audit", "--url", url], { BUNDLES_DATA_DIR: dir })
          assert.include(succeeded(viaFile).stdout, "Audit OK")
        }))

      it.effect("creates, lists and disables operators; shows the action log", () =>
        Effect.gen(function*() {
          const email = `cli${Date.now().toString(36)}@example.com`
          const created = succeeded(yield* admin("operators", "create", "--email", email, "--name", "Esi", "--json"))
          const operator = JSON.parse(created.stdout).operator
          assert.strictEqual(operator.email, email)
          assert.strictEqual(operator.role, "operator", "the default role")
          const ownerEmail = `cli3${Date.now().toString(36)}@example.com`
          const owner = succeeded(
            yield* admin("operators", "create", "--email", ownerEmail, "--name", "Ama", "--role", "owner")
          )
          assert.match(owner.stdout, /^Owner \d+ created/)
          const ownerId = /^Owner (\d+)/.exec(owner.stdout)![1]!
          assert.include(
            succeeded(yield* admin("operators", "set-role", ownerId, "operator")).stdout,
            "is now an operator"
          )
          assert.match(succeeded(yield* admin("operators", "list")).stdout, new RegExp(`${ownerEmail}  Ama  operator`))
          usageError(yield* admin("operators", "set-role", ownerId, "admin"), "owner, operator")
          usageError(
            yield* admin("operators", "create", "--email", ownerEmail, "--name", "Ama", "--role", "root"),
            "owner, operator"
          )
          // Without --password-stdin a password is made and printed once; it signs in.
          const other = `cli2${Date.now().toString(36)}@example.com`
          const made = succeeded(yield* admin("operators", "create", "--email", other, "--name", "Yaw"))
          const password = /^ {2}(\S+)$/m.exec(made.stdout)![1]!
          assert.isAtLeast(password.length, 10)
          const signedIn = yield* raw("POST", "/console/v1/session", { body: { email: other, password } })
          assert.strictEqual(signedIn.status, 200, signedIn.text)
          const listed = succeeded(yield* admin("operators", "list"))
          assert.include(listed.stdout, email)
          assert.include(listed.stdout, "active")
          failedWith(
            yield* admin("operators", "create", "--email", email, "--name", "Esi"),
            "already exists"
          )
          // reset-password: a new password made and printed once; the old one and its session stop working.
          const cookie = /bundles_operator=([^;]*)/.exec(String(signedIn.headers["set-cookie"]))![1]!
          const reset = succeeded(yield* admin("operators", "reset-password", other))
          assert.include(reset.stdout, "their sessions are ended")
          const newPassword = /^ {2}(\S+)$/m.exec(reset.stdout)![1]!
          assert.notStrictEqual(newPassword, password)
          const stale = yield* raw("GET", "/console/v1/session", { headers: { cookie: `bundles_operator=${cookie}` } })
          assert.strictEqual(stale.status, 401, stale.text)
          const oldSignIn = yield* raw("POST", "/console/v1/session", { body: { email: other, password } })
          assert.strictEqual(oldSignIn.status, 401, oldSignIn.text)
          const newSignIn = yield* raw("POST", "/console/v1/session", { body: { email: other, password: newPassword } })
          assert.strictEqual(newSignIn.status, 200, newSignIn.text)
          const resetLog = JSON.parse(
            succeeded(yield* admin("actions", "--action", "operator.password_reset", "--json")).stdout
          ).actions
          assert.strictEqual(resetLog[0].summary, `Set a new password for operator ${other}; their sessions ended`)
          failedWith(yield* admin("operators", "reset-password", "nobody@example.com"), "No operator signs in with")
          usageError(yield* admin("operators", "reset-password", "not-an-email"), "EMAIL")
          succeeded(yield* admin("operators", "disable", String(operator.id)))
          assert.include(succeeded(yield* admin("operators", "list")).stdout, "disabled")
          const log = succeeded(yield* admin("actions", "--action", "operator.disable", "--json"))
          const lines = JSON.parse(log.stdout).actions
          assert.strictEqual(lines[0].target_id, String(operator.id))
          assert.strictEqual(lines[0].actor_kind, "token")
          const text = succeeded(
            yield* admin("actions", "--target-kind", "operator", "--target-id", String(operator.id))
          )
          assert.include(text.stdout, "admin token")
          assert.include(text.stdout, "operator.create")
          assert.match(text.stdout, /\(\d+ actions? in all\)/)
          assert.notInclude(text.stdout, "actionss")
          const queue = succeeded(
            yield* admin("orders", "list", "--status", "pending", "--older-than", "30", "--oldest-first", "--json")
          )
          assert.isArray(JSON.parse(queue.stdout).orders)
          failedWith(yield* admin("orders", "list", "--older-than", "0"), "must be an integer from 1 to 525600")
          usageError(yield* admin("actions", "--action", "wallet.steal"), "operator.disable")
          usageError(yield* admin("operators", "create", "--email", "not-an-email", "--name", "x"), "--email")
          usageError(yield* admin("operators", "disable", "0"), "ID")
        }))

      it.effect("refuses bad usage before calling anything (exit 2)", () =>
        Effect.gen(function*() {
          usageError(yield* admin("wallet", "fund", "--account", "1", "--amount", "1.234"), "--amount")
          usageError(yield* admin("wallet", "fund", "--account", "1", "--amount", "0"), "--amount")
          usageError(yield* admin("wallet", "fund", "--account", "1", "--amount", "ten"), "--amount")
          usageError(yield* admin("wallet", "adjust", "--account", "1", "--amount", "0.00", "--note", "x"), "--amount")
          usageError(yield* admin("wallet", "adjust", "--account", "1", "--amount", "-1"), "--note")
          usageError(
            yield* admin("wallet", "fund", "--account", "1", "--amount", "1", "--wallet", "savings"),
            "main, referral, agent"
          )
          usageError(yield* admin("accounts", "update", "1", "--limit", "bogus=5"), "bogus")
          usageError(yield* admin("accounts", "update", "1", "--limit", "orders=0"), "--limit orders")
          usageError(yield* admin("accounts", "update", "1", "--limit", "orders=lots"), "--limit orders=lots")
          usageError(yield* admin("accounts", "update", "1", "--limit", "all=1", "--limit", "all=2"), "--limit all")
          usageError(yield* admin("accounts", "update", "1", "--status", "frozen"), "active, suspended")
          usageError(yield* admin("accounts", "update", "1", "--webhook-url", "ftp://x"), "--webhook-url")
          usageError(yield* admin("accounts", "create", "--name", "x", "--price-group", "Bad Group"), "--price-group")
          usageError(yield* admin("accounts", "list", "--per-page", "500"), "--per-page")
          usageError(yield* admin("accounts", "show", "0"), "ID")
          usageError(yield* admin("orders", "resolve", "ORD-000000000000", "--status", "pending"), "successful, failed")
          usageError(yield* admin("keys", "revoke", "--account", "1"), "--key")
          usageError(yield* runCli(["admin", "audit", "--url", "not a url", "--token", "t"]), "--url")
        }))
    })
  })
}
