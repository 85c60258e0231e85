/**
 * Payments: money an account holder pays in to fund the main wallet, through a payment port
 * (mobile money) or by a manual transfer that the operator approves or declines. A payment
 * credits the wallet exactly once, when it becomes `successful`; its ledger entry names it.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AccountId } from "./Account.js"
import { extensions, Failed } from "./ApiError.js"
import { Amount, Cedis } from "./Money.js"
import { ACCOUNT_LISTS, DateBound, params } from "./Page.js"
import { MobileNumber } from "./Phone.js"
import { text } from "./Text.js"

/** `PAY-` followed by 12 characters of `0-9A-Z`: also the reference a manual transfer quotes. */
export const PaymentNumber = Schema.String.pipe(Schema.pattern(/^PAY-[0-9A-Z]{12}$/), Schema.brand("PaymentNumber"))

/** The type of `PaymentNumber`. */
export type PaymentNumber = typeof PaymentNumber.Type

/** The mobile money wallets of Ghana, and a manual (bank or agent) transfer. */
export const PAYMENT_METHODS = ["mtn_momo", "telecel_cash", "airteltigo_money", "manual_transfer"] as const

/** How a payment is made. */
export const PaymentMethod = Schema.Literal(...PAYMENT_METHODS).annotations({
  message: () => `must be one of ${PAYMENT_METHODS.join(", ")}`
})

/** The type of `PaymentMethod`. */
export type PaymentMethod = typeof PaymentMethod.Type

/** The methods that debit a payer's mobile money wallet (and so need `payer_number`). */
export const MOBILE_MONEY_METHODS: ReadonlyArray<PaymentMethod> = ["mtn_momo", "telecel_cash", "airteltigo_money"]

/** `pending` → `successful` (the wallet is credited) | `failed` (declined, expired or refused). */
export const PaymentStatus = Schema.Literal("pending", "successful", "failed").annotations({
  message: () => "must be one of pending, successful, failed"
})

/** The type of `PaymentStatus`. */
export type PaymentStatus = typeof PaymentStatus.Type

/** The smallest payment: GHS 1.00, in pesewas. */
export const MIN_PAYMENT_PESEWAS = 100n

/** The largest payment: GHS 10,000.00, in pesewas (above a mobile money wallet's daily limit). */
export const MAX_PAYMENT_PESEWAS = 1_000_000n

/** A payment's amount in cedis: from 1 to 10,000. */
export const PaymentAmount = Amount.pipe(
  Schema.filter((pesewas) =>
    (pesewas >= MIN_PAYMENT_PESEWAS && pesewas <= MAX_PAYMENT_PESEWAS) || "must be from 1 to 10000 cedis"
  )
)

/**
 * The body of POST /dashboard/v1/payments. `payer_number` is required for the mobile money
 * methods (the number whose wallet pays), and ignored for a manual transfer, where `note`
 * says how the money was sent (a bank reference, the sender's name).
 */
export const CreatePaymentPayload = Schema.Struct({
  method: PaymentMethod,
  amount: PaymentAmount,
  payer_number: Schema.optional(MobileNumber),
  note: Schema.optional(text(200))
}).annotations({ identifier: "CreatePaymentPayload", parseOptions: { errors: "all" } })

/** The type of `CreatePaymentPayload`. */
export type CreatePaymentPayload = typeof CreatePaymentPayload.Type

/** A payment as its account holder sees it. */
export const Payment = Schema.Struct({
  payment_number: PaymentNumber,
  method: PaymentMethod,
  amount: Cedis,
  status: PaymentStatus,
  payer_number: Schema.NullOr(Schema.String),
  note: Schema.NullOr(Schema.String),
  failure_reason: Schema.NullOr(Schema.String).annotations({ description: "Why a failed payment failed" }),
  instructions: Schema.NullOr(Schema.String).annotations({
    description: "What the payer does next: approve the prompt on the phone, or where to send a manual transfer"
  }),
  awaiting_code: Schema.Boolean.annotations({
    description: "True while the gateway waits for the one-time code sent to the payer's phone: send it with " +
      "POST /dashboard/v1/payments/{payment_number}/otp"
  }),
  code_prompt: Schema.NullOr(Schema.String).annotations({
    description: "What the gateway displayed with its request for the code (null unless awaiting_code)"
  }),
  created_at: Schema.Date,
  settled_at: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "Payment" })

/** The type of `Payment`. */
export type Payment = typeof Payment.Type

/** A payment as the operator sees it: with its account. */
export const AdminPayment = Schema.Struct({
  ...Payment.fields,
  account_id: AccountId,
  account_name: Schema.String.annotations({ description: "The account's name, as the operator knows the holder" }),
  reversed_at: Schema.NullOr(Schema.Date).annotations({
    description: "When the gateway reported this successful payment reversed (the money went back to the payer); " +
      "the wallet stays credited until the operator adjusts it"
  }),
  reversal_reason: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "AdminPayment"
})

/** The type of `AdminPayment`. */
export type AdminPayment = typeof AdminPayment.Type

/** A payment method as the funding page offers it. */
export const PaymentMethodInfo = Schema.Struct({
  method: PaymentMethod,
  label: Schema.String,
  needs_payer_number: Schema.Boolean,
  min_amount: Cedis,
  max_amount: Cedis,
  instructions: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PaymentMethodInfo" })

/** The type of `PaymentMethodInfo`. */
export type PaymentMethodInfo = typeof PaymentMethodInfo.Type

/** Query parameters of a payments list. */
export const ListPaymentsParams = Schema.Struct({
  ...params(ACCOUNT_LISTS),
  status: Schema.optional(PaymentStatus),
  method: Schema.optional(PaymentMethod),
  from: Schema.optional(DateBound),
  to: Schema.optional(DateBound)
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `ListPaymentsParams`. */
export type ListPaymentsParams = typeof ListPaymentsParams.Type

/** A one-time code as a wallet sends it: 4 to 8 digits. */
export const PaymentCode = Schema.String.pipe(
  Schema.pattern(/^\d{4,8}$/, { message: () => "must be the 4 to 8 digit code sent to the payer's phone" })
)

/** The body of POST /dashboard/v1/payments/{payment_number}/otp. */
export const SubmitCodePayload = Schema.Struct({ otp: PaymentCode }).annotations({
  identifier: "SubmitCodePayload",
  parseOptions: { errors: "all" }
})

/** The type of `SubmitCodePayload`. */
export type SubmitCodePayload = typeof SubmitCodePayload.Type

/** The body of POST /admin/v1/payments/{payment_number}/decline. */
export const DeclinePaymentPayload = Schema.Struct({ reason: text(200) }).annotations({
  parseOptions: { errors: "all" }
})

/** 404: no payment with that number (for this account). */
export class PaymentNotFound extends Schema.TaggedError<PaymentNotFound>()(
  "PaymentNotFound",
  { success: Failed, message: Schema.String, ...extensions("payment_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}
