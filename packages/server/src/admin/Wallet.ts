/**
 * `admin wallet`: funding and correcting an account's wallets, and reading their ledger.
 * Amounts are given in cedis and parsed without floating point.
 */
import { AdminApi, Money, Wallet } from "@databundle/contract"
import * as Output from "@databundle/terminal/Output"
import { Command, Options } from "@effect/cli"
import { Effect, Option, Schema } from "effect"
import type * as AdminClient from "../AdminClient.js"
import { execute, moneyRequest, request } from "./Call.js"
import {
  accountIdOption,
  amountOption,
  fromWire,
  idempotencyKeyOption,
  listing,
  modeOption,
  noteOption,
  shared,
  type UrlParamsOf,
  walletOption
} from "./Options.js"
import { date, ghs, orNone, pageLine } from "./Text.js"

const movementText = (headline: string, movement: typeof AdminApi.WalletMovement.Type) => [
  `${headline} (ledger entry ${movement.entry.id}).`,
  "Balance:",
  ...Output.fields([
    ["main", ghs(movement.balance.main)],
    ["referral", ghs(movement.balance.referral)],
    ["agent", ghs(movement.balance.agent)]
  ])
]

/** An amount as the wire carries it: a JSON number of cedis, from its exact decimal text. */
const wireAmount = (pesewas: bigint) => Option.some(Number(Money.formatCedis(pesewas)))

const decodeFund = Schema.decodeUnknownEither(Wallet.FundWalletPayload)
const decodeAdjust = Schema.decodeUnknownEither(Wallet.AdjustWalletPayload)

const walletFund = Command.make("fund", {
  ...shared,
  account: accountIdOption,
  amount: amountOption(Wallet.FundWalletPayload.fields.amount, "The amount in cedis (10.50), greater than 0"),
  wallet: walletOption,
  note: noteOption.pipe(Options.optional),
  mode: modeOption("test funds the account's test wallet, the play money of its test keys (default live)"),
  idempotencyKey: idempotencyKeyOption
}, (options) =>
  execute(
    options,
    fromWire(decodeFund, {
      amount: wireAmount(options.amount),
      wallet: options.wallet,
      note: options.note,
      mode: options.mode
    }).pipe(
      Effect.flatMap((payload) =>
        moneyRequest(options, (client, headers) =>
          client.wallets.fund({ path: { account_id: options.account }, headers, payload }))
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
  amount: amountOption(Wallet.AdjustWalletPayload.fields.amount, "A signed amount in cedis (-5.00), not 0"),
  wallet: walletOption,
  note: noteOption,
  mode: modeOption("test corrects the account's test wallet (default live)"),
  idempotencyKey: idempotencyKeyOption
}, (options) =>
  execute(
    options,
    fromWire(decodeAdjust, {
      amount: wireAmount(options.amount),
      wallet: options.wallet,
      note: Option.some(options.note),
      mode: options.mode
    }).pipe(
      Effect.flatMap((payload) =>
        moneyRequest(options, (client, headers) =>
          client.wallets.adjust({ path: { account_id: options.account }, headers, payload }))
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
  mode: modeOption("test shows the account's test wallets (default live)"),
  ...ledgerListing.options
}, (options) =>
  execute(
    options,
    ledgerListing.params(options, { wallet: options.wallet, mode: options.mode }).pipe(
      Effect.flatMap((urlParams) =>
        request(options, (client) => client.wallets.ledger({ path: { account_id: options.account }, urlParams }))
      )
    ),
    AdminApi.LedgerPage,
    ({ entries, pagination }, s) =>
      entries.length === 0 ? ["No ledger entries."] : [
        ...Output.table<typeof entries[number]>(
          [
            { title: "ID", value: (e) => String(e.id), right: true },
            { title: "DATE", value: (e) => date(e.created_at) },
            { title: "WALLET", value: (e) => e.wallet },
            { title: "REASON", value: (e) => e.reason },
            { title: "AMOUNT", value: (e) => ghs(e.amount), right: true },
            { title: "BALANCE", value: (e) => ghs(e.balance_after), right: true },
            { title: "ORDER", value: (e) => orNone(e.order_number, "-") },
            { title: "NOTE", value: (e) => orNone(e.note, "") }
          ],
          entries,
          s
        ),
        pageLine(pagination, "entry", "entries")
      ]
  )).pipe(Command.withDescription("An account's ledger, newest first"))

/** `admin wallet`: fund, adjust, ledger. */
export const wallet = Command.make("wallet").pipe(
  Command.withDescription("Funding, adjustments and the ledger of an account's wallets"),
  Command.withSubcommands([walletFund, walletAdjust, walletLedger])
)
