/**
 * The Effect face: `BundlesClient`, a service whose methods return Effects failing with the
 * contract's typed errors. Every request is made by the client `HttpApiClient` derives from
 * `ResellerApi`, over `fetch`, behind the retry policy of `Retry.ts`.
 */
import { ValidationError } from "@databundle/contract/ApiError"
import { NetworkId } from "@databundle/contract/Network"
import { ListOrdersParams, MAX_PER_PAGE, PlaceOrderPayload } from "@databundle/contract/Order"
import * as ResellerApi from "@databundle/contract/ResellerApi"
import { FetchHttpClient, type HttpApi, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import {
  Chunk,
  Config,
  type ConfigError,
  Context,
  Effect,
  Layer,
  Option,
  ParseResult,
  Redacted,
  Schema,
  Stream
} from "effect"
import { type ClientOptions, ClientOptionsError, resolveOptions } from "./Options.js"
import { newReference } from "./Reference.js"
import { always, safeMethods, withPolicy } from "./Retry.js"

type ClientOf<Api> = Api extends HttpApi.HttpApi<infer _Id, infer Groups, infer E, infer _R>
  ? HttpApiClient.Client<Groups, E, never>
  : never

const deriveApi = (httpClient: HttpClient.HttpClient, baseUrl: string): Effect.Effect<BundlesClient.Api> =>
  HttpApiClient.makeWith(ResellerApi.ResellerApi, { httpClient, baseUrl })

type ErrorOf<F> = F extends (...args: any) => Effect.Effect<any, infer E, any> ? E : never

/** Types of the Effect face. */
export declare namespace BundlesClient {
  /** The client `HttpApiClient` derives from the contract: every endpoint, with full response bodies. */
  export type Api = ClientOf<typeof ResellerApi.ResellerApi>

  /** Errors of `balance`. */
  export type BalanceError = ErrorOf<Api["wallet"]["balance"]>
  /** Errors of `networks`. */
  export type NetworksError = ErrorOf<Api["catalog"]["networks"]>
  /** Errors of `bundles`. */
  export type BundlesError = ErrorOf<Api["catalog"]["bundles"]>
  /** Errors of `placeOrder`. */
  export type PlaceOrderError = ErrorOf<Api["orders"]["place"]>
  /** Errors of `getOrder`. */
  export type GetOrderError = ErrorOf<Api["orders"]["get"]>
  /** Errors of `listOrders` and `allOrders`. */
  export type ListOrdersError = ErrorOf<Api["orders"]["list"]>
  /** Any error of a call: the contract's typed errors, and no answer or one off the contract. */
  export type Error = BalanceError | NetworksError | BundlesError | PlaceOrderError | GetOrderError | ListOrdersError

  /** The body of POST /orders as the contract defines it; `reference` is filled in when `autoReference` is on. */
  export type PlaceOrderInput = typeof PlaceOrderPayload.Encoded

  /** The query of GET /orders as the contract defines it. */
  export type ListOrdersInput = typeof ListOrdersParams.Type

  /** A placed order, and whether the server replayed it (`Idempotent-Replayed: true`) rather than buying. */
  export type PlaceOrderResult = Omit<ResellerApi.PlaceOrderResponse, "success"> & { readonly replayed: boolean }

  /** A page of GET /orders. */
  export type OrdersPage = Omit<ResellerApi.OrdersPage, "success">

  /** The service. */
  export interface Service {
    /** The derived client itself, behind the same policy, for full response bodies. */
    readonly api: Api
    /** The three wallet balances, in pesewas. */
    readonly balance: () => Effect.Effect<typeof ResellerApi.BalanceResponse.Type["balance"], BalanceError>
    /** The active networks. */
    readonly networks: () => Effect.Effect<typeof ResellerApi.NetworksResponse.Type["networks"], NetworksError>
    /** The bundles of a network, inactive ones included, priced for this account. */
    readonly bundles: (
      networkId: number
    ) => Effect.Effect<typeof ResellerApi.BundlesResponse.Type["bundles"], BundlesError>
    /** Buys a bundle. Retried after a transient failure only when the order has a reference. */
    readonly placeOrder: (order: PlaceOrderInput) => Effect.Effect<PlaceOrderResult, PlaceOrderError>
    /** One order of this account. */
    readonly getOrder: (
      orderNumber: string
    ) => Effect.Effect<typeof ResellerApi.OrderResponse.Type["order"], GetOrderError>
    /** One page of this account's orders, newest first. */
    readonly listOrders: (params?: ListOrdersInput) => Effect.Effect<OrdersPage, ListOrdersError>
    /** Every order matching `params`, page after page (50 a page unless `per_page` says otherwise). */
    readonly allOrders: (
      params?: Omit<ListOrdersInput, "page">
    ) => Stream.Stream<ResellerApi.OrdersPage["orders"][number], ListOrdersError>
  }
}

/** Turns a failed check of an input into the contract's 422 error, with the same per-field shape. */
const validationError = (error: ParseResult.ParseError, prefix?: string): ValidationError => {
  const errors: Record<string, Array<string>> = {}
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.map(String).join(".")
    const field = prefix ?? (path === "" ? "body" : path)
    const message = `${field} ${issue._tag === "Missing" ? "is required" : issue.message}`
    ;(errors[field] ??= []).push(message)
  }
  const all = Object.values(errors).flat()
  return new ValidationError({ message: all[0] ?? "The request is invalid", errors })
}

const check = <A, I>(schema: Schema.Schema<A, I>, input: unknown, field?: string) =>
  Effect.mapError(
    Schema.decodeUnknown(Schema.typeSchema(schema), { errors: "all", onExcessProperty: "ignore" })(input),
    (error) => validationError(error, field)
  )

/** Builds the service on the `HttpClient` in context (`layer` uses `fetch`). */
const make = (
  options: ClientOptions
): Effect.Effect<BundlesClient.Service, ClientOptionsError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const resolved = yield* resolveOptions(options)
    const base = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.setHeaders({
        "x-api-key": Redacted.value(resolved.apiKey),
        accept: "application/json",
        "user-agent": resolved.userAgent
      }))
    )
    const transport = (idempotent: typeof safeMethods) =>
      withPolicy({ policy: resolved.retry, timeoutMillis: resolved.timeoutMillis, idempotent })(base)
    const api = yield* deriveApi(transport(safeMethods), resolved.origin)
    // The same endpoint on a client that may retry POST: used only when the order has a reference.
    const placeWithReference = yield* HttpApiClient.endpoint(ResellerApi.ResellerApi, {
      group: "orders",
      endpoint: "place",
      httpClient: transport(always),
      baseUrl: resolved.origin
    })

    const listOrders = (params: BundlesClient.ListOrdersInput = {}) =>
      check(ListOrdersParams, params).pipe(
        Effect.flatMap((urlParams) => api.orders.list({ urlParams })),
        Effect.map(({ orders, pagination }) => ({ orders, pagination })),
        Effect.withSpan("BundlesClient.listOrders")
      )

    return {
      api,
      balance: () =>
        api.wallet.balance().pipe(Effect.map((body) => body.balance), Effect.withSpan("BundlesClient.balance")),
      networks: () =>
        api.catalog.networks().pipe(Effect.map((body) => body.networks), Effect.withSpan("BundlesClient.networks")),
      bundles: (networkId) =>
        check(NetworkId, networkId, "network_id").pipe(
          Effect.flatMap((network_id) => api.catalog.bundles({ path: { network_id } })),
          Effect.map((body) => body.bundles),
          Effect.withSpan("BundlesClient.bundles")
        ),
      placeOrder: (order) =>
        Effect.gen(function*() {
          const reference = order.reference ?? (resolved.autoReference ? newReference() : undefined)
          const payload = yield* check(PlaceOrderPayload, reference === undefined ? order : { ...order, reference })
          const place = payload.reference === undefined ? api.orders.place : placeWithReference
          const [body, response] = yield* place({ payload, withResponse: true })
          return {
            message: body.message,
            order: body.order,
            wallet_balance: body.wallet_balance,
            replayed: response.headers[ResellerApi.IDEMPOTENT_REPLAYED_HEADER] === "true"
          }
        }).pipe(Effect.withSpan("BundlesClient.placeOrder")),
      getOrder: (orderNumber) =>
        check(Schema.NonEmptyString, orderNumber, "order_number").pipe(
          // The derived client puts path values in as they are; encoding keeps any value one path segment.
          Effect.flatMap((number) => api.orders.get({ path: { order_number: encodeURIComponent(number) } })),
          Effect.map((body) => body.order),
          Effect.withSpan("BundlesClient.getOrder")
        ),
      listOrders,
      allOrders: (params = {}) =>
        Stream.suspend(() => {
          // Orders placed while paging push older ones onto later pages; never hand one out twice.
          const seen = new Set<string>()
          return Stream.paginateChunkEffect(1, (page) =>
            Effect.map(listOrders({ per_page: MAX_PER_PAGE, ...params, page }), ({ orders, pagination }) =>
              [
                Chunk.fromIterable(orders),
                orders.length > 0 && pagination.current_page < pagination.last_page
                  ? Option.some(page + 1)
                  : Option.none()
              ] as const)).pipe(
              Stream.filter((order) => {
                if (seen.has(order.order_number)) return false
                seen.add(order.order_number)
                return true
              })
            )
        })
    } satisfies BundlesClient.Service
  }).pipe(
    (effect) =>
      options.fetch === undefined ? effect : Effect.provideService(effect, FetchHttpClient.Fetch, options.fetch)
  )

/** The typed client of the reseller API, for Effect programs. */
export class BundlesClient extends Context.Tag("@databundle/client/BundlesClient")<
  BundlesClient,
  BundlesClient.Service
>() {
  /** Builds the service on the `HttpClient` in context. */
  static readonly make = make

  /** The service over `fetch`. */
  static readonly layer = (options: ClientOptions): Layer.Layer<BundlesClient, ClientOptionsError> =>
    Layer.effect(BundlesClient, make(options)).pipe(Layer.provide(FetchHttpClient.layer))

  /** The service over `fetch`, with the key and base URL from `BUNDLES_API_KEY` and `BUNDLES_BASE_URL`. */
  static readonly layerConfig = (
    options: Omit<ClientOptions, "apiKey" | "baseUrl"> = {}
  ): Layer.Layer<BundlesClient, ClientOptionsError | ConfigError.ConfigError> =>
    Layer.unwrapEffect(
      Effect.map(
        Config.all({ apiKey: Config.redacted("BUNDLES_API_KEY"), baseUrl: Config.string("BUNDLES_BASE_URL") }),
        (config) => BundlesClient.layer({ ...options, ...config })
      )
    )
}
