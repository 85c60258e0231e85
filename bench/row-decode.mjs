#!/usr/bin/env node
// What decoding a row with its schema costs on the hot paths, against reading it by hand as the
// rows were read before (a type asserted onto the driver's row, int8 columns through BigInt):
// the placement's row (POST /orders), one order's row (GET /orders/{n}), the three balance rows
// (GET /balance) and the principal of an API key (authentication, on a cache miss); and, for
// the one hot read that keeps its cheaper read, the rate limiter's counts in the database
// (every request under `serve --workers`), as a fresh subject and a busy one.
//
//   node bench/row-decode.mjs                       # 200000 decodes of each, in 10 rounds
//   node bench/row-decode.mjs --decodes 500000 --rounds 20
//
// The row schemas are bundled from packages/core/src with esbuild on the fly, so no build step
// is needed. Each case runs inside `Effect.runSync` as a service reads its rows (a decode is one
// more step of the statement's Effect), by hand and by schema alternately in rounds, so drift in
// the machine touches both alike. It prints the median nanoseconds of each and the difference,
// which is what a request pays for its decode.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import { intOption, parseOptions, ROOT } from "./lib.mjs"

const USAGE = `Usage: node bench/row-decode.mjs [options]

  --decodes N   decodes of each case per round (default 200000)
  --rounds N    rounds, alternating hand and schema (default 10)`

const opts = parseOptions(USAGE, {
  decodes: { type: "string", default: "200000" },
  rounds: { type: "string", default: "10" }
})
const decodes = intOption(opts, "decodes", 1000, 10_000_000)
const rounds = intOption(opts, "rounds", 1, 1000)

/** The row schemas and Effect, bundled from the workspace's sources. */
async function load() {
  const source = (file) => JSON.stringify(path.join(ROOT, "packages", file))
  const outfile = path.join(os.tmpdir(), `databundle-row-decode-${process.pid}.mjs`)
  await esbuild.build({
    stdin: {
      contents: [
        `export { Effect, Schema } from "effect"`,
        `export { Wallet, Account, ApiKey } from ${source("contract/src/index.ts")}`,
        `export { Int8, Int8Number } from ${source("core/src/Database.ts")}`,
        `export { OrderRow } from ${source("core/src/OrderRow.ts")}`,
        `export { PlacedRow } from ${source("core/src/Placement.ts")}`
      ].join("\n"),
      resolveDir: path.join(ROOT, "packages/core"),
      loader: "ts"
    },
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    conditions: ["@databundle/source", "module"],
    target: "node20",
    logLevel: "warning"
  })
  try {
    return await import(pathToFileURL(outfile).href)
  } finally {
    fs.rmSync(outfile, { force: true })
  }
}

const m = await load()
const { Effect, Schema } = m

// Rows as the drivers return them: int8 and numeric columns as text, timestamps as Dates.
const orderRow = {
  id: "48213",
  order_number: "ORD-7K2M9Q4X8B1C",
  account_id: 17,
  bundle_label: "MTN 1GB",
  network_name: "MTN",
  phone_number: "0241234567",
  amount: "450",
  status: "successful",
  reference: "inv-2026-0042",
  created_at: new Date()
}
const placedRow = {
  ...orderRow,
  bundle_key: "mtn-1gb",
  network_slug: "mtn",
  mode: "live",
  price: "450",
  placed: true,
  balance_after: "49550"
}
const balanceRows = [
  { kind: "main", balance: "49550" },
  { kind: "referral", balance: "0" },
  { kind: "agent", balance: "0" }
]
const principalRow = {
  id: 3,
  mode: "live",
  account_id: 17,
  owner_id: 17,
  price_group_id: null,
  limit_all: null,
  limit_orders: null,
  limit_balance: null
}

const decoder = (schema) => Schema.decodeUnknown(Schema.Array(schema))
const BalanceRow = Schema.Struct({ kind: m.Wallet.WalletKind, balance: m.Int8 })
const PrincipalRow = Schema.Struct({
  id: m.ApiKey.ApiKeyId,
  mode: m.ApiKey.ApiKeyMode,
  account_id: Schema.NullOr(m.Account.AccountId),
  owner_id: m.Account.AccountId,
  price_group_id: Schema.NullOr(Schema.Number),
  limit_all: Schema.NullOr(Schema.Number),
  limit_orders: Schema.NullOr(Schema.Number),
  limit_balance: Schema.NullOr(Schema.Number)
})

// The limiter's counts: per scope, [second, count] pairs of the window (up to 60 each).
const countsRow = (pairs) => ({
  now_ms: "1767225600000",
  counts: Object.fromEntries(
    ["all", "orders", "balance"].map((scope) => [scope, Array.from({ length: pairs }, (_, i) => [1767225540 + i, 1])])
  )
})
const CountsRow = Schema.Struct({
  now_ms: m.Int8Number,
  counts: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Tuple(Schema.Number, Schema.Number)) })
})
const countsByHand = (rows) => ({ now: Number(rows[0].now_ms), counts: rows[0].counts })

/** Each case: the driver's rows, read by hand as before, and the decoder a service reads them with now. */
const cases = [
  {
    name: "placement (POST /orders)",
    rows: [placedRow],
    hand: (rows) => {
      const { balance_after, placed: _p, price: _price, ...order } = rows[0]
      return { order: { ...order, amount: BigInt(order.amount) }, balanceAfter: BigInt(balance_after) }
    },
    decode: decoder(m.PlacedRow)
  },
  {
    name: "one order (GET /orders/{n})",
    rows: [orderRow],
    hand: (rows) => ({ ...rows[0], amount: BigInt(rows[0].amount) }),
    decode: decoder(m.OrderRow)
  },
  {
    name: "balances (GET /balance)",
    rows: balanceRows,
    hand: (rows) => {
      const balance = { main: 0n, referral: 0n, agent: 0n }
      for (const row of rows) balance[row.kind] = BigInt(row.balance)
      return balance
    },
    decode: decoder(BalanceRow)
  },
  {
    name: "principal (authentication, cache miss)",
    rows: [principalRow],
    hand: (rows) => rows[0],
    decode: decoder(PrincipalRow)
  },
  {
    name: "rate-limit counts, 1 request a scope",
    rows: [countsRow(1)],
    hand: countsByHand,
    decode: decoder(CountsRow)
  },
  {
    name: "rate-limit counts, 60 busy seconds a scope",
    rows: [countsRow(60)],
    hand: countsByHand,
    decode: decoder(CountsRow)
  }
]

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** Nanoseconds per read of `read`, in one timed loop of `decodes` reads. */
const time = (read) => {
  const start = performance.now()
  for (let i = 0; i < decodes; i++) read()
  return ((performance.now() - start) * 1e6) / decodes
}

console.log(`row decoding: ${decodes} reads per round, ${rounds} rounds, median ns per read (Effect.runSync each)`)
console.log(`${"case".padEnd(44)} ${"by hand".padStart(9)} ${"schema".padStart(9)} ${"added".padStart(9)}`)
for (const c of cases) {
  const byHand = () => Effect.runSync(Effect.map(Effect.succeed(c.rows), c.hand))
  const bySchema = () => Effect.runSync(Effect.flatMap(Effect.succeed(c.rows), c.decode))
  // Warm both up, and check the schema reads the row at all.
  for (let i = 0; i < 20_000; i++) {
    byHand()
    bySchema()
  }
  const hand = []
  const schema = []
  for (let r = 0; r < rounds; r++) {
    hand.push(time(byHand))
    schema.push(time(bySchema))
  }
  const [h, s] = [median(hand), median(schema)]
  console.log(
    `${c.name.padEnd(44)} ${h.toFixed(0).padStart(9)} ${s.toFixed(0).padStart(9)} ${(s - h).toFixed(0).padStart(9)}`
  )
}
