/**
 * Ghana phone numbers as the API accepts them.
 */
import { Schema } from "effect"
import { GHANA_PHONE, MOBILE_NATIONAL, MOBILE_RULE } from "./PhoneTerms.js"

export { GHANA_PHONE } from "./PhoneTerms.js"

/** The 9 national digits of an accepted number, the same for both forms: "0241234567" → "241234567". */
export const nationalDigits = (phone: string): string => phone.slice(phone.length - 9)

/** A Ghana phone number in one of the two accepted forms; kept as the caller sent it. */
export const PhoneNumber = Schema.String.pipe(
  Schema.filter((s) => GHANA_PHONE.test(s), {
    message: () => "must be a Ghana number: 0 followed by 9 digits, or 233 followed by 9 digits"
  })
).annotations({
  identifier: "PhoneNumber",
  description: "Ghana number: 0 followed by 9 digits (0241234567) or 233 followed by 9 digits (233241234567)",
  examples: ["0241234567", "233241234567"]
})

/**
 * A Ghana mobile number in one of the two accepted forms (a person's own number, a mobile
 * money wallet): a fixed line (03X) is refused with the rule the client reads numbers by.
 */
export const MobileNumber = Schema.String.pipe(
  Schema.filter((s) => GHANA_PHONE.test(s) && MOBILE_NATIONAL.test(nationalDigits(s)), {
    message: () => MOBILE_RULE
  })
).annotations({
  identifier: "MobileNumber",
  description: "Ghana mobile number: 0 followed by 9 digits (0241234567) or 233 followed by 9 digits",
  examples: ["0241234567", "233241234567"]
})
