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
