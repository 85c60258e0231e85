/**
 * Which Ghana mobile operator a number's prefix belongs to, as versioned data: numbers move
 * between operators (porting) and new prefixes get allocated, so the table says how old it is
 * and the answer is a hint, never a reason to refuse a number. Change the table only together
 * with `version` and `updated`.
 */

/** The prefix table. */
export const PHONE_PREFIXES = {
  /** Bumped whenever an allocation below changes. */
  version: 1,
  /** When the table was last checked. */
  updated: "2025-06-01",
  /**
   * Where it comes from: the National Communications Authority's allocations as publicly
   * reported (MTN 024/054/055/059, then 025 and 053; Telecel, Vodafone Ghana until its 2024
   * rebrand, 020/050; AirtelTigo, now AT, 026/056 from Airtel and 027/057 from Tigo; Glo 023).
   * Not checked against an NCA document: verify before relying on it beyond a hint.
   */
  source: "NCA mobile prefix allocations as publicly reported, 2025",
  /** Operators and their prefixes in the `0XX` form. */
  operators: {
    mtn: { name: "MTN", prefixes: ["024", "025", "053", "054", "055", "059"] },
    telecel: { name: "Telecel", prefixes: ["020", "050"] },
    airteltigo: { name: "AirtelTigo", prefixes: ["026", "027", "056", "057"] },
    glo: { name: "Glo", prefixes: ["023"] }
  }
} as const

/** An operator's key in the table (`mtn`, `telecel`, `airteltigo`, `glo`). */
export type PhoneOperatorId = keyof typeof PHONE_PREFIXES.operators

/** An operator as the prefix table knows it. */
export interface PrefixOperator {
  /** The table's key: `mtn`, `telecel`, `airteltigo`, `glo`. */
  readonly id: PhoneOperatorId
  /** The display name. */
  readonly name: string
}

const byPrefix = new Map<string, PrefixOperator>()
for (const [id, operator] of Object.entries(PHONE_PREFIXES.operators)) {
  for (const prefix of operator.prefixes) byPrefix.set(prefix, { id: id as PhoneOperatorId, name: operator.name })
}

/** The operator a `0XX` prefix was allocated to, or `undefined` when the table knows no one for it. */
export const prefixOperator = (prefix: string): PrefixOperator | undefined => byPrefix.get(prefix)

/** The `0XX` prefix of a number's 9 national digits: "241234567" → "024". */
export const prefixOf = (national: string): string => `0${national.slice(0, 2)}`

/**
 * The operator whose numbers a network serves, read from its slug (`mtn`, `telecel`,
 * `airteltigo-ishare`); none for a network named otherwise. A hint, like the prefixes.
 */
export const networkOperator = (slug: string): PhoneOperatorId | undefined =>
  (Object.keys(PHONE_PREFIXES.operators) as Array<PhoneOperatorId>).find((id) => slug.toLowerCase().startsWith(id))

/** Why a number may not suit a network: its prefix is another operator's, or nobody's. */
export type PrefixWarningCode = "network_mismatch" | "unknown_prefix"

/** A warning about a number's prefix, as POST /orders answers it. */
export interface PrefixWarning {
  readonly code: PrefixWarningCode
  readonly message: string
}

/**
 * What to warn about when `national` (the 9 national digits) is bought for on `network`: its
 * prefix belongs to another operator than the network's (`network_mismatch`), or to no operator
 * the table knows (`unknown_prefix`); nothing when it matches, or when the network's operator
 * cannot be told from its slug. Pure and in memory: it runs on every order. Ported numbers keep
 * their old prefix, so this is a warning, never a refusal.
 */
export const prefixWarning = (
  national: string,
  network: { readonly name: string; readonly slug: string }
): PrefixWarning | undefined => {
  const prefix = prefixOf(national)
  const operator = byPrefix.get(prefix)
  if (operator === undefined) {
    return {
      code: "unknown_prefix",
      message: `The prefix ${prefix} of 0${national} belongs to no Ghana mobile network we know; check the number`
    }
  }
  const expected = networkOperator(network.slug)
  if (expected === undefined || expected === operator.id) return undefined
  return {
    code: "network_mismatch",
    message:
      `The prefix ${prefix} of 0${national} belongs to ${operator.name}, but the bundle is on the ${network.name} ` +
      `network; unless the number was ported, it may not receive the bundle`
  }
}
