/**
 * Ghana phone numbers as people write them (`+233 24 123 4567`, `024-123-4567`,
 * `(024) 123 4567`, `00233241234567`, `241234567`) turned into the forms the API accepts
 * (`0241234567` or `233241234567`), and the operator a prefix belongs to. Only mobile numbers
 * are read (a fixed line, 03X, cannot take data or pay by mobile money), by the contract's rule.
 */
import { MOBILE_NATIONAL } from "@databundle/contract/PhoneTerms"
import { PhoneNumberError } from "./Errors.js"
import { networkOperator, type PhoneOperatorId, prefixOperator, prefixWarning } from "./PhonePrefixes.js"

/** An operator, as the prefix table knows it. */
export interface PhoneOperator {
  /** The table's key: `mtn`, `telecel`, `airteltigo`, `glo`. */
  readonly id: PhoneOperatorId
  /** The display name. */
  readonly name: string
}

/** A Ghana mobile number in all its forms. */
export interface GhanaPhone {
  /** The 9 national digits: `241234567`. */
  readonly national: string
  /** `0` and the national digits, one of the API's forms: `0241234567`. */
  readonly local: string
  /** `233` and the national digits, the API's other form: `233241234567`. */
  readonly international: string
  /** E.164: `+233241234567`. */
  readonly e164: string
  /** The operator prefix in the `0XX` form: `024`. */
  readonly prefix: string
  /** The operator the prefix was allocated to, per `PHONE_PREFIXES`; numbers can be ported away. */
  readonly operator: PhoneOperator | undefined
}

/** Reads a Ghana mobile number written in any common way; `undefined` when it is not one. */
export const parsePhone = (input: string): GhanaPhone | undefined => {
  if (typeof input !== "string" || !/^\s*\+?[\d\s().\-/]+$/.test(input)) return undefined
  const plus = input.trim().startsWith("+")
  let digits = input.replace(/\D/g, "")
  if (plus && !digits.startsWith("233")) return undefined
  if (digits.startsWith("00233")) digits = digits.slice(2)
  let national: string
  if (digits.startsWith("233") && (digits.length === 12 || digits.length === 13)) {
    // "+233 (0)24 ..." keeps a trunk 0 after the country code.
    national = digits.length === 13 && digits[3] === "0" ? digits.slice(4) : digits.slice(3)
  } else if (!plus && digits.length === 10 && digits.startsWith("0")) {
    national = digits.slice(1)
  } else if (!plus && digits.length === 9) {
    national = digits
  } else {
    return undefined
  }
  if (!MOBILE_NATIONAL.test(national)) return undefined
  const prefix = `0${national.slice(0, 2)}`
  return {
    national,
    local: `0${national}`,
    international: `233${national}`,
    e164: `+233${national}`,
    prefix,
    operator: prefixOperator(prefix)
  }
}

/**
 * The number in a form the API accepts: `0241234567` (`"local"`, the default) or
 * `233241234567` (`"international"`). Throws `PhoneNumberError` when it is not a Ghana mobile number.
 */
export const normalizePhone = (input: string, form: "local" | "international" = "local"): string => {
  const phone = parsePhone(input)
  if (phone === undefined) {
    throw new PhoneNumberError(`${JSON.stringify(input)} is not a Ghana mobile number (for example 024 123 4567)`)
  }
  return form === "local" ? phone.local : phone.international
}

/** The operator a number's prefix was allocated to, or `undefined` when unknown or not a number. */
export const phoneOperator = (input: string): PhoneOperator | undefined => parsePhone(input)?.operator

export { networkOperator, prefixWarning }

/** Text from a file or the server without control characters, safe in a terminal and in one line. */
export const printable = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "")

/**
 * A warning when a number's prefix belongs to another operator than the bundle's network (as
 * a sentence's lower-case middle: "the prefix of 0201234567 (020) belongs to Telecel, but MTN
 * 1GB is on the MTN network"). Numbers get ported between operators, so this never stops a
 * purchase.
 */
export const networkMismatch = (
  phone: GhanaPhone,
  network: { readonly name: string; readonly slug: string },
  bundle: string
): string | undefined => {
  const expected = networkOperator(network.slug)
  if (phone.operator === undefined || expected === undefined || phone.operator.id === expected) return undefined
  return `the prefix of ${phone.local} (${phone.prefix}) belongs to ${phone.operator.name}, but ${
    printable(bundle)
  } is on the ${printable(network.name)} network`
}

/**
 * A warning when a number's prefix belongs to no operator the table knows (as a sentence's
 * lower-case middle, like `networkMismatch`): the server answers such an order with an
 * `unknown_prefix` warning, so the command line and the dashboard say it before buying.
 */
export const unknownPrefix = (phone: GhanaPhone): string | undefined =>
  phone.operator === undefined
    ? `the prefix of ${phone.local} (${phone.prefix}) belongs to no Ghana mobile network we know`
    : undefined

/** Every warning about a number for a network's bundle before buying: a mismatch or an unknown prefix. */
export const prefixNotice = (
  phone: GhanaPhone,
  network: { readonly name: string; readonly slug: string },
  bundle: string
): string | undefined => networkMismatch(phone, network, bundle) ?? unknownPrefix(phone)
