/**
 * Money on the wire and inside.
 *
 * Amounts travel as JSON numbers in Ghana cedis with at most two decimals and are
 * held everywhere else as `bigint` pesewas (1 GHS = 100 pesewas). The conversion
 * goes through the number's decimal text, so no floating-point arithmetic ever
 * touches an amount.
 */
import { Either, ParseResult, Schema } from "effect"

/**
 * The largest amount a request may carry, one billion cedis, far above any wallet: a price, a
 * funding, an adjustment. It is also the most that funding or an adjustment may take a
 * wallet to; only money owed back (a refund, a payment received) may take one past it.
 */
export const MAX_PESEWAS = 100_000_000_000n

/**
 * The largest amount an answer may carry: ten trillion cedis, 15 significant digits, which a
 * JSON number (a double) holds exactly. Balances past `MAX_PESEWAS` stay far below it.
 */
export const MAX_ANSWER_PESEWAS = 1_000_000_000_000_000n

const decimal = /^(-?)(\d+)(?:\.(\d{1,2}))?$/

/** Parses a decimal text with at most two decimals ("10", "10.5", "-0.25") into pesewas. */
export const parseCedis = (text: string): Either.Either<bigint, string> => {
  const match = decimal.exec(text.trim())
  if (match === null) {
    return Either.left("must be an amount in cedis with at most 2 decimals")
  }
  const [, sign, whole, fraction = ""] = match
  const pesewas = BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, "0"))
  if (pesewas > MAX_ANSWER_PESEWAS) {
    return Either.left("is too large")
  }
  return Either.right(sign === "-" ? -pesewas : pesewas)
}

/** Formats pesewas as a plain decimal text with two decimals: 1050n → "10.50". */
export const formatCedis = (pesewas: bigint): string => {
  const negative = pesewas < 0n
  const abs = negative ? -pesewas : pesewas
  const fraction = (abs % 100n).toString().padStart(2, "0")
  return `${negative ? "-" : ""}${abs / 100n}.${fraction}`
}

/** Formats pesewas for people: 1050n → "GHS 10.50". */
export const formatGhs = (pesewas: bigint): string => `GHS ${formatCedis(pesewas)}`

/**
 * A JSON number of cedis, decoded to `bigint` pesewas, as answers carry it (balances, prices,
 * amounts paid). Rejects non-finite numbers, more than two decimals and amounts past
 * `MAX_ANSWER_PESEWAS`. Requests carry an `Amount`.
 */
export const Cedis: Schema.Schema<bigint, number> = Schema.transformOrFail(
  Schema.Number,
  Schema.BigIntFromSelf,
  {
    strict: true,
    decode: (n, _, ast) =>
      Either.mapLeft(
        Number.isFinite(n) ? parseCedis(String(n)) : Either.left("must be a finite number"),
        (message) => new ParseResult.Type(ast, n, message)
      ),
    encode: (pesewas) => ParseResult.succeed(Number(formatCedis(pesewas)))
  }
).annotations({
  identifier: "Cedis",
  description: "An amount in Ghana cedis (GHS), at most 2 decimals",
  jsonSchema: { type: "number", multipleOf: 0.01 }
})

const MAX_CEDIS = Number(MAX_PESEWAS / 100n)

/** An amount of cedis a request may carry: at most `MAX_PESEWAS` either way. */
export const Amount: Schema.Schema<bigint, number> = Cedis.pipe(
  Schema.filter(
    (pesewas) => (pesewas <= MAX_PESEWAS && pesewas >= -MAX_PESEWAS) || `must be at most ${MAX_CEDIS} cedis`,
    {
      jsonSchema: { maximum: MAX_CEDIS, minimum: -MAX_CEDIS }
    }
  )
)

/** A positive amount of cedis a request may carry (a price, a funding): at most `MAX_PESEWAS`. */
export const PositiveCedis: Schema.Schema<bigint, number> = Amount.pipe(
  Schema.filter((pesewas) => pesewas > 0n || "must be greater than 0", { jsonSchema: { exclusiveMinimum: 0 } })
)
