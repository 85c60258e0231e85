/**
 * Operators: the people who run the business from the console, each with a password of their
 * own (never the shared admin token in a browser). An operator's session is a random token in
 * the `bundles_operator` cookie, known to the server only as its SHA-256 hash, with a CSRF
 * token the page sends back on every state-changing request. The cookie is accepted on the
 * console API (`/console/v1`) and the admin API (`/admin/v1`) only; a dashboard user's cookie
 * never works there, nor an operator's on `/api/v1` or `/dashboard/v1`.
 */
import { HttpApiMiddleware, HttpApiSchema, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import { extensions, Failed, Unauthorized } from "./ApiError.js"
import { MAX_ID } from "./Identifier.js"
import { text } from "./Text.js"
import { Email, Password } from "./User.js"

/** The cookie that carries an operator's session token. */
export const OPERATOR_COOKIE = "bundles_operator"

/**
 * The cookie of a browser an operator signed in with before (sent to the console's sign-in
 * only): sign-in from it is counted per browser, so guesses from elsewhere cannot lock them out.
 */
export const OPERATOR_BROWSER_COOKIE = "bundles_operator_browser"

/**
 * What an operator may do: an `owner` manages operators (creates, disables, sets passwords
 * and roles) and runs the business; an `operator` runs the business and manages no operator.
 */
export const OperatorRole = Schema.Literal("owner", "operator")

/** The type of `OperatorRole`. */
export type OperatorRole = typeof OperatorRole.Type

/** An operator's identifier. */
export const OperatorId = Schema.Int.pipe(Schema.between(1, MAX_ID), Schema.brand("OperatorId"))

/** The type of `OperatorId`. */
export type OperatorId = typeof OperatorId.Type

/** An operator as the console and the admin API show them. */
export const OperatorView = Schema.Struct({
  id: OperatorId,
  email: Schema.String,
  name: Schema.String,
  role: OperatorRole,
  created_at: Schema.Date
}).annotations({ identifier: "OperatorView" })

/** The type of `OperatorView`. */
export type OperatorView = typeof OperatorView.Type

/** An operator in the admin list: with when they were disabled (null while they may sign in). */
export const OperatorSummary = Schema.Struct({
  ...OperatorView.fields,
  disabled_at: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "OperatorSummary" })

/** The type of `OperatorSummary`. */
export type OperatorSummary = typeof OperatorSummary.Type

/** The body of POST /admin/v1/operators. */
export const CreateOperatorPayload = Schema.Struct({
  email: Email,
  name: text(100),
  password: Password,
  role: Schema.optional(OperatorRole).annotations({ description: "operator (the default) or owner" })
}).annotations({ identifier: "CreateOperatorPayload", parseOptions: { errors: "all" } })

/** The type of `CreateOperatorPayload`. */
export type CreateOperatorPayload = typeof CreateOperatorPayload.Type

/** The body of PATCH /admin/v1/operators/:operator_id: the operator's role. */
export const UpdateOperatorPayload = Schema.Struct({
  role: OperatorRole
}).annotations({ identifier: "UpdateOperatorPayload", parseOptions: { errors: "all" } })

/** The type of `UpdateOperatorPayload`. */
export type UpdateOperatorPayload = typeof UpdateOperatorPayload.Type

/** The body of POST /admin/v1/operators/:operator_id/password: the operator's new password. */
export const ResetOperatorPasswordPayload = Schema.Struct({
  password: Password
}).annotations({ identifier: "ResetOperatorPasswordPayload", parseOptions: { errors: "all" } })

/** The type of `ResetOperatorPasswordPayload`. */
export type ResetOperatorPasswordPayload = typeof ResetOperatorPasswordPayload.Type

/** 404: no operator with that id. */
export class OperatorNotFound extends Schema.TaggedError<OperatorNotFound>()(
  "OperatorNotFound",
  { success: Failed, message: Schema.String, ...extensions("operator_not_found") },
  HttpApiSchema.annotations({ status: 404 })
) {}

/** Who a console request acts for, provided by the operator session middleware. */
export class CurrentOperator extends Context.Tag("contract/CurrentOperator")<CurrentOperator, {
  readonly sessionId: number
  readonly operatorId: OperatorId
}>() {}

/** Authenticates a console request by the operator's session cookie and provides the `CurrentOperator`. */
export class ConsoleAuth extends HttpApiMiddleware.Tag<ConsoleAuth>()("contract/ConsoleAuth", {
  failure: Unauthorized,
  provides: CurrentOperator,
  security: { operator: HttpApiSecurity.apiKey({ key: OPERATOR_COOKIE, in: "cookie" }) }
}) {}
