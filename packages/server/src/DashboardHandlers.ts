/**
 * The dashboard API's handlers: each binds an endpoint of `DashboardApi` to the domain. The
 * session and its CSRF token were checked by the gateway; the handlers act for the
 * `CurrentSession` the middleware provides.
 */
import {
  ApiError,
  DashboardApi,
  Idempotency as IdempotencyContract,
  type Mode,
  Money,
  Session
} from "@databundle/contract"
import { ApiKeys, Catalog, Commissions, Dashboard, Mailer, Orders, Payments, Sessions, Users } from "@databundle/core"
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, FiberRef, Layer, Option } from "effect"
import * as RequestContext from "./RequestContext.js"
import { ServerApi } from "./ServerApi.js"
import * as ServerConfig from "./ServerConfig.js"

const ok = <A extends object>(value: A) => ({ success: true as const, ...value })

const done = (message: string) => ({ success: true as const, message })

const replayed = HttpApp.appendPreResponseHandler((_, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, IdempotencyContract.IDEMPOTENT_REPLAYED_HEADER, "true"))
)

/** The session's page data: who is signed in, with the CSRF token. */
const sessionBody = (userId: number, csrfToken: string, expiresAt: Date) =>
  Effect.gen(function*() {
    const profile = yield* (yield* Users.Users).profile(userId)
    return ok({ ...profile, csrf_token: csrfToken, expires_at: expiresAt })
  })

/**
 * What the anonymous forms say happened to the email they asked for, as it truly happens on
 * this server: sent over SMTP, shown in the demo mailbox, or kept in the outbox for the
 * operators to read (no SMTP configured). Never whether the address is registered.
 */
const emailWords = Effect.gen(function*() {
  if (Option.isSome(yield* Effect.orDie(ServerConfig.smtpUrl))) {
    return {
      registered: "Check your email: follow the link we sent to verify your address, then sign in.",
      linkSent: "If the address can receive it, an email is on its way: follow its link to continue."
    }
  }
  if (yield* Effect.orDie(ServerConfig.demoMailbox)) {
    return {
      registered:
        "This demo server sends no email: open the verification link in the demo mailbox below, then sign in.",
      linkSent: "This demo server sends no email: if the address is registered, its link is in the demo mailbox below."
    }
  }
  // The operators cannot read a link either (the outbox hides its token): only their server's log can hold it.
  const operators = "tell the service's operators, who must set up its email for the link to reach you"
  return {
    registered: `Your registration is received, but this server sends no email yet: ${operators}.`,
    linkSent: `This server sends no email yet: if the address is registered, ${operators}.`
  }
})

/**
 * Sets the cookie of a known browser (`KnownBrowsers`): sent only to the sign-in, never to script.
 */
const rememberBrowser = (browser: { readonly token: string; readonly expiresAt: Date }, secure: boolean) =>
  HttpApp.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.unsafeSetCookie(response, Session.BROWSER_COOKIE, browser.token, {
      httpOnly: true,
      secure,
      sameSite: "strict",
      path: `${DashboardApi.DASHBOARD_PREFIX}/session`,
      expires: browser.expiresAt
    }))
  )

/** The known browser cookie the request carries, if any. */
const browserCookie = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => request.cookies[Session.BROWSER_COOKIE]
)

/** Registration, verification, sign-in and password reset. */
export const AccessLive = HttpApiBuilder.group(ServerApi, "dashboardAccess", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users.Users
    const config = yield* Effect.orDie(ServerConfig.dashboard)
    const words = yield* emailWords
    return handlers
      .handle("register", ({ payload }) => Effect.as(users.register(payload, config.publicUrl), done(words.registered)))
      .handle("verifyEmail", ({ payload }) =>
        Effect.as(users.verifyEmail(payload.token), done("Your email address is verified: you can sign in now.")))
      .handle("resendVerification", ({ payload }) =>
        Effect.as(users.resendVerification(payload.email, config.publicUrl), done(words.linkSent)))
      .handle("signIn", ({ payload }) =>
        Effect.gen(function*() {
          const info = yield* FiberRef.get(RequestContext.current)
          const browser = yield* browserCookie
          const session = yield* users.signIn(payload.email, payload.password, {
            address: info.address ?? "unknown",
            ...(browser === undefined ? {} : { browser })
          })
          yield* HttpApp.appendPreResponseHandler((_, response) =>
            Effect.succeed(HttpServerResponse.unsafeSetCookie(response, Session.SESSION_COOKIE, session.token, {
              httpOnly: true,
              secure: config.secureCookies,
              sameSite: "strict",
              path: DashboardApi.DASHBOARD_PREFIX,
              expires: session.expiresAt
            }))
          )
          yield* rememberBrowser(session.browser, config.secureCookies)
          info.accountId = undefined
          return yield* sessionBody(session.userId, session.csrfToken, session.expiresAt)
        }))
      .handle("forgotPassword", ({ payload }) =>
        Effect.as(users.forgotPassword(payload.email, config.publicUrl), done(words.linkSent)))
      .handle("resetPassword", ({ payload }) =>
        Effect.gen(function*() {
          const browser = yield* users.resetPassword(payload.token, payload.password, yield* browserCookie)
          yield* rememberBrowser(browser, config.secureCookies)
          return done("Your password is changed and every session ended: sign in with the new one.")
        }))
  }))

/** The signed-in session. */
export const SessionLive = HttpApiBuilder.group(ServerApi, "dashboardSession", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users.Users
    const sessions = yield* Sessions.Sessions
    const config = yield* Effect.orDie(ServerConfig.dashboard)
    return handlers
      .handle("current", () =>
        Effect.gen(function*() {
          const caller = yield* FiberRef.get(RequestContext.caller)
          if (caller._tag !== "Holder") return yield* Effect.dieMessage("a session endpoint without a session")
          return yield* sessionBody(caller.session.userId, caller.csrf, caller.session.expiresAt)
        }))
      .handle("signOut", () =>
        Effect.gen(function*() {
          const { sessionId } = yield* Session.CurrentSession
          yield* sessions.end(sessionId)
          yield* HttpApp.appendPreResponseHandler((_, response) =>
            Effect.succeed(HttpServerResponse.expireCookie(response, Session.SESSION_COOKIE, {
              httpOnly: true,
              secure: config.secureCookies,
              sameSite: "strict",
              path: DashboardApi.DASHBOARD_PREFIX
            }))
          )
          return done("Signed out")
        }))
      .handle("changePassword", ({ payload }) =>
        Effect.gen(function*() {
          const { sessionId, userId } = yield* Session.CurrentSession
          yield* users.changePassword(userId, sessionId, payload.current_password, payload.new_password)
          return done("Password changed; your other sessions were ended")
        }))
  }))

/**
 * The account a request of the session acts on: the session's own (live) account, or for
 * `mode: "test"` its test account (made on first use, as a first test key makes it), exactly
 * as a test API key's requests act on it.
 */
const sides = Effect.map(ApiKeys.ApiKeys, (apiKeys) => (mode: Mode.Mode | undefined) =>
  Effect.gen(function*() {
    const { accountId } = yield* Session.CurrentSession
    if (mode !== "test") return accountId
    return yield* Option.match(yield* apiKeys.testAccount(accountId), {
      onNone: () => Effect.dieMessage(`the session's account ${accountId} is not a live account`),
      onSome: Effect.succeed
    })
  }))

/** The home page. */
export const HomeLive = HttpApiBuilder.group(ServerApi, "dashboardHome", (handlers) =>
  Effect.gen(function*() {
    const dashboard = yield* Dashboard.Dashboard
    const sideOf = yield* sides
    return handlers.handle("home", ({ urlParams }) =>
      Effect.gen(function*() {
        return ok(yield* dashboard.home(yield* sideOf(urlParams.mode)))
      }))
  }))

/** Networks and bundles. */
export const CatalogLive = HttpApiBuilder.group(ServerApi, "dashboardCatalog", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog.Catalog
    return handlers
      .handle("networks", () => Effect.map(catalog.networks, (networks) => ok({ networks })))
      .handle("bundles", ({ path }) =>
        Effect.gen(function*() {
          const { priceGroupId } = yield* Session.CurrentSession
          return ok(yield* catalog.bundles(path.network_id, priceGroupId))
        }))
  }))

const placedMessage = (status: string, replay: boolean) =>
  replay
    ? "Already bought with this reference: nothing was charged again"
    : status === "successful"
    ? "Bundle delivered"
    : status === "pending"
    ? "Paid; the bundle is on its way"
    : "The network refused the bundle; the amount was refunded"

/** Buying and the orders. */
export const OrdersLive = HttpApiBuilder.group(ServerApi, "dashboardOrders", (handlers) =>
  Effect.gen(function*() {
    const orders = yield* Orders.Orders
    const sideOf = yield* sides
    return handlers
      .handle("place", ({ payload: { mode, ...payload } }) =>
        Effect.gen(function*() {
          const placement = yield* orders.place(yield* sideOf(mode), payload)
          if (placement.replayed) yield* replayed
          return ok({
            message: placedMessage(placement.order.status, placement.replayed),
            order: placement.order,
            wallet_balance: placement.walletBalance,
            replayed: placement.replayed,
            warnings: placement.warnings
          })
        }))
      .handle("list", ({ urlParams: { mode, ...query } }) =>
        Effect.gen(function*() {
          return ok(yield* orders.list(yield* sideOf(mode), query))
        }))
      .handle("get", ({ path, urlParams }) =>
        Effect.gen(function*() {
          return ok({ order: yield* orders.get(yield* sideOf(urlParams.mode), path.order_number) })
        }))
  }))

/** The ledger. */
export const WalletLive = HttpApiBuilder.group(ServerApi, "dashboardWallet", (handlers) =>
  Effect.gen(function*() {
    const dashboard = yield* Dashboard.Dashboard
    const sideOf = yield* sides
    const commissions = yield* Commissions.Commissions
    return handlers
      .handle("ledger", ({ urlParams: { mode, ...query } }) =>
        Effect.gen(function*() {
          return ok(yield* dashboard.ledger(yield* sideOf(mode), query))
        }))
      .handle("transfer", ({ headers, payload }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          const outcome = yield* commissions.transfer(accountId, payload, headers["idempotency-key"])
          if (outcome.replayed) yield* replayed
          return ok({
            message: `Moved ${Money.formatGhs(payload.amount)} from the ${payload.from} wallet to the main wallet`,
            balance: outcome.value.balance
          })
        }))
      .handle("earnings", () =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          return ok({ earnings: yield* commissions.earnings(accountId) })
        }))
  }))

/** Funding. */
export const PaymentsLive = HttpApiBuilder.group(ServerApi, "dashboardPayments", (handlers) =>
  Effect.gen(function*() {
    const payments = yield* Payments.Payments
    return handlers
      .handle("methods", () => Effect.succeed(ok({ methods: payments.methods })))
      .handle("create", ({ headers, payload }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          const created = yield* payments.create(accountId, headers["idempotency-key"], payload)
          if (created.replayed) {
            yield* replayed
            yield* HttpApp.appendPreResponseHandler((_, response) =>
              Effect.succeed(HttpServerResponse.setStatus(response, 200))
            )
          }
          return ok({ payment: created.payment })
        }))
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          return ok(yield* payments.list(accountId, urlParams))
        }))
      .handle("get", ({ path }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          return ok({ payment: yield* payments.get(accountId, path.payment_number) })
        }))
      .handle("submitCode", ({ path, payload }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          return ok({ payment: yield* payments.submitCode(accountId, path.payment_number, payload.otp) })
        }))
  }))

/** API keys. */
export const KeysLive = HttpApiBuilder.group(ServerApi, "dashboardKeys", (handlers) =>
  Effect.gen(function*() {
    const dashboard = yield* Dashboard.Dashboard
    return handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          return ok({ keys: yield* dashboard.keys(accountId) })
        }))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          return ok(yield* dashboard.createKey(accountId, payload.name, payload.mode ?? "live"))
        }))
      .handle("revoke", ({ path }) =>
        Effect.gen(function*() {
          const { accountId } = yield* Session.CurrentSession
          return ok({ key: yield* dashboard.revokeKey(accountId, path.key_id) })
        }))
  }))

/** The webhook. */
export const WebhooksLive = HttpApiBuilder.group(ServerApi, "dashboardWebhooks", (handlers) =>
  Effect.gen(function*() {
    const dashboard = yield* Dashboard.Dashboard
    const account = Effect.map(Session.CurrentSession, (session) => session.accountId)
    const settings = (view: { url: string | null; has_secret: boolean }) =>
      ok({ url: view.url, has_secret: view.has_secret })
    return handlers
      .handle("settings", () => Effect.map(Effect.flatMap(account, dashboard.webhook), settings))
      .handle("setUrl", ({ payload }) =>
        Effect.map(Effect.flatMap(account, (id) => dashboard.setWebhookUrl(id, payload.url)), settings))
      .handle("revealSecret", () =>
        Effect.gen(function*() {
          const view = yield* dashboard.webhook(yield* account)
          if (view.secret === null) {
            return yield* ApiError.ValidationError.field("url", "is not set: setting a webhook URL makes its secret")
          }
          return ok({ secret: view.secret })
        }))
      .handle("rotateSecret", () =>
        Effect.map(Effect.flatMap(account, dashboard.rotateSecret), (secret) =>
          ok({ secret })))
      .handle("sendTest", ({ payload }) =>
        Effect.map(
          Effect.flatMap(account, (id) =>
            dashboard.sendTest(id, payload.type)),
          (delivery) =>
            ok({ delivery })
        ))
      .handle("deliveries", ({ urlParams }) =>
        Effect.map(
          Effect.flatMap(account, (id) => dashboard.deliveries(id, urlParams)),
          ok
        ))
      .handle("delivery", ({ path }) =>
        Effect.map(
          Effect.flatMap(account, (id) => dashboard.delivery(id, path.event_id)),
          (delivery) => ok({ delivery })
        ))
      .handle("resend", ({ path }) =>
        Effect.map(
          Effect.flatMap(account, (id) => dashboard.resend(id, path.event_id)),
          (delivery) => ok({ delivery })
        ))
  }))

/** How far back, and how many, emails the demo mailbox shows. */
const DEMO_MAILBOX = { within: Duration.hours(1), limit: 10 } as const

/**
 * The demo mailbox: on under `serve --demo` on loopback without SMTP, for a browser on this
 * machine that came through no proxy (not even one on loopback); an unknown path otherwise.
 */
export const DemoLive = HttpApiBuilder.group(ServerApi, "dashboardDemo", (handlers) =>
  Effect.gen(function*() {
    const mailer = yield* Mailer.Mailer
    const enabled = yield* Effect.orDie(ServerConfig.demoMailbox)
    const path = `${DashboardApi.DASHBOARD_PREFIX}/demo/mailbox`
    const local = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const info = yield* FiberRef.get(RequestContext.current)
      const proxied = request.headers["x-forwarded-for"] !== undefined || request.headers.forwarded !== undefined
      return !proxied && ServerConfig.isLoopbackAddress(info.address ?? "")
    })
    return handlers.handle("mailbox", ({ urlParams }) =>
      Effect.gen(function*() {
        if (!enabled || !(yield* local)) return yield* new ApiError.NotFound({ message: `No route for GET ${path}` })
        return ok({ emails: yield* mailer.recent(urlParams.email, DEMO_MAILBOX.within, DEMO_MAILBOX.limit) })
      }))
  }))

/** Every handler of the dashboard API. */
export const layer = Layer.mergeAll(
  AccessLive,
  DemoLive,
  SessionLive,
  HomeLive,
  CatalogLive,
  OrdersLive,
  WalletLive,
  PaymentsLive,
  KeysLive,
  WebhooksLive
)
