/**
 * The console's handlers: the operator's sign-in API (`/console/v1`), and the admin API's
 * endpoints made for the console (operators, the action log, the figures, webhook health,
 * single catalogue changes). The operator session and its CSRF token were checked by the
 * gateway.
 */
import { Operator } from "@databundle/contract"
import { OperatorActions, Operators } from "@databundle/core"
import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, Layer } from "effect"
import * as ActionLog from "./ActionLog.js"
import * as RequestContext from "./RequestContext.js"
import { ServerApi } from "./ServerApi.js"
import * as ServerConfig from "./ServerConfig.js"

const ok = <A extends object>(value: A) => ({ success: true as const, ...value })

/** The operator cookie's attributes: every path (it serves `/console/v1` and `/admin/v1`), never to script. */
const cookieOptions = (secure: boolean) => ({ httpOnly: true, secure, sameSite: "strict" as const, path: "/" })

/** Signing in. */
export const ConsoleAccessLive = HttpApiBuilder.group(ServerApi, "consoleAccess", (handlers) =>
  Effect.gen(function*() {
    const operators = yield* Operators.Operators
    const config = yield* Effect.orDie(ServerConfig.dashboard)
    return handlers.handle("signIn", ({ payload }) =>
      Effect.gen(function*() {
        const info = yield* FiberRef.get(RequestContext.current)
        const session = yield* operators.signIn(payload.email, payload.password, info.address ?? "unknown")
        yield* HttpApp.appendPreResponseHandler((_, response) =>
          Effect.succeed(
            HttpServerResponse.unsafeSetCookie(response, Operator.OPERATOR_COOKIE, session.token, {
              ...cookieOptions(config.secureCookies),
              expires: session.expiresAt
            })
          )
        )
        return ok({ operator: session.operator, csrf_token: session.csrfToken, expires_at: session.expiresAt })
      }))
  }))

/** The signed-in operator's session. */
export const ConsoleSessionLive = HttpApiBuilder.group(ServerApi, "consoleSession", (handlers) =>
  Effect.gen(function*() {
    const operators = yield* Operators.Operators
    const config = yield* Effect.orDie(ServerConfig.dashboard)
    return handlers
      .handle("current", () =>
        Effect.gen(function*() {
          const caller = yield* FiberRef.get(RequestContext.caller)
          if (caller._tag !== "Staff") return yield* Effect.dieMessage("a console session endpoint without a session")
          const operator = yield* Effect.orDie(operators.get(caller.session.operatorId))
          return ok({
            operator: Operators.toView(operator),
            csrf_token: caller.csrf,
            expires_at: caller.session.expiresAt
          })
        }))
      .handle("signOut", () =>
        Effect.gen(function*() {
          const { sessionId } = yield* Operator.CurrentOperator
          yield* operators.end(sessionId)
          yield* HttpApp.appendPreResponseHandler((_, response) =>
            Effect.succeed(
              HttpServerResponse.expireCookie(response, Operator.OPERATOR_COOKIE, cookieOptions(config.secureCookies))
            )
          )
          return { success: true as const, message: "Signed out" }
        }))
  }))

/** The operators. */
export const OperatorsLive = HttpApiBuilder.group(ServerApi, "operators", (handlers) =>
  Effect.gen(function*() {
    const operators = yield* Operators.Operators
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("list", () => Effect.map(operators.list, (list) => ok({ operators: list })))
      .handle("create", ({ payload }) =>
        Effect.map(
          logged(operators.create(payload), (operator) => ({
            action: "operator.create",
            targetKind: "operator",
            targetId: operator.id,
            summary: `Created operator ${operator.email} (${operator.name})`,
            detail: { email: operator.email, name: operator.name }
          })),
          (operator) => ok({ operator })
        ))
      .handle("disable", ({ path }) =>
        Effect.map(
          logged(operators.disable(path.operator_id), (operator) => ({
            action: "operator.disable",
            targetKind: "operator",
            targetId: operator.id,
            summary: `Disabled operator ${operator.email}; their sessions ended`,
            detail: { email: operator.email }
          })),
          (operator) => ok({ operator })
        ))
  }))

/** The action log. */
export const ActionsLive = HttpApiBuilder.group(ServerApi, "actions", (handlers) =>
  Effect.gen(function*() {
    const log = yield* OperatorActions.OperatorActions
    return handlers.handle("list", ({ urlParams }) => Effect.map(log.list(urlParams), ok))
  }))

const pending = Effect.dieMessage("not built yet")

/** Every handler of the console's endpoints. */
export const layer = Layer.mergeAll(
  ConsoleAccessLive,
  ConsoleSessionLive,
  OperatorsLive,
  ActionsLive,
  HttpApiBuilder.group(ServerApi, "stats", (h) => Effect.succeed(h.handle("get", () => pending))),
  HttpApiBuilder.group(ServerApi, "webhooksAdmin", (h) =>
    Effect.succeed(h.handle("health", () => pending).handle("deliveries", () => pending).handle("resend", () => pending))),
  HttpApiBuilder.group(ServerApi, "catalogAdmin", (h) =>
    Effect.succeed(
      h.handle("networks", () => pending).handle("updateNetwork", () => pending).handle("updateBundle", () => pending)
    ))
)
