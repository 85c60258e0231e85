/**
 * `bulk` end to end against the whole server, through a proxy that counts (and on cue
 * refuses or holds back) POST /orders: the report of a bad file, the dry run, the balance
 * check, a full run and a re-run that buys nothing, rows appended or moved, another batch,
 * a 429 in the middle, and Ctrl-C (SIGINT to the built binary) mid-run followed by a resume.
 * Whatever happens, the account's orders are checked against the file: no row bought twice.
 */
import { ApiError } from "@databundle/contract"
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, beforeEach, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  envFor,
  expectCode,
  json,
  ordersOf,
  runCli,
  spawnCli,
  startProxy,
  startServer,
  tempDir,
  type TestServer
} from "./Harness.js"

/** Generous limits but for the tests about pacing. */
const roomy = { all: 1000, orders: 1000, balance: 1000 }

type FaultProxy = Awaited<ReturnType<typeof startProxy>>

const ORDERS = "/api/v1/orders"

/** A results CSV as records keyed by its header. */
const readResults = (file: string): Array<Record<string, string>> => {
  const [header, ...lines] = fs.readFileSync(file, "utf8").trimEnd().split("\r\n")
  const names = header!.split(",")
  return lines.map((line) => Object.fromEntries(line.split(",").map((value, i) => [names[i], value])))
}

for (const target of targets) {
  describe(`bulk on ${target.name}`, () => {
    let server: TestServer
    let proxy: FaultProxy
    beforeAll(async () => {
      server = await startServer(target)
      proxy = await startProxy(server.origin)
    })
    afterAll(async () => {
      await proxy?.close()
      await server?.dispose()
    })
    beforeEach(() => proxy.reset())

    const mtn1 = () => server.bundle("MTN 1GB")
    const telecel2 = () => server.bundle("Telecel 2GB")

    /** Writes a CSV file into `dir`. */
    const csv = (dir: string, name: string, lines: ReadonlyArray<string>) => {
      const file = path.join(dir, name)
      fs.writeFileSync(file, lines.join("\n"))
      return file
    }

    /** Asserts the account's orders are the file's rows, each bought once under its own reference. */
    const boughtOnce = (key: string, expected: number) =>
      Effect.promise(async () => {
        const orders = await ordersOf(server.baseUrl, key)
        assert.strictEqual(orders.length, expected, "orders of the account")
        assert.strictEqual(new Set(orders.map((o) => o.reference)).size, orders.length, "one order per reference")
        return orders
      })

    it.scopedLive("reports every problem with its line and buys nothing", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 100_000n, limits: roomy }))
        const file = csv(dir, "bad.csv", [
          "bundle_id,phone_number,reference",
          `${mtn1().id},+233 24 123 4567,`,
          `${mtn1().id},12345,`,
          `999999,0241234567,`,
          `${server.bundle("MTN 4GB").id},0241234567,`,
          `${mtn1().id},0241234568,inv-1`,
          `${telecel2().id},0501234567,inv-1`
        ])
        const run = expectCode(yield* runCli(["bulk", file], envFor(proxy.baseUrl, key, dir)), 1)
        assert.include(run.stderr, "has 4 problems; nothing was bought")
        assert.include(run.stderr, "line 3: \"12345\" is not a Ghana mobile number")
        assert.include(run.stderr, "line 4: bundle 999999 is not in the catalogue")
        assert.include(run.stderr, "line 5: bundle")
        assert.include(run.stderr, "(MTN 4GB) is not available")
        assert.include(run.stderr, "line 7: reference inv-1 is also on line 6")
        const body = json(expectCode(yield* runCli(["bulk", file, "--json"], envFor(proxy.baseUrl, key, dir)), 1))
        assert.isFalse(body.success)
        assert.deepStrictEqual(body.errors.map((e: any) => e.line), [3, 4, 5, 7])
        assert.strictEqual(proxy.count("POST", ORDERS), 0)
        yield* boughtOnce(key, 0)
      }))

    it.scopedLive("a spreadsheet's CSV (semicolons, a BOM, quotes) buys; a workbook is refused with how to save it", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 100_000n, limits: roomy }))
        const file = path.join(dir, "excel.csv")
        fs.writeFileSync(
          file,
          `\uFEFFsep=;\r\nBundle ID;Phone Number;Reference\r\n${mtn1().id};"+233 24 555 0001";"INV.1"\r\n` +
            `${telecel2().id};020 555 0002;\r\n`
        )
        const run = expectCode(yield* runCli(["bulk", file, "--yes"], envFor(proxy.baseUrl, key, dir)), 0)
        assert.notInclude(run.stderr, "problem")
        const orders = yield* boughtOnce(key, 2)
        assert.deepStrictEqual(orders.map((o) => o.phoneNumber).sort(), ["0205550002", "0245550001"])
        assert.include(orders.map((o) => o.reference), "INV.1")

        const workbook = path.join(dir, "orders.xlsx")
        fs.writeFileSync(workbook, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00]))
        const refused = expectCode(yield* runCli(["bulk", workbook, "--json"], envFor(proxy.baseUrl, key, dir)), 1)
        assert.include(refused.stderr, "is an Excel workbook (.xlsx), not a CSV file")
        assert.include(refused.stderr, "CSV UTF-8 (Comma delimited)")
        assert.strictEqual(json(refused).success, false)
        yield* boughtOnce(key, 2)
      }))

    it.scopedLive("--dry-run checks the file and the money and buys nothing; too little money buys nothing either", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 1_500n, limits: roomy }))
        const file = csv(dir, "march.csv", [`${mtn1().id},0241234567`, `${telecel2().id},0501234567`])
        const dry = expectCode(yield* runCli(["bulk", file, "--dry-run"], envFor(proxy.baseUrl, key, dir)), 0)
        assert.include(dry.stdout, "2 rows to buy for GHS 15.00; the main wallet has GHS 15.00 (GHS 0.00 after)")
        assert.include(dry.stdout, "Dry run: nothing was bought.")
        assert.include(dry.stderr, "Batch march: none of the 2 rows bought yet.")
        const body = json(
          expectCode(yield* runCli(["bulk", file, "--dry-run", "--json"], envFor(proxy.baseUrl, key, dir)), 0)
        )
        assert.deepInclude(body, {
          success: true,
          dry_run: true,
          batch: "march",
          rows: 2,
          to_buy: 2,
          total: 15,
          balance: 15
        })
        assert.isFalse(fs.existsSync(path.join(dir, "march.results.csv")))
        const declined = expectCode(
          yield* runCli(["bulk", file], envFor(proxy.baseUrl, key, dir), { interactive: true, answers: ["n"] }),
          1
        )
        assert.include(declined.stderr, "Buy 2 rows for GHS 15.00 from the main wallet (GHS 15.00 → GHS 0.00)? [y/N]")
        assert.include(declined.stderr, "Cancelled: nothing was bought")

        const more = csv(dir, "more.csv", [
          `${mtn1().id},0241234567`,
          `${telecel2().id},0501234567`,
          `${mtn1().id},0241234568`
        ])
        const poor = expectCode(yield* runCli(["bulk", more, "--yes"], envFor(proxy.baseUrl, key, dir)), 1)
        assert.include(poor.stderr, "Not enough money: the 3 rows to buy cost GHS 20.50, the main wallet has GHS 15.00")
        assert.strictEqual(proxy.count("POST", ORDERS), 0)
        yield* boughtOnce(key, 0)
      }))

    it.scopedLive("buys every row once; a re-run buys nothing; appended or moved rows buy only the new; another batch buys again", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { id, key } = yield* Effect.promise(() => server.account({ funds: 100_000n, limits: roomy }))
        const env = envFor(proxy.baseUrl, key, dir)
        const rows = [
          "bundle_id,phone_number,reference",
          `${mtn1().id},+233 24 111 0001,`,
          `${telecel2().id},"050-111-0002",`,
          `${mtn1().id},0241110001,`, // the same purchase as line 2, again: a second bundle for that number
          `${telecel2().id},0501110003,inv-42`
        ]
        const file = csv(dir, "march.csv", rows)
        const first = expectCode(yield* runCli(["bulk", file], env), 0)
        assert.include(first.stderr, "line 4: same bundle and number as line 2")
        assert.include(first.stdout, "bought now     4  (GHS 30.00)")
        assert.strictEqual(proxy.count("POST", ORDERS), 4)
        const results = readResults(path.join(dir, "march.results.csv"))
        assert.deepStrictEqual(results.map((r) => [r.row, r.status, r.amount, r.bought]), [
          ["2", "successful", "5.50", "now"],
          ["3", "successful", "9.50", "now"],
          ["4", "successful", "5.50", "now"],
          ["5", "successful", "9.50", "now"]
        ])
        assert.strictEqual(results[3]!.reference, "inv-42")
        const orders = yield* boughtOnce(key, 4)
        assert.sameMembers(orders.map((o) => o.orderNumber), results.map((r) => r.order_number))
        assert.strictEqual(yield* Effect.promise(() => server.mainBalance(id)), 100_000n - 3_000n)

        // The same file again: everything is found by its reference, nothing is sent.
        proxy.reset()
        const again = expectCode(yield* runCli(["bulk", file, "--json"], env), 0)
        assert.include(again.stderr, "Batch march: 4 of 4 rows already bought")
        assert.strictEqual(proxy.count("POST", ORDERS), 0)
        const summary = json(again)
        assert.deepInclude(summary, { success: true, bought: 0, already_bought: 4, spent: 0, not_bought: 0 })
        assert.deepStrictEqual(summary.results.map((r: any) => r.bought), ["earlier", "earlier", "earlier", "earlier"])
        assert.deepStrictEqual(
          readResults(path.join(dir, "march.results.csv")).map((r) => r.order_number),
          results.map((r) => r.order_number)
        )

        // Rows moved and one appended: only the new one is bought.
        proxy.reset()
        csv(dir, "march.csv", [rows[0]!, rows[4]!, rows[3]!, rows[1]!, rows[2]!, `${mtn1().id},0241110009,`])
        const appended = expectCode(yield* runCli(["bulk", file], env), 0)
        assert.include(appended.stderr, "4 of 5 rows already bought")
        assert.strictEqual(proxy.count("POST", ORDERS), 1)
        yield* boughtOnce(key, 5)

        // Next month's batch: the same rows are new purchases (but inv-42 is a reference of its own).
        proxy.reset()
        const april = expectCode(yield* runCli(["bulk", file, "--batch", "april", "--json"], env), 0)
        assert.deepInclude(json(april), { batch: "april", bought: 4, already_bought: 1 })
        assert.strictEqual(readResults(path.join(dir, "april.results.csv")).length, 5)
        assert.strictEqual(readResults(path.join(dir, "march.results.csv"))[0]!.bought, "earlier")
        yield* boughtOnce(key, 9)
      }))

    it.scopedLive("a failed order or a reference used for another purchase is reported, never bought over", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 100_000n, limits: roomy }))
        const env = envFor(proxy.baseUrl, key, dir)
        const file = csv(dir, "failing.csv", [`${mtn1().id},0241230000`, `${mtn1().id},0241231111`])
        const run = expectCode(yield* runCli(["bulk", file], env), 1)
        assert.include(run.stderr, "failed: line 1")
        const results = readResults(path.join(dir, "failing.results.csv"))
        assert.deepStrictEqual(results.map((r) => r.status), ["failed", "successful"])
        // The failed row was refunded; a re-run does not buy it again, and still says so.
        expectCode(yield* runCli(["bulk", file], env), 1)
        yield* boughtOnce(key, 2)

        expectCode(yield* runCli(["buy", String(mtn1().id), "0241239876", "--reference", "inv-7"], env), 0)
        const reused = csv(dir, "reused.csv", [`${telecel2().id},0501234567,inv-7`])
        const conflict = expectCode(yield* runCli(["bulk", reused], env), 1)
        assert.include(conflict.stderr, "line 1: reference inv-7 was used before for ORD-")
        yield* boughtOnce(key, 3)
      }))

    it.scopedLive("a 429 in the middle is waited out and the row bought once; progress shows on a terminal", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { key } = yield* Effect.promise(() => server.account({ funds: 100_000n, limits: roomy }))
        const file = csv(dir, "burst.csv", [1, 2, 3, 4].map((i) => `${mtn1().id},024222000${i}`))
        proxy.script(
          "POST",
          ORDERS,
          { kind: "pass" },
          {
            kind: "respond",
            status: 429,
            headers: { "content-type": "application/json", "retry-after": "1" },
            body: JSON.stringify(
              Schema.encodeSync(ApiError.RateLimited)(
                new ApiError.RateLimited({ message: "Slow down", retry_after: 1 })
              )
            )
          }
        )
        const started = Date.now()
        const run = expectCode(
          yield* runCli(["bulk", file], envFor(proxy.baseUrl, key, dir), { stderrIsTty: true }),
          0
        )
        assert.isAtLeast(Date.now() - started, 1000)
        assert.strictEqual(proxy.count("POST", ORDERS), 5)
        assert.include(run.stderr, "rate limited: waiting 1 s")
        assert.match(run.stderr, /\[█+░*\] 1\/4 {2}GHS 5\.50 spent {2}ETA/)
        assert.include(run.stdout, "bought now     4")
        yield* boughtOnce(key, 4)
      }))

    it.scopedLive("Ctrl-C lets the order in flight finish, writes the results, and a second run buys the rest", () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const { id, key } = yield* Effect.promise(() => server.account({ funds: 100_000n, limits: roomy }))
        const env = envFor(proxy.baseUrl, key, dir)
        const file = csv(dir, "sigint.csv", [1, 2, 3, 4, 5, 6].map((i) => `${mtn1().id},024333000${i}`))
        // Every order takes 400 ms at the proxy, so the signal arrives while one is in flight.
        proxy.script("POST", ORDERS, ...Array.from({ length: 6 }, () => ({ kind: "delay", ms: 400 }) as const))
        const child = spawnCli(["bulk", file], env, dir)
        yield* Effect.promise(() => child.waitForStderr(/\[1\/6\]/))
        child.process.kill("SIGINT")
        const code = yield* Effect.promise(() => child.exited)
        assert.strictEqual(code, 130, child.stderr())
        assert.include(child.stderr(), "Stopped by Ctrl-C after")

        // What the results say was bought is what the server has: the order in flight was not cut off.
        const results = readResults(path.join(dir, "sigint.results.csv"))
        const bought = results.filter((r) => r.bought === "now")
        assert.isAtLeast(bought.length, 1)
        assert.isBelow(bought.length, 6)
        assert.deepStrictEqual(
          results.slice(bought.length).map((r) => r.status),
          Array(6 - bought.length).fill("not_bought")
        )
        assert.strictEqual(proxy.count("POST", ORDERS), bought.length)
        yield* boughtOnce(key, bought.length)

        // The resume skips what was bought and buys the rest.
        const resumed = spawnCli(["bulk", file], env, dir)
        assert.strictEqual(yield* Effect.promise(() => resumed.exited), 0, resumed.stderr())
        assert.match(resumed.stderr(), new RegExp(`${bought.length} of 6 rows already bought \\(.*\\); skipping them`))
        yield* boughtOnce(key, 6)
        assert.strictEqual(yield* Effect.promise(() => server.mainBalance(id)), 100_000n - 6n * mtn1().price)
        assert.deepStrictEqual(
          readResults(path.join(dir, "sigint.results.csv")).map((r) => r.bought),
          [...bought.map(() => "earlier"), ...Array(6 - bought.length).fill("now")]
        )
      }))
  })
}
