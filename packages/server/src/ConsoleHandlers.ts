/**
 * The console's handlers: the operator's sign-in API (`/console/v1`), and the admin API's
 * endpoints made for the console (operators, the action log, the figures, webhook health,
 * single catalogue changes). The operator session and its CSRF token were checked by the
 * gateway.
 */
import { ApiError, ConsoleApi, Money, Operator } from "@databundle/contract"
import { Accounts, Catalog, OperatorActions, Operators, Passwords, Stats, Webhooks } from "@databundle/core"
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
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
        const request = yield* HttpServerRequest.HttpServerRequest
        const browser = request.cookies[Operator.OPERATOR_BROWSER_COOKIE]
        const session = yield* operators.signIn(payload.email, payload.password, {
          address: info.address ?? "unknown",
          ...(browser === undefined ? {} : { browser })
        })
        yield* HttpApp.appendPreResponseHandler((_, response) =>
          Effect.succeed(
            HttpServerResponse.unsafeSetCookies(response, [
              [Operator.OPERATOR_COOKIE, session.token, {
                ...cookieOptions(config.secureCookies),
                expires: session.expiresAt
              }],
              // The known browser's cookie: sent to the sign-in only (`KnownBrowsers`).
              [Operator.OPERATOR_BROWSER_COOKIE, session.browser.token, {
                ...cookieOptions(config.secureCookies),
                path: `${ConsoleApi.CONSOLE_PREFIX}/session`,
                expires: session.browser.expiresAt
              }]
            ])
          )
        )
        return ok({ operator: session.operator, csrf_token: session.csrfToken, expires_at: session.expiresAt })
      }))
  }))

/** The signed-in operator's session. */
export const ConsoleSessionLive = HttpApiBuilder.group(
  ServerApi,
  "consoleSession",
  (handlers) =>
    Effect.gen(function*() {
      const operators = yield* Operators.Operators
      const config = yield* Effect.orDie(ServerConfig.dashboard)
      const { logged } = yield* ActionLog.make
      return handlers
        .handle("current", () =>
          Effect.gen(function*() {
            const caller = yield* FiberRef.get(RequestContext.caller)
            if (caller._tag !== "OperatorSession") {
              return yield* Effect.dieMessage("a console session endpoint without a session")
            }
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
        .handle("changePassword", ({ payload }) =>
          Effect.gen(function*() {
            const { operatorId, sessionId } = yield* Operator.CurrentOperator
            yield* operators.checkCurrentPassword(operatorId, payload.current_password)
            // The key derivation runs before the transaction, which it would hold for tens of milliseconds.
            const passwordHash = yield* Passwords.hash(payload.new_password)
            yield* logged(operators.replacePassword(operatorId, sessionId, passwordHash), (operator) => ({
              action: "operator.password_change",
              targetKind: "operator",
              targetId: operator.id,
              summary: `Operator ${operator.email} changed their password; their other sessions ended`,
              detail: { email: operator.email }
            }))
            return { success: true as const, message: "Password changed; your other sessions were ended" }
          }))
    })
)

/** The operators. */
export const OperatorsLive = HttpApiBuilder.group(ServerApi, "operators", (handlers) =>
  Effect.gen(function*() {
    const operators = yield* Operators.Operators
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("list", () => Effect.map(operators.list, (list) => ok({ operators: list })))
      .handle("create", ({ payload }) =>
        Effect.flatMap(Passwords.hash(payload.password), (passwordHash) =>
          // The key derivation runs before the transaction, which it would hold for tens of milliseconds.
          Effect.map(
            logged(operators.insert(payload, passwordHash), (operator) => ({
              action: "operator.create",
              targetKind: "operator",
              targetId: operator.id,
              summary: `Created ${operator.role} ${operator.email} (${operator.name})`,
              detail: { email: operator.email, name: operator.name, role: operator.role }
            })),
            (operator) => ok({ operator })
          )))
      .handle("update", ({ path, payload }) =>
        Effect.map(
          logged(operators.setRole(path.operator_id, payload.role), (operator) => ({
            action: "operator.role",
            targetKind: "operator",
            targetId: operator.id,
            summary: `Operator ${operator.email} is now ${operator.role === "owner" ? "an owner" : "an operator"}`,
            detail: { email: operator.email, role: operator.role }
          })),
          (operator) => ok({ operator })
        ))
      .handle("disable", ({ path }) =>
        Effect.flatMap(
          FiberRef.get(RequestContext.caller),
          (caller) =>
            caller._tag === "OperatorSession" && caller.session.operatorId === path.operator_id
              ? Effect.fail(
                new ApiError.Conflict({
                  message: "You cannot disable yourself: another operator can, if you must be"
                })
              )
              : Effect.void
        ).pipe(Effect.zipRight(Effect.map(
          logged(operators.disable(path.operator_id), (operator) => ({
            action: "operator.disable",
            targetKind: "operator",
            targetId: operator.id,
            summary: `Disabled operator ${operator.email}; their sessions ended`,
            detail: { email: operator.email }
          })),
          (operator) => ok({ operator })
        ))))
      .handle("resetPassword", ({ path, payload }) =>
        Effect.flatMap(Passwords.hash(payload.password), (passwordHash) =>
          Effect.map(
            logged(operators.setPassword(path.operator_id, passwordHash), (operator) => ({
              action: "operator.password_reset",
              targetKind: "operator",
              targetId: operator.id,
              summary: `Set a new password for operator ${operator.email}; their sessions ended`,
              detail: { email: operator.email }
            })),
            (operator) =>
              ok({ operator })
          )))
  }))

/** The action log. */
export const ActionsLive = HttpApiBuilder.group(ServerApi, "actions", (handlers) =>
  Effect.gen(function*() {
    const log = yield* OperatorActions.OperatorActions
    return handlers.handle("list", ({ urlParams }) => Effect.map(log.list(urlParams), ok))
  }))

/** The figures for the charts. */
export const StatsLive = HttpApiBuilder.group(ServerApi, "stats", (handlers) =>
  Effect.gen(function*() {
    const stats = yield* Stats.Stats
    return handlers.handle("get", ({ urlParams }) => Effect.map(stats.get(urlParams), ok))
  }))

/** Webhook health, an account's deliveries, and resending one. */
export const WebhooksAdminLive = HttpApiBuilder.group(ServerApi, "webhooksAdmin", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks.Webhooks
    const accounts = yield* Accounts.Accounts
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("health", () => Effect.map(webhooks.health, (endpoints) => ok({ endpoints })))
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.gen(function*() {
          yield* accounts.show(path.account_id)
          return ok(yield* webhooks.deliveries(path.account_id, urlParams))
        }))
      .handle("resend", ({ path }) =>
        Effect.gen(function*() {
          yield* accounts.show(path.account_id)
          const delivery = yield* logged(webhooks.resend(path.account_id, path.event_id), (delivery) => ({
            action: "webhook.resend",
            targetKind: "webhook_event",
            targetId: delivery.id,
            accountId: path.account_id,
            summary: `Resent ${delivery.event_type} event ${delivery.id} of account ${path.account_id}`,
            detail: { event_type: delivery.event_type }
          }))
          return ok({ delivery })
        }))
  }))

const priceText = (price: bigint | undefined) => price === undefined ? "base" : Money.formatGhs(price)

/** Networks and bundles one at a time. */
export const CatalogAdminLive = HttpApiBuilder.group(ServerApi, "catalogAdmin", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    const { logged } = yield* ActionLog.make
    return handlers
      .handle("networks", () => Effect.map(catalog.adminNetworks(), (networks) => ok({ networks })))
      .handle("priceGroups", () => Effect.map(catalog.priceGroups, (groups) => ok({ price_groups: groups })))
      .handle("updateNetwork", ({ path, payload }) =>
        Effect.map(
          logged(catalog.updateNetwork(path.network_id, payload.active), (network) => ({
            action: "network.update",
            targetKind: "network",
            targetId: network.id,
            summary: `${payload.active ? "Activated" : "Deactivated"} network ${network.name} (${network.slug})`,
            detail: { active: payload.active }
          })),
          (network) => ok({ network })
        ))
      .handle("updateBundle", ({ path, payload }) =>
        Effect.map(
          logged(catalog.updateBundle(path.bundle_id, payload), ({ after, before }) => {
            const parts: Array<string> = []
            const detail: Record<string, unknown> = {}
            if (payload.active !== undefined && payload.active !== before.active) {
              parts.push(payload.active ? "activated" : "deactivated")
            }
            if (payload.active !== undefined) detail.active = payload.active
            if (payload.price !== undefined) {
              if (payload.price !== before.price) {
                parts.push(`base price ${Money.formatGhs(before.price)} -> ${Money.formatGhs(after.price)}`)
              }
              detail.price = Money.formatCedis(after.price)
            }
            if (payload.prices !== undefined) {
              const prices: Record<string, string | null> = {}
              for (const [group, price] of Object.entries(payload.prices)) {
                if (before.prices[group] !== (price ?? undefined)) {
                  parts.push(`${group} ${priceText(before.prices[group])} -> ${priceText(price ?? undefined)}`)
                }
                prices[group] = price === null ? null : Money.formatCedis(price)
              }
              detail.prices = prices
            }
            return {
              action: "bundle.update",
              targetKind: "bundle",
              targetId: after.id,
              summary: `Bundle ${after.key}: ${parts.length === 0 ? "no change" : parts.join(", ")}`,
              detail
            }
          }),
          ({ after }) => ok({ bundle: after })
        ))
  }))

/** Every handler of the console's endpoints. */
export const layer = Layer.mergeAll(
  ConsoleAccessLive,
  ConsoleSessionLive,
  OperatorsLive,
  ActionsLive,
  StatsLive,
  WebhooksAdminLive,
  CatalogAdminLive
)
