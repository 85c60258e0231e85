/**
 * The HTTP application: both APIs with their handlers, the gateway, the OpenAPI documents,
 * the domain services and the background workers, ready to serve on Node or to mount as
 * a web-standard handler.
 */
import { AdminApi, ConsoleApi, DashboardApi, EndpointPolicy, ResellerApi } from "@databundle/contract"
import {
  Accounts,
  ApiKeys,
  Catalog,
  Commissions,
  Dashboard,
  Fulfillment,
  Idempotency,
  Mailer,
  OperatorActions,
  Operators,
  Orders,
  Payments,
  PhoneNumbers,
  RateLimiter,
  Sessions,
  Settings,
  Stats,
  Users,
  Wallet,
  WebhookDelivery,
  Webhooks
} from "@databundle/core"
import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import * as AdminHandlers from "./AdminHandlers.js"
import { AdminAuthLive, ApiKeyAuthLive, ConsoleAuthLive, DashboardAuthLive } from "./Auth.js"
import * as ConsoleHandlers from "./ConsoleHandlers.js"
import * as DashboardHandlers from "./DashboardHandlers.js"
import * as Gateway from "./Gateway.js"
import * as Health from "./Health.js"
import * as Metrics from "./Metrics.js"
import * as Paystack from "./Paystack.js"
import * as RequestContext from "./RequestContext.js"
import * as RequestLog from "./RequestLog.js"
import * as ResellerHandlers from "./ResellerHandlers.js"
import * as Routes from "./Routes.js"
import { ServerApi } from "./ServerApi.js"
import * as ServerConfig from "./ServerConfig.js"
import * as Smtp from "./Smtp.js"
import * as StaticFiles from "./StaticFiles.js"
import * as Upstream from "./Upstream.js"
import { balanceWatch } from "./UpstreamBalance.js"
import * as UpstreamConfig from "./UpstreamConfig.js"
import { Upstreams } from "./Upstreams.js"
import * as UpstreamWebhooks from "./UpstreamWebhooks.js"
import * as WebhookTransport from "./WebhookTransport.js"

/**
 * The fulfilment provider `BUNDLES_PROVIDER` names: the built-in simulator (the default) or
 * the configured upstreams; `Upstreams` is there either way (empty for the simulator).
 */
export const FulfillmentLive = Layer.unwrapEffect(Effect.map(
  UpstreamConfig.provider,
  (kind) => kind === "simulator" ? Fulfillment.FulfillmentProvider.Simulator : Upstream.provider
)).pipe(Layer.provideMerge(Upstreams.layer))

/** The domain services, on the fulfilment provider of the configuration. */
export const DomainLive = Layer.mergeAll(
  Accounts.Accounts.Default,
  ApiKeys.ApiKeys.Default,
  Catalog.Catalog.Default,
  Wallet.Wallet.Default,
  Orders.Orders.Default,
  Commissions.Commissions.Default,
  PhoneNumbers.PhoneNumbers.Default,
  Idempotency.Idempotency.Default,
  Settings.Settings.Default,
  Webhooks.Webhooks.Default,
  Sessions.Sessions.Default,
  Operators.Operators.Default,
  OperatorActions.OperatorActions.Default,
  Stats.Stats.Default,
  Users.Users.Default,
  Payments.Payments.Default,
  Dashboard.Dashboard.Default,
  Mailer.Mailer.Default
).pipe(
  // One process counts in memory; several on one database share the counts there. One store
  // serves the gateway and sign-in throttling alike.
  Layer.provideMerge(Layer.unwrapEffect(Effect.map(
    ServerConfig.rateLimitStore,
    (store) => store === "database" ? RateLimiter.layerSql : RateLimiter.layerMemory
  ))),
  Layer.provideMerge(FulfillmentLive),
  Layer.provide(Paystack.layer),
  Layer.provide(Smtp.layer)
)

/**
 * The database-driven workers: pending orders, payments, queued email and webhook deliveries
 * (on their own transport, timed).
 */
export const WorkersLive = Layer.scoped(
  Health.Workers,
  Effect.gen(function*() {
    const orders = yield* Orders.Orders
    const delivery = yield* WebhookDelivery.WebhookDelivery
    const payments = yield* Payments.Payments
    const mailer = yield* Mailer.Mailer
    // (The upstream balance watch ends at once when no upstream has a threshold: not watched.)
    yield* Effect.forkScoped(balanceWatch)
    return Health.watch([
      { name: "fulfilment", fiber: yield* Effect.forkScoped(orders.runFulfilment) },
      { name: "payments", fiber: yield* Effect.forkScoped(payments.runCollection) },
      { name: "mail", fiber: yield* Effect.forkScoped(mailer.runSender) },
      { name: "webhooks", fiber: yield* Effect.forkScoped(delivery.run) }
    ])
  })
).pipe(
  Layer.provide(WebhookDelivery.WebhookDelivery.Default),
  Layer.provide(WebhookTransport.timed.pipe(Layer.provide(WebhookTransport.layer)))
)

const openApiPaths = {
  reseller: `${ResellerApi.RESELLER_PREFIX}/openapi.json`,
  admin: `${AdminApi.ADMIN_PREFIX}/openapi.json`
} as const

const openApiDocuments = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const reseller = yield* HttpServerResponse.json(OpenApi.fromApi(ResellerApi.ResellerApi))
    const admin = yield* HttpServerResponse.json(OpenApi.fromApi(AdminApi.AdminApi))
    yield* router.get(openApiPaths.reseller, Effect.succeed(reseller))
    yield* router.get(openApiPaths.admin, Effect.succeed(admin))
  }).pipe(Effect.orDie)
)

// The probes and the scrape: no rate limits (a prober calls often), the admin token for metrics;
// the probes look at no credentials at all, so a prober sending some is never counted as failing.
const operations = (prefix: string, credentials: Routes.Credentials = "bearer"): Routes.Area => ({
  prefix,
  credentials,
  policy: EndpointPolicy.fromAnnotations(Context.empty())
})

/**
 * The route table: both APIs under their prefixes, the OpenAPI documents served beside
 * them, the probes and metrics (`Health`), and the web dashboard's files.
 */
export const routes = Routes.make(
  ServerApi,
  [
    {
      prefix: ResellerApi.RESELLER_PREFIX,
      credentials: "apiKey",
      policy: EndpointPolicy.fromAnnotations(ResellerApi.ResellerApi.annotations)
    },
    {
      prefix: AdminApi.ADMIN_PREFIX,
      credentials: "admin",
      policy: EndpointPolicy.fromAnnotations(AdminApi.AdminApi.annotations)
    },
    {
      prefix: DashboardApi.DASHBOARD_PREFIX,
      credentials: "session",
      policy: EndpointPolicy.fromAnnotations(DashboardApi.DashboardApi.annotations)
    },
    {
      prefix: ConsoleApi.CONSOLE_PREFIX,
      credentials: "console",
      policy: EndpointPolicy.fromAnnotations(ConsoleApi.ConsoleApi.annotations)
    },
    operations(Health.paths.health, "none"),
    operations(Health.paths.ready, "none"),
    operations(Health.paths.metrics),
    // Signed by the gateway, not by our credentials; no rate limit (the gateway retries on its own schedule).
    operations(Paystack.CALLBACK_PATH),
    // Signed by the upstream, not authenticated by us: the handler checks the signature.
    operations(UpstreamWebhooks.PREFIX)
  ],
  [
    { method: "GET", path: openApiPaths.reseller, name: "openapi.reseller" },
    { method: "GET", path: openApiPaths.admin, name: "openapi.admin" },
    { method: "GET", path: Health.paths.health, name: "health.alive" },
    { method: "GET", path: Health.paths.ready, name: "health.ready" },
    { method: "GET", path: Health.paths.metrics, name: "metrics.scrape", authenticated: true },
    { method: "POST", path: Paystack.CALLBACK_PATH, name: "callbacks.paystack", payload: true },
    { method: "POST", path: UpstreamWebhooks.path, name: "upstreamWebhooks.receive", payload: true }
  ],
  StaticFiles.make()
)

/** The four APIs' handlers, on their security middlewares. */
const HandlersLive = HttpApiBuilder.api(ServerApi).pipe(
  Layer.provide(ResellerHandlers.layer.pipe(Layer.provide(ApiKeyAuthLive))),
  Layer.provide(AdminHandlers.layer.pipe(Layer.provide(AdminAuthLive))),
  Layer.provide(DashboardHandlers.layer.pipe(Layer.provide(DashboardAuthLive))),
  Layer.provide(ConsoleHandlers.layer.pipe(Layer.provide(ConsoleAuthLive), Layer.provide(AdminAuthLive)))
)

/** The routes outside the four APIs: the OpenAPI documents, the probes and metrics, the callbacks. */
const OutsideRoutesLive = Layer.mergeAll(
  openApiDocuments,
  Health.routes,
  Paystack.callbackRoute,
  UpstreamWebhooks.routes
)

/** Both APIs bound to the domain, without the database and the HTTP server. */
export const ApiLive = Layer.mergeAll(
  HandlersLive,
  // The gateway, and its answers to the catalogue's reads before the router (the request log asks for them).
  Layer.unwrapEffect(Effect.gen(function*() {
    const gateway = yield* Gateway.make(
      ServerApi,
      routes,
      yield* ResellerHandlers.cachedReads,
      yield* ResellerHandlers.direct
    )
    return Layer.merge(
      HttpApiBuilder.middleware(ServerApi, gateway.middleware),
      Layer.succeed(RequestContext.EarlyAnswer, gateway.early)
    )
  })),
  OutsideRoutesLive
)

/**
 * The same APIs with every request answered by the framework's router behind the same
 * gateway middleware: no early answers, no handler called by the gateway. The reference the
 * differential test holds the production road (`ApiLive`) to.
 */
export const RouterOnlyApiLive = Layer.mergeAll(
  HandlersLive,
  Layer.unwrapEffect(Effect.map(
    Gateway.make(ServerApi, routes),
    (gateway) => HttpApiBuilder.middleware(ServerApi, gateway.middleware)
  )),
  Layer.succeed(RequestContext.EarlyAnswer, () => undefined),
  OutsideRoutesLive
)

/** The whole application on `api` (one of the two roads above), given a SqlClient. */
const appOn = <A, E, R>(api: Layer.Layer<A, E, R>) =>
  api.pipe(
    Layer.provideMerge(WorkersLive),
    Layer.provideMerge(Metrics.Metrics.Default),
    Layer.provideMerge(DomainLive)
  )

/** The whole application (APIs, domain, workers and metrics), given a SqlClient. */
export const AppLive = appOn(ApiLive)

/** The whole application with every request through the router (`RouterOnlyApiLive`), for the differential test. */
export const RouterOnlyAppLive = appOn(RouterOnlyApiLive)

/** The request pipeline around the APIs (request ids and log lines). */
export const middleware = RequestLog.middleware
