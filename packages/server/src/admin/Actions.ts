/**
 * `admin actions`: the action log, newest first: who changed what through the admin API
 * (the admin token or an operator), and when.
 */
import { AdminApi, OperatorAction } from "@databundle/contract"
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import type * as AdminClient from "../AdminClient.js"
import { execute, request } from "./Call.js"
import { listing, shared, type UrlParamsOf } from "./Options.js"
import { date, pageLine } from "./Text.js"

const actionsListing = listing<UrlParamsOf<AdminClient.Client["actions"]["list"]>>(
  AdminApi.ActionsGroup.endpoints.list
)

const who = (line: OperatorAction.OperatorAction) =>
  line.actor_kind === "token" ? "admin token" : line.operator_email ?? `operator ${line.operator_id}`

/** `admin actions`: the log, filtered. */
export const actions = Command.make("actions", {
  ...shared,
  actor: Options.text("actor").pipe(
    Options.withDescription("token, operator (any), or operator:ID"),
    Options.optional
  ),
  action: Options.choice("action", OperatorAction.ACTIONS).pipe(
    Options.withDescription("Only this action"),
    Options.optional
  ),
  targetKind: Options.choice("target-kind", OperatorAction.TARGET_KINDS).pipe(
    Options.withDescription("Only changes to this kind of thing"),
    Options.optional
  ),
  targetId: Options.text("target-id").pipe(
    Options.withDescription("Only changes to this one (an account id, order number, payment number...)"),
    Options.optional
  ),
  account: Options.integer("account").pipe(
    Options.withDescription("Only changes concerning this account"),
    Options.optional
  ),
  ...actionsListing.options
}, (options) =>
  execute(
    options,
    actionsListing.params(options, {
      actor: options.actor,
      action: options.action,
      target_kind: options.targetKind,
      target_id: options.targetId,
      account_id: options.account
    }).pipe(Effect.flatMap((urlParams) => request(options, (client) => client.actions.list({ urlParams })))),
    AdminApi.ActionsPage,
    ({ actions, pagination }) =>
      actions.length === 0 ? ["No actions."] : [
        ...actions.map((line) => `${date(line.at)}  ${who(line)}  ${line.action}  ${line.summary}`),
        pageLine(pagination, "action")
      ]
  )).pipe(Command.withDescription("The action log: every change made through the admin API, newest first"))
