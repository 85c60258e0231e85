/**
 * Money as both faces hand it out: `bigint` pesewas (1 GHS = 100 pesewas), the contract's
 * own decoded form, so no amount is ever a float. These helpers turn pesewas into text and
 * cedis text (or a JSON number of cedis, as webhooks carry them) into pesewas.
 */
import * as Money from "@databundle/contract/Money"

/** Formats pesewas as cedis with two decimals: `1050n` → `"10.50"`. */
export const formatCedis: (pesewas: bigint) => string = Money.formatCedis

/** Formats pesewas for people: `1050n` → `"GHS 10.50"`. */
export const formatGhs: (pesewas: bigint) => string = Money.formatGhs

/**
 * Parses cedis (`"10.50"`, `"10.5"`, or a JSON number such as a webhook's `10.5`) into pesewas,
 * through the decimal text, never through float arithmetic. Throws a `RangeError` for more
 * than two decimals or anything that is not an amount.
 */
export const parseCedis = (cedis: string | number): bigint => {
  if (typeof cedis === "number" && !Number.isFinite(cedis)) {
    throw new RangeError(`${cedis} is not an amount in cedis`)
  }
  const parsed = Money.parseCedis(String(cedis))
  if (parsed._tag === "Left") throw new RangeError(`${JSON.stringify(cedis)} ${parsed.left}`)
  return parsed.right
}
