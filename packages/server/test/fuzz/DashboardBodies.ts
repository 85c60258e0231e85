/**
 * Bodies of the dashboard API: well-formed JSON that does not decode, endpoint by endpoint.
 */
import { Payment, User } from "@databundle/contract"
import fc from "fast-check"
import { breakFields, modeField, withNonObjects } from "./Bodies.js"
import {
  badEnum,
  badName,
  badPhoneText,
  badReferenceText,
  badString,
  goodPhone,
  goodReference,
  rejects,
  wrongType
} from "./Values.js"
import type { World } from "./World.js"

const emailOk = (s: string) => !rejects(User.Email)(s)
const badEmail = fc.oneof(
  badString(emailOk, fc.constantFrom("ama", "ama@", "@example.com", "ama@example", "a b@example.com")),
  wrongType("string")
)
const goodEmail = fc.stringMatching(/^fuzz[a-z0-9]{1,10}@example\.com$/)
export const badPassword = fc.oneof(
  fc.string({ maxLength: User.MIN_PASSWORD_LENGTH - 1 }),
  fc.string({ minLength: User.MAX_PASSWORD_LENGTH + 1, maxLength: 400 }),
  wrongType("string")
)
export const goodPassword = fc.string({ minLength: User.MIN_PASSWORD_LENGTH, maxLength: 40 })
const badToken = fc.oneof(badString((s) => /^[A-Za-z0-9_-]{16,128}$/.test(s)), wrongType("string"))
const goodToken = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/)

/** POST /register. */
export const registerBody = withNonObjects(breakFields(
  fc.record({ name: fc.constant("Fuzz User"), email: goodEmail, phone: goodPhone, password: goodPassword }),
  [
    { name: "name", required: true, bad: badName },
    { name: "email", required: true, bad: badEmail },
    { name: "phone", required: true, bad: fc.oneof(badPhoneText, wrongType("string")) },
    { name: "password", required: true, bad: badPassword }
  ]
))

/** POST /email/verify. */
export const verifyBody = withNonObjects(breakFields(fc.record({ token: goodToken }), [
  { name: "token", required: true, bad: badToken }
]))

/** POST /email/resend and POST /password/forgot. */
export const emailBody = withNonObjects(breakFields(fc.record({ email: goodEmail }), [
  { name: "email", required: true, bad: badEmail }
]))

/** POST /session (sign-in). */
export const signInBody = withNonObjects(breakFields(fc.record({ email: goodEmail, password: goodPassword }), [
  { name: "email", required: true, bad: badEmail },
  {
    name: "password",
    required: true,
    bad: fc.oneof(fc.constant(""), fc.string({ minLength: 1025, maxLength: 2000 }), wrongType("string"))
  }
]))

/** POST /password/reset. */
export const resetBody = withNonObjects(breakFields(fc.record({ token: goodToken, password: goodPassword }), [
  { name: "token", required: true, bad: badToken },
  { name: "password", required: true, bad: badPassword }
]))

/** POST /password (change). */
export const changePasswordBody = withNonObjects(breakFields(
  fc.record({ current_password: goodPassword, new_password: goodPassword }),
  [
    {
      name: "current_password",
      required: true,
      bad: fc.oneof(fc.constant(""), fc.string({ minLength: 1025, maxLength: 2000 }), wrongType("string"))
    },
    { name: "new_password", required: true, bad: badPassword }
  ]
))

/** POST /orders from the dashboard: `reference` required. */
export const dashboardPlaceBody = (w: World) =>
  withNonObjects(breakFields(
    fc.record({ bundle_id: fc.constantFrom(...w.buyable), phone_number: goodPhone, reference: goodReference }),
    [
      {
        name: "bundle_id",
        required: true,
        bad: fc.oneof(wrongType("number"), fc.constantFrom<unknown>(0, -1, 1.5, 2_147_483_648))
      },
      { name: "phone_number", required: true, bad: fc.oneof(badPhoneText, wrongType("string")) },
      { name: "reference", required: true, bad: fc.oneof(badReferenceText, wrongType("string")) }
    ]
  ))

const badAmount = fc.oneof(
  wrongType("number"),
  fc.constantFrom<unknown>(0, -1, 0.5, 0.999, 10_000.01, 1e9, 1.005, "10")
)

/** POST /payments. */
export const paymentBody = withNonObjects(breakFields(
  fc.record({
    method: fc.constantFrom(...Payment.PAYMENT_METHODS),
    amount: fc.integer({ min: 1, max: 10_000 }),
    payer_number: goodPhone,
    note: fc.constant("fuzz")
  }, { requiredKeys: ["method", "amount"] }),
  [
    { name: "method", required: true, bad: badEnum(Payment.PAYMENT_METHODS) },
    { name: "amount", required: true, bad: badAmount },
    { name: "payer_number", required: false, bad: fc.oneof(badPhoneText, wrongType("string")) },
    { name: "note", required: false, bad: fc.oneof(fc.constant(""), fc.string({ minLength: 201, maxLength: 400 })) }
  ]
))

/** POST /payments/{payment_number}/otp. */
export const paymentCodeBody = withNonObjects(breakFields(
  fc.record({ otp: fc.stringMatching(/^\d{4,8}$/) }),
  [{
    name: "otp",
    required: true,
    bad: fc.oneof(
      fc.constantFrom<unknown>("", "123", "123456789", "12ab56", " 123456", "１２３４５６", 123456),
      wrongType("string")
    )
  }]
))

/** POST /keys. */
export const keyBody = withNonObjects(breakFields(fc.record({ name: fc.constant("fuzz key") }), [
  {
    name: "name",
    required: true,
    bad: fc.oneof(fc.constant(""), fc.string({ minLength: 65, maxLength: 200 }), wrongType("string"))
  },
  modeField
]))

/** POST /webhook/test. */
export const testEventBody = withNonObjects(breakFields(fc.record({ type: fc.constant("order.successful") }), [
  {
    name: "type",
    required: true,
    bad: badEnum(["order.successful", "order.failed", "wallet.funded", "wallet.debited"])
  }
]))

/** PUT /webhook. */
export const webhookBody = withNonObjects(breakFields(fc.record({ url: fc.constant("https://example.com/hook") }), [
  {
    name: "url",
    required: true,
    bad: fc.oneof(
      fc.constantFrom<unknown>("", "ftp://example.com", "example.com/hook", "javascript:alert(1)", 42, true, {}),
      fc.string({ minLength: 2049, maxLength: 3000 }).map((s) => `https://example.com/${s}`)
    )
  }
]))

/** POST /admin/v1/payments/{payment_number}/decline. */
export const declineBody = withNonObjects(breakFields(fc.record({ reason: fc.constant("no transfer arrived") }), [
  {
    name: "reason",
    required: true,
    bad: fc.oneof(fc.constant(""), fc.string({ minLength: 201, maxLength: 400 }), wrongType("string"))
  }
]))
