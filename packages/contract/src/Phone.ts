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

/** Why a number may not suit the bundle's network (POST /orders `warnings`). */
export const OrderWarningCode = Schema.Literal("network_mismatch", "unknown_prefix").annotations({
  identifier: "OrderWarningCode",
  description: "`network_mismatch`: the prefix is another network's; `unknown_prefix`: no network uses the prefix"
})

/** A warning about an order's number; the order is placed all the same (numbers are ported). */
export const OrderWarning = Schema.Struct({ code: OrderWarningCode, message: Schema.String }).annotations({
  identifier: "OrderWarning"
})

/** The type of `OrderWarning`. */
export type OrderWarning = typeof OrderWarning.Type

/** The network a number's prefix belongs to. */
export const PrefixNetwork = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  slug: Schema.String
}).annotations({ identifier: "PrefixNetwork" })

/** The type of `PrefixNetwork`. */
export type PrefixNetwork = typeof PrefixNetwork.Type

/** What GET /phone-numbers/{phone_number} tells of a number (besides `success`). */
export const PhoneNumberNetwork = Schema.Struct({
  phone_number: Schema.String.annotations({ description: "The number, as it was sent" }),
  network: Schema.NullOr(PrefixNetwork).annotations({
    description: "The active network whose operator the prefix was allocated to; null when no network uses it. " +
      "A ported number keeps its old prefix, so this is a hint."
  }),
  basis: Schema.Literal("prefix").annotations({ description: "How the network was found: from the prefix alone" })
}).annotations({ identifier: "PhoneNumberNetwork" })

/** The type of `PhoneNumberNetwork`. */
export type PhoneNumberNetwork = typeof PhoneNumberNetwork.Type
