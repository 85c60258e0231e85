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
import {
  HttpApi,
  HttpApiBuilder,
  HttpApp,
  type HttpMethod,
  HttpRouter,
  HttpServer,
  HttpServerResponse,
  OpenApi
} from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import * as AdminHandlers from "./AdminHandlers.js"
import { AdminAuthLive, ApiKeyAuthLive, ConsoleAuthLive, DashboardAuthLive } from "./Auth.js"
import * as ConsoleHandlers from "./ConsoleHandlers.js"
import * as DashboardHandlers from "./DashboardHandlers.js"
import * as Dispatch from "./Dispatch.js"
import * as Gateway from "./Gateway.js"
import * as Health from "./Health.js"
import * as Metrics from "./Metrics.js"
import * as Paystack from "./Paystack.js"
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

/** An OpenAPI document, made once, when the server starts. */
const openApi = (document: () => OpenApi.OpenAPISpec) =>
  Effect.map(Effect.orDie(Effect.suspend(() => HttpServerResponse.json(document()))), Effect.succeed)

/**
 * A route outside the four APIs: its entry in the route table (what it takes, whether it
 * needs its area's credentials) and its handler, made into a route of the API's router for
 * the dispatch to find.
 */
const outsideRoute = <E, R>(
  entry: Routes.Extra & { readonly method: HttpMethod.HttpMethod; readonly path: HttpRouter.PathInput },
  handler: Effect.Effect<HttpRouter.Route.Handler<E, never>, never, R>
) => ({
  ...entry,
  /** Puts the handler on `router`. */
  register: (router: { readonly addRoute: (route: HttpRouter.Route<E, never>) => Effect.Effect<void> }) =>
    Effect.flatMap(handler, (made) => router.addRoute(HttpRouter.makeRoute(entry.method, entry.path, made)))
})

/** The routes outside the four APIs, each listed once. */
const outside = [
  outsideRoute(
    { method: "GET", path: `${ResellerApi.RESELLER_PREFIX}/openapi.json`, name: "openapi.reseller" },
    openApi(() => OpenApi.fromApi(ResellerApi.ResellerApi))
  ),
  outsideRoute(
    { method: "GET", path: `${AdminApi.ADMIN_PREFIX}/openapi.json`, name: "openapi.admin" },
    openApi(() => OpenApi.fromApi(AdminApi.AdminApi))
  ),
  outsideRoute({ method: "GET", path: Health.paths.health, name: "health.alive" }, Health.alive),
  outsideRoute({ method: "GET", path: Health.paths.ready, name: "health.ready" }, Health.ready),
  outsideRoute(
    { method: "GET", path: Health.paths.metrics, name: "metrics.scrape", authenticated: true },
    Health.scrape
  ),
  outsideRoute(
    { method: "POST", path: Paystack.CALLBACK_PATH, name: "callbacks.paystack", payload: true },
    Paystack.callback
  ),
  outsideRoute(
    { method: "POST", path: UpstreamWebhooks.path, name: "upstreamWebhooks.receive", payload: true },
    UpstreamWebhooks.receiver
  )
]

// The probes and the scrape: no rate limits (a prober calls often), the admin token for metrics;
// the probes look at no credentials at all, so a prober sending some is never counted as failing.
const operations = (prefix: string, credentials: Routes.Credentials = "bearer"): Routes.Area => ({
  prefix,
  credentials,
  policy: EndpointPolicy.fromAnnotations(Context.empty())
})

/**
 * The route table: the four APIs under their prefixes, the routes outside them (`outside`),
 * and the web dashboard's files.
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
  outside,
  StaticFiles.make()
)

/** The four APIs' handlers, on their security middlewares. */
const HandlersLive = HttpApiBuilder.api(ServerApi).pipe(
  Layer.provide(ResellerHandlers.layer.pipe(Layer.provide(ApiKeyAuthLive))),
  Layer.provide(AdminHandlers.layer.pipe(Layer.provide(AdminAuthLive))),
  Layer.provide(DashboardHandlers.layer.pipe(Layer.provide(DashboardAuthLive))),
  Layer.provide(ConsoleHandlers.layer.pipe(Layer.provide(ConsoleAuthLive), Layer.provide(AdminAuthLive)))
)

/** The handlers of the routes outside the four APIs, on the API's router. */
const OutsideRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.forEach(
    outside,
    (entry): Effect.Effect<void, never, Effect.Effect.Context<ReturnType<(typeof outside)[number]["register"]>>> =>
      entry.register(router),
    { discard: true }
  )
)

/** Both APIs bound to the domain, their handlers on the API's router, without the database and the HTTP server. */
export const ApiLive = Layer.merge(HandlersLive, OutsideRoutesLive)

/**
 * The road (`Gateway`): every request through the route table and the admission to the
 * handler of its endpoint, taken from the API's router, the catalogue's reads answered from
 * memory when they can be.
 */
const road = Effect.gen(function*() {
  // (Every group's handlers are on the router once the API is built.)
  yield* HttpApi.Api
  const gateway = yield* Gateway.make(ServerApi, routes, yield* ResellerHandlers.cachedReads)
  return gateway.road(yield* Dispatch.handlers(routes))
})

/** The road served by the HTTP server of the context, each request logged (`RequestLog`). */
export const serve = Layer.unwrapEffect(
  Effect.map(road, (app) => HttpServer.serve(app, RequestLog.middleware))
).pipe(Layer.provide(HttpApiBuilder.Router.Live))

/**
 * The whole server on `layer` (the application and what it needs) as a web-standard handler
 * (`Request` → `Promise<Response>`).
 */
export const webHandler = <E>(
  layer: Layer.Layer<Layer.Layer.Success<typeof AppLive> | HttpRouter.HttpRouter.DefaultServices, E>
) =>
  HttpApp.toWebHandlerLayerWith(Layer.merge(layer, HttpApiBuilder.Router.Live), {
    middleware: RequestLog.middleware,
    toHandler: (runtime) => Effect.provide(road, runtime)
  })

/**
 * The same road with the framework's router as the dispatch, behind the same admission as an
 * API middleware, served as `HttpApiBuilder.serve` serves an API: no answer from memory, every
 * request matched again by the router. The reference the differential test holds `serve` to.
 */
export const serveByRouter = HttpApiBuilder.serve(RequestLog.middleware).pipe(
  Layer.provide(Layer.unwrapEffect(Effect.map(
    Gateway.make(ServerApi, routes),
    (gateway) =>
      // (The platform's services the handlers use are the server's, there as on the road.)
      HttpApiBuilder.middleware(ServerApi, (app) => gateway.road(Dispatch.byRouter(app)) as HttpApp.Default)
  )))
)

/** The whole application (APIs, domain, workers and metrics), given a SqlClient. */
export const AppLive = ApiLive.pipe(
  Layer.provideMerge(WorkersLive),
  Layer.provideMerge(Metrics.Metrics.Default),
  Layer.provideMerge(DomainLive)
)
