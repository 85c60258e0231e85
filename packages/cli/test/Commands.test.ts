/**
 * Every command but `bulk` end to end, in-process against the whole server on a real port:
 * what it prints for people and with `--json`, its exit status, and where its key comes from.
 */
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  ADMIN_TOKEN,
  envFor,
  expectCode,
  json,
  ordersOf,
  runCli,
  startServer,
  tempDir,
  type TestAccount,
  type TestServer
} from "./Harness.js"

/** Generous limits, so that only the tests about pacing meet the rate limit. */
const roomy = { all: 1000, orders: 1000, balance: 1000 }

for (const target of targets) {
  describe(`commands on ${target.name}`, () => {
    let server: TestServer
    let account: TestAccount
    beforeAll(async () => {
      server = await startServer(target)
      account = await server.account({ funds: 100_000n, limits: roomy })
    })
    afterAll(() => server?.dispose())

    const env = (dir: string, key = account.key) => envFor(server.baseUrl, key, dir)

    it.scopedLive("balance: the three wallets, GHS with two decimals, and the response body with --json", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 12_345n }))
        const text = expectCode(yield* runCli(["balance"], env(dir, key)), 0)
        assert.match(text.stdout, /Main wallet\s+GHS 123\.45/)
        assert.match(text.stdout, /Referral wallet\s+GHS 0\.00/)
        assert.strictEqual(text.stderr, "")
        const body = json(expectCode(yield* runCli(["balance", "--json"], env(dir, key)), 0))
        assert.deepStrictEqual(body, { success: true, balance: { main: 123.45, referral: 0, agent: 0 } })
      }))

    it.scopedLive("a suspended account's key: told so plainly, without sending the reseller to check the key", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const suspended = yield* Effect.promise(() => server.account({ funds: 100n }))
        yield* Effect.promise(() =>
          fetch(`${server.origin}/admin/v1/accounts/${suspended.id}`, {
            method: "PATCH",
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
            body: JSON.stringify({ status: "suspended" })
          })
        )
        const refused = expectCode(yield* runCli(["balance"], env(dir, suspended.key)), 1)
        assert.include(refused.stderr, "This account is suspended")
        assert.notInclude(refused.stderr, "check the API key")
        const body = json(expectCode(yield* runCli(["balance", "--json"], env(dir, suspended.key)), 1))
        assert.strictEqual(body.reason, "account_suspended")
      }))

    it.scopedLive("networks: a table, colour swatches only when colour is on, and --json", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const plain = expectCode(yield* runCli(["networks"], env(dir)), 0)
        for (const name of server.networks.keys()) assert.include(plain.stdout, name)
        assert.notMatch(plain.stdout, /\x1b\[/)
        const colored = expectCode(yield* runCli(["networks"], env(dir), { color: true }), 0)
        // MTN's #FFCC00 as a 24-bit colour.
        assert.include(colored.stdout, "\x1b[38;2;255;204;0m●\x1b[39m MTN")
        const body = json(expectCode(yield* runCli(["networks", "--json"], env(dir)), 0))
        assert.isTrue(body.success)
        assert.sameMembers(body.networks.map((n: any) => n.name), [...server.networks.keys()])
      }))

    it.scopedLive("bundles: by id or slug, inactive ones marked, unknown ones an error", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const mtn = server.networks.get("MTN")!
        const bySlug = expectCode(yield* runCli(["bundles", "mtn"], env(dir)), 0)
        const byId = expectCode(yield* runCli(["bundles", String(mtn)], env(dir)), 0)
        assert.strictEqual(bySlug.stdout, byId.stdout)
        assert.match(bySlug.stdout, /MTN 1GB\s+1GB\s+GHS 5\.50/)
        assert.match(bySlug.stdout, /MTN 4GB .*unavailable/)
        const body = json(expectCode(yield* runCli(["bundles", "telecel", "--json"], env(dir)), 0))
        assert.strictEqual(body.network, "Telecel")
        assert.deepStrictEqual(
          body.bundles.find((b: any) => b.name === "Telecel 2GB"),
          {
            id: server.bundle("Telecel 2GB").id,
            size: "2GB",
            name: "Telecel 2GB",
            price: 9.5,
            badge: "Non-expiry",
            is_active: true
          }
        )
        const unknown = expectCode(yield* runCli(["bundles", "nope", "--json"], env(dir)), 1)
        assert.include(unknown.stderr, "No active network nope")
        assert.strictEqual(json(unknown).success, false)
      }))

    it.scopedLive("buy: normalises the number, shows the order, and --json prints the response body", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { id, key } = yield* Effect.promise(() => server.account({ funds: 10_000n, limits: roomy }))
        const bundle = server.bundle("MTN 1GB")
        const text = expectCode(
          yield* runCli(["buy", String(bundle.id), "+233", "24", "123", "4567", "--reference", "inv-1"], env(dir, key)),
          0
        )
        assert.match(text.stdout, /Order ORD-[0-9A-Z]{12}\s+successful/)
        assert.match(text.stdout, /phone\s+0241234567/)
        assert.match(text.stdout, /Main wallet: GHS 94\.50/)
        // The same reference again: the same order, nothing charged.
        const again = json(
          expectCode(
            yield* runCli(["buy", String(bundle.id), "024-123-4567", "--reference", "inv-1", "--json"], env(dir, key)),
            0
          )
        )
        assert.strictEqual(again.order.reference, "inv-1")
        assert.strictEqual(again.order.phone_number, "0241234567")
        assert.strictEqual(again.order.amount_paid, 5.5)
        assert.strictEqual(again.wallet_balance, 94.5)
        assert.strictEqual(yield* Effect.promise(() => server.mainBalance(id)), 10_000n - bundle.price)
        const orders = yield* Effect.promise(() => ordersOf(server.baseUrl, key))
        assert.strictEqual(orders.length, 1)
      }))

    it.scopedLive("buy: warns about a number of another network, but buys", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const run = expectCode(
          yield* runCli(["buy", String(server.bundle("MTN 1GB").id), "0201234567", "--json"], env(dir)),
          0
        )
        assert.include(
          run.stderr,
          "the prefix of 0201234567 (020) belongs to Telecel, but MTN 1GB is on the MTN network"
        )
        assert.strictEqual(json(run).order.status, "successful")
        // The server's answer carries its own word on the number.
        assert.deepStrictEqual(json(run).warnings.map((w: { code: string }) => w.code), ["network_mismatch"])
      }))

    it.scopedLive("buy: warns about a prefix no network uses, but buys", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const run = expectCode(
          yield* runCli(["buy", String(server.bundle("MTN 1GB").id), "0281234567", "--json"], env(dir)),
          0
        )
        assert.include(run.stderr, "the prefix of 0281234567 (028) belongs to no Ghana mobile network we know")
        assert.deepStrictEqual(json(run).warnings.map((w: { code: string }) => w.code), ["unknown_prefix"])
        assert.strictEqual(json(run).order.status, "successful")
      }))

    it.scopedLive("buy: asks on a terminal unless --yes; a no buys nothing; without a terminal it does not ask", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 10_000n, limits: roomy }))
        const id = String(server.bundle("Telecel 2GB").id)
        const declined = expectCode(
          yield* runCli(["buy", id, "0501234567"], env(dir, key), { interactive: true, answers: ["n"] }),
          1
        )
        assert.include(
          declined.stderr,
          "Buy Telecel 2GB (Telecel) for 0501234567 at GHS 9.50? Main wallet GHS 100.00 → GHS 90.50."
        )
        assert.include(declined.stderr, "Cancelled: nothing was bought")
        const ended = expectCode(yield* runCli(["buy", id, "0501234567"], env(dir, key), { interactive: true }), 1)
        assert.include(ended.stderr, "Cancelled")
        assert.strictEqual((yield* Effect.promise(() => ordersOf(server.baseUrl, key))).length, 0)

        expectCode(yield* runCli(["buy", id, "0501234567"], env(dir, key), { interactive: true, answers: ["yes"] }), 0)
        const forced = expectCode(
          yield* runCli(["buy", id, "0501234567", "-y"], env(dir, key), { interactive: true }),
          0
        )
        assert.notInclude(forced.stderr, "?")
        const piped = expectCode(yield* runCli(["buy", id, "0501234567"], env(dir, key)), 0)
        assert.notInclude(piped.stderr, "?")
        assert.strictEqual((yield* Effect.promise(() => ordersOf(server.baseUrl, key))).length, 3)
      }))

    it.scopedLive("buy: a failed order exits 1; an unknown or inactive bundle or a bad number buys nothing", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 10_000n, limits: roomy }))
        const failed = expectCode(
          yield* runCli(["buy", String(server.bundle("MTN 1GB").id), "0241230000"], env(dir, key)),
          1
        )
        assert.match(failed.stdout, /failed/)
        assert.include(failed.stderr, "refunded")
        assert.include(
          expectCode(yield* runCli(["buy", "99999", "0241234567"], env(dir, key)), 1).stderr,
          "No bundle 99999"
        )
        const inactive = expectCode(
          yield* runCli(["buy", String(server.bundle("MTN 4GB").id), "0241234567"], env(dir, key)),
          1
        )
        assert.include(inactive.stderr, "MTN 4GB")
        assert.include(inactive.stderr, "is not available")
        const badPhone = expectCode(yield* runCli(["buy", "1", "12345"], env(dir, key)), 2)
        assert.include(badPhone.stderr, "\"12345\" is not a Ghana mobile number")
        const badReference = expectCode(
          yield* runCli(["buy", "1", "0241234567", "--reference", "a b"], env(dir, key)),
          2
        )
        assert.include(badReference.stderr, "--reference")
        const poor = yield* Effect.promise(() => server.account({ funds: 100n, limits: roomy }))
        const broke = expectCode(yield* runCli(["buy", "1", "0241234567", "--json"], env(dir, poor.key)), 1)
        assert.include(broke.stderr, "Insufficient balance: the main wallet has GHS 1.00, this needs GHS 5.50")
        assert.deepInclude(json(broke), { success: false, balance: 1, required: 5.5, code: "insufficient_balance" })
        // The server's request id, in the body and after the message, to quote to the operator.
        assert.match(json(broke).request_id, /^req_[0-9a-f]{16}$/)
        assert.include(broke.stderr, `(request id ${json(broke).request_id})`)
        assert.strictEqual((yield* Effect.promise(() => ordersOf(server.baseUrl, key))).length, 1)
      }))

    it.scopedLive("orders list and get: tables, pages, filters, every page with --all, and --json bodies", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 100_000n, limits: roomy }))
        const id = String(server.bundle("AirtelTigo iShare 500MB").id)
        for (const phone of ["0261110001", "0261110002", "0261110003", "0261110000"]) {
          yield* runCli(["buy", id, phone], env(dir, key))
        }
        const page = expectCode(yield* runCli(["orders", "list", "--per-page", "2"], env(dir, key)), 0)
        assert.include(page.stdout, "Page 1 of 2 (4 orders in all)")
        assert.strictEqual(page.stdout.split("\n").filter((l) => l.startsWith("ORD-")).length, 2)
        const failed = json(
          expectCode(yield* runCli(["orders", "list", "--status", "failed", "--json"], env(dir, key)), 0)
        )
        assert.deepStrictEqual(failed.orders.map((o: any) => o.phone_number), ["0261110000"])
        assert.deepStrictEqual(failed.pagination, { current_page: 1, per_page: 20, total: 1, last_page: 1 })
        const all = json(
          expectCode(yield* runCli(["orders", "list", "--all", "--per-page", "1", "--json"], env(dir, key)), 0)
        )
        assert.strictEqual(all.orders.length, 4)
        expectCode(yield* runCli(["orders", "list", "--all", "--page", "2"], env(dir, key)), 2)
        expectCode(yield* runCli(["orders", "list", "--per-page", "51"], env(dir, key)), 2)
        // A usage error under --json prints the failure document too.
        const usage = expectCode(yield* runCli(["orders", "list", "--per-page", "51", "--json"], env(dir, key)), 2)
        assert.deepStrictEqual(Object.keys(json(usage)).sort(), ["message", "success"])
        assert.strictEqual(json(usage).success, false)
        assert.include(json(usage).message, "--per-page")

        // Filters: the number written any way, the reference, and a range of days.
        const byPhone = json(
          expectCode(yield* runCli(["orders", "list", "--phone", "+233 26 111 0002", "--json"], env(dir, key)), 0)
        )
        assert.deepStrictEqual(byPhone.orders.map((o: any) => o.phone_number), ["0261110002"])
        const reference = byPhone.orders[0].reference
        const byReference = expectCode(yield* runCli(["orders", "list", "--reference", reference], env(dir, key)), 0)
        assert.include(byReference.stdout, "(1 order in all)")
        const today = new Date().toISOString().slice(0, 10)
        const inRange = json(
          expectCode(yield* runCli(["orders", "list", "--from", today, "--to", today, "--json"], env(dir, key)), 0)
        )
        assert.strictEqual(inRange.pagination.total, 4)
        const before = expectCode(
          yield* runCli(["orders", "list", "--from", "2020-01-01", "--to", "2020-12-31"], env(dir, key)),
          0
        )
        assert.strictEqual(before.stdout, "No orders.")
        expectCode(yield* runCli(["orders", "list", "--from", "yesterday"], env(dir, key)), 2)
        expectCode(yield* runCli(["orders", "list", "--phone", "12345"], env(dir, key)), 2)

        const number = all.orders[0].order_number
        const shown = expectCode(yield* runCli(["orders", "get", number], env(dir, key)), 0)
        assert.include(shown.stdout, `Order ${number}`)
        assert.match(shown.stdout, /network\s+AirtelTigo iShare/)
        const body = json(expectCode(yield* runCli(["orders", "get", number, "--json"], env(dir, key)), 0))
        assert.strictEqual(body.order.order_number, number)
        assert.strictEqual(body.order.amount_paid, 2.5)
        const missing = expectCode(yield* runCli(["orders", "get", "ORD-000000000000", "--json"], env(dir, key)), 1)
        assert.strictEqual(json(missing).success, false)
        assert.strictEqual(json(missing)._tag, "OrderNotFound")
      }))

    it.scopedLive("orders watch: waits for a pending order; its exit status is the outcome", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const id = String(server.bundle("MTN 1GB").id)
        // Numbers ending in 9999 stay pending for a second on the test server; 0000 fail at once.
        const pending = json(yield* runCli(["buy", id, "0241239999", "--json"], env(dir)))
        assert.strictEqual(pending.order.status, "pending")
        const watched = expectCode(yield* runCli(["orders", "watch", pending.order.order_number], env(dir)), 0)
        assert.include(watched.stderr, "is pending; waiting until it settles")
        assert.match(watched.stdout, /successful/)

        const failed = json(yield* runCli(["buy", id, "0241230000", "--json"], env(dir)))
        const watchedFailed = expectCode(
          yield* runCli(["orders", "watch", failed.order.order_number, "--json"], env(dir)),
          1
        )
        // The document agrees with the exit status, and says why.
        assert.strictEqual(json(watchedFailed).order.status, "failed")
        assert.strictEqual(json(watchedFailed).success, false)
        assert.include(json(watchedFailed).message, "failed; its amount was refunded")
        assert.strictEqual(failed.success, false)
        assert.strictEqual(failed.order.status, "failed")
        assert.include(failed.message, "failed; its amount was refunded")

        const slow = json(yield* runCli(["buy", id, "0249999999", "--json"], env(dir)))
        const timedOut = expectCode(
          yield* runCli(["orders", "watch", slow.order.order_number, "--timeout", "0.2"], env(dir)),
          1
        )
        assert.include(timedOut.stderr, "is still pending after")
        const slower = json(yield* runCli(["buy", id, "0248889999", "--json"], env(dir)))
        const timedOutJson = expectCode(
          yield* runCli(["orders", "watch", slower.order.order_number, "--timeout", "0.2", "--json"], env(dir)),
          1
        )
        assert.strictEqual(json(timedOutJson).success, false)
        assert.include(json(timedOutJson).message, "is still pending after")
        assert.strictEqual(json(timedOutJson).order.status, "pending")
      }))

    it.scopedLive("login and logout: a file readable by its owner only, the key never printed whole", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = path.join(dir, "nested", "bundles", "config.json")
        const noKey = { BUNDLES_CONFIG: file }
        const missing = expectCode(yield* runCli(["balance"], noKey), 1)
        assert.strictEqual(
          missing.stderr,
          "error: No API key: pass --api-key, set BUNDLES_API_KEY, or run `bundles login` to save one"
        )

        const refused = expectCode(
          yield* runCli(["login", "--base-url", server.baseUrl], noKey, {
            interactive: true,
            answers: ["dbk_wrong_key"]
          }),
          1
        )
        assert.include(refused.stderr, "check the API key")
        assert.isFalse(fs.existsSync(file))

        const login = expectCode(
          yield* runCli(["login", "--base-url", server.baseUrl], noKey, { interactive: true, answers: [account.key] }),
          0
        )
        assert.include(login.stdout, `Saved to ${file}`)
        assert.notInclude(login.stdout + login.stderr, account.key)
        assert.include(login.stdout, `${account.key.slice(0, 17)}…`)
        assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
        assert.strictEqual(fs.statSync(path.dirname(file)).mode & 0o777, 0o700)
        assert.deepStrictEqual(JSON.parse(fs.readFileSync(file, "utf8")), {
          base_url: server.baseUrl,
          api_key: account.key
        })

        // The saved login is used; flags and the environment come first; its key never goes to another server.
        expectCode(yield* runCli(["balance"], noKey), 0)
        const other = yield* Effect.promise(() => server.account({ funds: 777n }))
        assert.include(expectCode(yield* runCli(["balance", "--api-key", other.key], noKey), 0).stdout, "GHS 7.77")
        assert.include(
          expectCode(yield* runCli(["balance"], { ...noKey, BUNDLES_API_KEY: other.key }), 0).stdout,
          "GHS 7.77"
        )
        const elsewhere = expectCode(yield* runCli(["balance", "--base-url", "http://127.0.0.1:9"], noKey), 1)
        assert.include(elsewhere.stderr, "No API key for http://127.0.0.1:9")

        fs.chmodSync(file, 0o644)
        assert.include(expectCode(yield* runCli(["balance"], noKey), 0).stderr, "can be read by others")

        const logout = json(expectCode(yield* runCli(["logout", "--json"], noKey), 0))
        assert.deepStrictEqual(logout, { success: true, config_file: file, removed: true })
        assert.isFalse(fs.existsSync(file))
        assert.include(expectCode(yield* runCli(["logout"], noKey), 0).stdout, "Not logged in")
      }))

    it.scopedLive("refuses plain HTTP to another host, and reports a server it cannot reach", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const remote = expectCode(yield* runCli(["balance", "--base-url", "http://example.com"], env(dir)), 1)
        assert.include(remote.stderr, "baseUrl must use https:")
        const down = expectCode(yield* runCli(["balance", "--base-url", "http://127.0.0.1:9", "--json"], env(dir)), 1)
        assert.include(down.stderr, "Cannot reach the API at http://127.0.0.1:9")
        assert.strictEqual(json(down).success, false)
      }))
  })
}

describe("the command line", () => {
  it.live("takes the shared options after the whole command and exits 2 on bad usage", () =>
    Effect.gen(function*() {
      const unknown = expectCode(yield* runCli(["balance", "--bogus"]), 2)
      assert.include(unknown.stderr, "--bogus")
      assert.strictEqual(unknown.stdout, "")
      assert.include(expectCode(yield* runCli(["orders", "nope"]), 2).stderr, "Invalid subcommand")
      expectCode(yield* runCli(["bulk", "/nonexistent/file.csv"]), 2)
      const help = expectCode(yield* runCli(["bundles", "--help"]), 0)
      assert.include(help.stdout, "Usage: bundles bundles [options] NETWORK")
      assert.notMatch(help.stdout, /\x1b\[/)
      assert.match(expectCode(yield* runCli(["--version"]), 0).stdout, /^\d+\.\d+\.\d+/)
    }))

  it("is at the version of its package", async () => {
    const { VERSION } = await import("../src/Version.js")
    const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    assert.strictEqual(VERSION, pkg.version)
  })
})
