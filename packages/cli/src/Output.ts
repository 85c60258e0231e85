/**
 * What `bundles` prints: the terminal toolkit's output (tables fitted to the width, colour
 * decided once, notes and errors on stderr, instants and counts as both CLIs print them),
 * plus the reseller's own form: `--json` documents whose amounts are cedis as on the wire.
 */
import { formatCedis } from "@databundle/client/Money"
import { Console, type Effect } from "effect"

export * from "@databundle/terminal/Output"

/** Every bigint in the API's decoded data is an amount in pesewas; the wire carries cedis, from the exact decimal text. */
const cedis = (_: string, value: unknown) => typeof value === "bigint" ? Number(formatCedis(value)) : value

/** The API's decoded data as the wire carries it (amounts as cedis, dates as ISO 8601): a failure's JSON body. */
export const toWire = (value: unknown): unknown => JSON.parse(JSON.stringify(value, cedis))

/** Prints one JSON document of the API's decoded data on stdout: amounts as cedis, dates as ISO 8601. */
export const printJson = (value: unknown): Effect.Effect<void> => Console.log(JSON.stringify(value, cedis, 2))
