/**
 * The fuzzing data of the console's endpoints: its sign-in, and the admin API's operators,
 * action log, figures, webhook health and single catalogue changes.
 */
import { Money, Operator, OperatorAction, User } from "@databundle/contract"
import { Schema } from "effect"
import fc from "fast-check"
import { breakFields, withNonObjects } from "./Bodies.js"
import { badPassword, changePasswordBody, goodPassword, signInBody } from "./DashboardBodies.js"
import { badId, type Data, enumParam, oneParam, pageParams } from "./Endpoints.js"
import { badIntText, badName, badPositiveCedis, badString, junk, rejects, wrongType } from "./Values.js"
import { ADMIN, CONSOLE, EVENT_TYPES, type World } from "./World.js"

const emailOk = (s: string) => !rejects(User.Email)(s)
const roleOk = (s: string) => !rejects(Operator.OperatorRole)(s)

/** POST /admin/v1/operators. */
const createOperatorBody = withNonObjects(breakFields(
  fc.record({
    email: fc.stringMatching(/^fuzzop[a-z0-9]{1,10}@example\.com$/),
    name: fc.constant("Fuzz Operator"),
    password: fc.string({ minLength: User.MIN_PASSWORD_LENGTH, maxLength: 40 }),
    role: fc.constantFrom("owner", "operator")
  }),
  [
    {
      name: "email",
      required: true,
      bad: fc.oneof(badString(emailOk, fc.constantFrom("ops", "ops@", "@example.com")), wrongType("string"))
    },
    { name: "name", required: true, bad: badName.filter(rejects(Operator.CreateOperatorPayload.fields.name)) },
    {
      name: "password",
      required: true,
      bad: fc.oneof(
        fc.string({ maxLength: User.MIN_PASSWORD_LENGTH - 1 }),
        fc.string({ minLength: User.MAX_PASSWORD_LENGTH + 1, maxLength: 300 }),
        wrongType("string")
      )
    },
    {
      name: "role",
      required: false,
      bad: fc.oneof(badString(roleOk, fc.constantFrom("Owner", "root")), wrongType("string"))
    }
  ]
))

/** POST /admin/v1/operators/{operator_id}/password. */
const resetOperatorPasswordBody = withNonObjects(breakFields(fc.record({ password: goodPassword }), [
  { name: "password", required: true, bad: badPassword }
]))

/** PATCH /admin/v1/operators/{operator_id}: the role (the fuzzing operator's own, owner). */
const updateOperatorBody = withNonObjects(breakFields(fc.record({ role: fc.constant("owner") }), [
  {
    name: "role",
    required: true,
    bad: fc.oneof(badString(roleOk, fc.constantFrom("Owner", "admin", "")), wrongType("string"))
  }
]))

/** PATCH /admin/v1/networks/{network_id}. */
const updateNetworkBody = withNonObjects(breakFields(fc.record({ active: fc.boolean() }), [
  { name: "active", required: true, bad: wrongType("boolean") }
]))

/** PATCH /admin/v1/bundles/{bundle_id}. */
const updateBundleBody = (w: World) =>
  withNonObjects(breakFields(
    fc.record({
      active: fc.boolean(),
      price: fc.constantFrom(1, 2.5, 10),
      prices: fc.constantFrom({}, ...w.priceGroups.map((g) => ({ [g]: 3 })))
    }, { requiredKeys: [] }),
    [
      { name: "active", required: false, bad: wrongType("boolean") },
      { name: "price", required: false, bad: badPositiveCedis },
      {
        name: "prices",
        required: false,
        bad: fc.oneof(
          wrongType("object").filter((v) => v !== null),
          fc.tuple(fc.constantFrom(...w.priceGroups), badPositiveCedis).map(([g, price]) => ({ [g]: price }))
        ).filter(rejects(Schema.Record({ key: Schema.String, value: Schema.NullOr(Money.PositiveCedis) })))
      }
    ]
  ))

export const consoleData = (w: World): Readonly<Record<string, Data>> => {
  const accounts = [w.rich.id, w.other.id, w.broke.id]
  const account = oneParam("account_id", fc.constantFrom(...accounts).map(String), "account")
  const badAccount = oneParam("account_id", badId(w.accountIds), "no account")
  const networks = [...w.activeNetworks, ...w.inactiveNetworks]
  const bundles = [...w.buyable, ...w.unbuyable]
  const event = fc.constantFrom(...w.richEvents)
  const badEvent = fc.oneof(junk, fc.stringMatching(/^evt_[0-9A-Za-z]{24}$/), fc.constantFrom(".", ".."))
    .filter((s) => s.length > 0 && !w.richEvents.includes(s) && !w.richEvents.includes(s.trim()))
  return {
    [`POST ${CONSOLE}/session`]: { body: signInBody },
    [`POST ${CONSOLE}/password`]: { body: changePasswordBody },
    [`POST ${ADMIN}/operators`]: { body: createOperatorBody },
    [`POST ${ADMIN}/operators/:operator_id/password`]: {
      good: oneParam("operator_id", fc.constant(String(w.operator.id)), "operator"),
      bad: oneParam("operator_id", badId([w.operator.id]), "no operator"),
      body: resetOperatorPasswordBody
    },
    [`POST ${ADMIN}/emails/:email_id/requeue`]: {
      good: oneParam("email_id", fc.constantFrom(...w.emailIds).map(String), "email"),
      bad: oneParam("email_id", badId(w.emailIds), "no email")
    },
    [`PATCH ${ADMIN}/operators/:operator_id`]: {
      good: oneParam("operator_id", fc.constant(String(w.operator.id)), "operator"),
      bad: oneParam("operator_id", badId([w.operator.id]), "no operator"),
      body: updateOperatorBody
    },
    [`POST ${ADMIN}/operators/:operator_id/disable`]: {
      good: oneParam("operator_id", fc.constant(String(w.operator.id)), "operator"),
      bad: oneParam("operator_id", badId([w.operator.id]), "no operator")
    },
    [`GET ${ADMIN}/actions`]: {
      query: [
        ...pageParams(100),
        {
          name: "actor",
          good: fc.constantFrom("token", "operator", `operator:${w.operator.id}`),
          bad: fc.oneof(
            fc.constantFrom("", "Token", "operator:", "operator:0", "operator:x", "operator:01", "admin"),
            junk
          ).filter((s) => !/^(?:token|operator|operator:[1-9]\d{0,9})$/.test(s))
        },
        enumParam("action", OperatorAction.ACTIONS),
        enumParam("target_kind", OperatorAction.TARGET_KINDS),
        {
          name: "target_id",
          good: fc.constantFrom("1", w.pendingOrder),
          bad: fc.oneof(fc.constant(""), fc.string({ minLength: 65, maxLength: 200 }))
        },
        {
          name: "account_id",
          good: fc.constantFrom(...w.accountIds).map(String),
          bad: badIntText(1, 2_147_483_647)
        }
      ]
    },
    [`GET ${ADMIN}/stats`]: {
      query: [
        { name: "days", good: fc.integer({ min: 1, max: 90 }).map(String), bad: badIntText(1, 90) },
        { name: "hours", good: fc.integer({ min: 1, max: 168 }).map(String), bad: badIntText(1, 168) }
      ]
    },
    [`GET ${ADMIN}/accounts/:account_id/webhook/deliveries`]: {
      good: account,
      bad: badAccount,
      query: [
        ...pageParams(100),
        enumParam("state", ["pending", "retrying", "delivered", "abandoned"]),
        enumParam("type", EVENT_TYPES)
      ]
    },
    [`POST ${ADMIN}/accounts/:account_id/webhook/deliveries/:event_id/resend`]: {
      good: event.map((id) => ({ values: { account_id: String(w.rich.id), event_id: id }, fault: "" })),
      bad: fc.oneof(
        fc.tuple(badAccount, event).map(([a, id]) => ({ values: { ...a.values, event_id: id }, fault: a.fault })),
        fc.tuple(oneParam("event_id", badEvent, "no event of this account")).map(([e]) => ({
          values: { account_id: String(w.rich.id), ...e.values },
          fault: e.fault
        })),
        // Another account's event is not this account's.
        fc.constantFrom(...w.otherEvents).map((id) => ({
          values: { account_id: String(w.rich.id), event_id: id },
          fault: "another account's event"
        }))
      )
    },
    [`PATCH ${ADMIN}/networks/:network_id`]: {
      good: oneParam("network_id", fc.constantFrom(...networks).map(String), "network"),
      bad: oneParam("network_id", badId(networks), "no network"),
      body: updateNetworkBody
    },
    [`PATCH ${ADMIN}/bundles/:bundle_id`]: {
      good: oneParam("bundle_id", fc.constantFrom(...bundles).map(String), "bundle"),
      bad: oneParam("bundle_id", badId(bundles), "no bundle"),
      body: updateBundleBody(w)
    }
  }
}
