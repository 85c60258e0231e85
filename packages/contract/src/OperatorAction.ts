/**
 * The operator action log: one line for every change made through the admin API, whether by
 * the admin token or by a signed-in operator, written in the same transaction as the change.
 */
import { Schema } from "effect"
import { integerParam, MAX_ID } from "./Identifier.js"
import { OperatorId } from "./Operator.js"
import { ADMIN_LISTS, params } from "./Page.js"

/** Who made a change: the shared admin token (the CLI, scripts) or a signed-in operator. */
export const ActorKind = Schema.Literal("token", "operator").annotations({
  message: () => "must be token or operator"
})

/** The type of `ActorKind`. */
export type ActorKind = typeof ActorKind.Type

/** What was done, as `<thing>.<verb>`. */
export const ACTIONS = [
  "account.create",
  "account.update",
  "key.create",
  "key.revoke",
  "wallet.fund",
  "wallet.adjust",
  "order.resolve",
  "payment.approve",
  "payment.decline",
  "catalog.import",
  "catalog.sync",
  "network.update",
  "bundle.update",
  "webhook.resend",
  "operator.create",
  "operator.disable",
  "operator.role",
  "operator.password_reset",
  "operator.password_change",
  "email.requeue",
  "commissions.set"
] as const

/** An action's name. */
export const ActionName = Schema.Literal(...ACTIONS).annotations({
  message: () => `must be one of ${ACTIONS.join(", ")}`
})

/** The type of `ActionName`. */
export type ActionName = typeof ActionName.Type

/** What kind of thing an action changed. */
export const TARGET_KINDS = [
  "account",
  "key",
  "order",
  "payment",
  "catalog",
  "network",
  "bundle",
  "webhook_event",
  "operator",
  "email",
  "commissions"
] as const

/** A target's kind. */
export const TargetKind = Schema.Literal(...TARGET_KINDS).annotations({
  message: () => `must be one of ${TARGET_KINDS.join(", ")}`
})

/** The type of `TargetKind`. */
export type TargetKind = typeof TargetKind.Type

/** One line of the action log. */
export const OperatorAction = Schema.Struct({
  id: Schema.Int,
  at: Schema.Date,
  actor_kind: ActorKind,
  operator_id: Schema.NullOr(OperatorId).annotations({ description: "Null when the admin token did it" }),
  operator_email: Schema.NullOr(Schema.String),
  action: ActionName,
  target_kind: TargetKind,
  target_id: Schema.NullOr(Schema.String).annotations({
    description: "The account id, order number, payment number, bundle id... (null for a whole-catalogue change)"
  }),
  account_id: Schema.NullOr(Schema.Int).annotations({ description: "The account the change concerns, if one" }),
  summary: Schema.String.annotations({ description: "One readable line: what changed" }),
  detail: Schema.Unknown.annotations({ description: "The change's particulars as JSON (fields set, amounts, counts)" }),
  request_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "OperatorAction" })

/** The type of `OperatorAction`. */
export type OperatorAction = typeof OperatorAction.Type

/** Query parameters of GET /admin/v1/actions. */
export const ListActionsParams = Schema.Struct({
  actor: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^(?:token|operator|operator:(?:[1-9]\d{0,9}))$/, {
        message: () => "must be token, operator or operator:<id>"
      })
    )
  ).annotations({ description: "token, operator (any), or operator:<id>" }),
  action: Schema.optional(ActionName),
  target_kind: Schema.optional(TargetKind),
  target_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))),
  account_id: Schema.optional(integerParam(1, MAX_ID)),
  ...params(ADMIN_LISTS)
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `ListActionsParams`. */
export type ListActionsParams = typeof ListActionsParams.Type
