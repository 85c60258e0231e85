/**
 * Buying a bundle from a plain Node script with the Promise face of `@databundle/client`.
 *
 * Against a running server (`pnpm start` prints the demo key):
 *   BUNDLES_API_KEY=... BUNDLES_BASE_URL=http://127.0.0.1:8080/api/v1 \
 *     pnpm --filter @databundle/examples client:buy "024 123 4567" [--bundle "MTN 1GB"] [--reference inv-1001]
 *
 * It picks the network from the number's prefix, buys the cheapest active bundle there (or
 * the one named), and prints the order. Run it twice with the same --reference: the second run
 * gets the first order back and pays nothing.
 */
import {
  type Bundle,
  createClient,
  formatGhs,
  InsufficientBalanceError,
  normalizePhone,
  type Order,
  phoneOperator,
  RateLimitedError,
  ValidationError
} from "@databundle/client"
import { parseArgs } from "node:util"

/** What `main` needs. */
export interface BuyOptions {
  readonly apiKey: string
  readonly baseUrl: string
  /** The recipient, written any common way (`+233 24 123 4567`, `024-123-4567`). */
  readonly phone: string
  /** A bundle name (`MTN 1GB`) or id; default the cheapest active bundle of the number's network. */
  readonly bundle?: string | undefined
  /** Your reference for the order; without one the client makes one up, so its retries stay safe. */
  readonly reference?: string | undefined
  /** Where progress goes (default the console). */
  readonly log?: ((line: string) => void) | undefined
}

/** Buys one bundle; returns the order as the API reports it afterwards. */
export const main = async (options: BuyOptions): Promise<Order> => {
  const log = options.log ?? console.log
  const client = createClient({ apiKey: options.apiKey, baseUrl: options.baseUrl })

  const phone = normalizePhone(options.phone)
  const operator = phoneOperator(phone)
  log(`Recipient ${phone} (${operator?.name ?? "unknown operator"})`)

  const balance = await client.balance()
  log(`Main wallet: ${formatGhs(balance.main)}`)

  const networks = await client.networks()
  let bundle: Bundle | undefined
  for (const network of networks) {
    const bundles = (await client.bundles(network.id)).filter((b) => b.isActive)
    if (options.bundle !== undefined) {
      bundle ??= bundles.find((b) => b.name === options.bundle || String(b.id) === options.bundle)
    } else if (operator !== undefined && network.slug.startsWith(operator.id)) {
      // Prices are bigint pesewas: compare them as they are, no float in sight.
      bundle ??= bundles.reduce<Bundle | undefined>(
        (min, b) => min === undefined || b.price < min.price ? b : min,
        undefined
      )
    }
  }
  if (bundle === undefined) throw new Error(`no active bundle ${options.bundle ?? `for ${operator?.name ?? phone}`}`)
  log(`Buying ${bundle.name} for ${formatGhs(bundle.price)}`)

  try {
    const placed = await client.orders.create({ bundleId: bundle.id, phoneNumber: phone, reference: options.reference })
    log(
      `${placed.replayed ? "Already bought earlier (nothing charged now)" : "Bought"}: ${placed.order.orderNumber}, ` +
        `${placed.order.status}, wallet now ${formatGhs(placed.walletBalance)}`
    )
    return (await client.orders.list({ reference: placed.order.reference ?? undefined })).orders[0]!
  } catch (error) {
    if (error instanceof InsufficientBalanceError) {
      log(`Not enough money: ${formatGhs(error.balance)} in the wallet, ${formatGhs(error.required)} needed`)
    } else if (error instanceof ValidationError) {
      log(`Refused: ${Object.values(error.errors).flat().join("; ")}`)
    } else if (error instanceof RateLimitedError) {
      log(`Rate limited: try again in ${error.retryAfter} s`)
    }
    throw error
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { bundle: { type: "string" }, reference: { type: "string" } }
  })
  const apiKey = process.env.BUNDLES_API_KEY
  const baseUrl = process.env.BUNDLES_BASE_URL ?? "http://127.0.0.1:8080/api/v1"
  if (apiKey === undefined || positionals.length !== 1) {
    console.error(
      "usage: BUNDLES_API_KEY=... [BUNDLES_BASE_URL=...] client-buy.ts PHONE [--bundle NAME|ID] [--reference REF]"
    )
    process.exit(2)
  }
  main({ apiKey, baseUrl, phone: positionals[0]!, bundle: values.bundle, reference: values.reference }).then(
    (order) => console.log(JSON.stringify({ ...order, amountPaid: formatGhs(order.amountPaid) })),
    (error: unknown) => {
      console.error(error instanceof Error ? `${error.name}: ${error.message}` : error)
      process.exit(1)
    }
  )
}
