/**
 * The Effect face: `BundlesClient`, a service whose methods return Effects failing with the
 * contract's typed errors. Every request is made by the client `HttpApiClient` derives from
 * `ResellerApi`, over `fetch`, behind the retry policy of `Retry.ts`.
 */
import type { ValidationError } from "@databundle/contract/ApiError"
import { API_KEY_HEADER } from "@databundle/contract/ApiKey"
import { EventCursor, ListEventsParams } from "@databundle/contract/Event"
import { IDEMPOTENCY_KEY_HEADER, IdempotencyKey, IDEMPOTENT_REPLAYED_HEADER } from "@databundle/contract/Idempotency"
import { ListTransactionsParams } from "@databundle/contract/Ledger"
import { NetworkId } from "@databundle/contract/Network"
import { ListOrdersParams, PlaceOrderPayload } from "@databundle/contract/Order"
import { FEED } from "@databundle/contract/Page"
import { type OrderWarning, PhoneNumber } from "@databundle/contract/Phone"
import * as ResellerApi from "@databundle/contract/ResellerApi"
import * as Validation from "@databundle/contract/Validation"
import { TransferPayload } from "@databundle/contract/Wallet"
import { EventId, WebhookEventType } from "@databundle/contract/Webhook"
import { ListDeliveriesParams } from "@databundle/contract/WebhookDelivery"
import { FetchHttpClient, type HttpApi, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import {
  Chunk,
  Config,
  type ConfigError,
  Context,
  Duration,
  Effect,
  Layer,
  Option,
  ParseResult,
  Redacted,
  Schema,
  Stream
} from "effect"
import { type ClientOptions, ClientOptionsError, resolveOptions } from "./Options.js"
import { MAX_PER_PAGE } from "./OrderTerms.js"
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
  /** Errors of `phoneNumber`. */
  export type PhoneNumberLookupError = ErrorOf<Api["phoneNumbers"]["lookup"]>
  /** Errors of `getOrder`. */
  export type GetOrderError = ErrorOf<Api["orders"]["get"]>
  /** Errors of `listOrders` and `allOrders`. */
  export type ListOrdersError = ErrorOf<Api["orders"]["list"]>
  /** Errors of `transactions`. */
  export type TransactionsError = ErrorOf<Api["wallet"]["transactions"]>
  /** Errors of `transfer`. */
  export type TransferError = ErrorOf<Api["wallet"]["transfer"]>

  /** What `transfer` moves: pesewas from the referral or agent wallet to main. */
  export interface TransferInput {
    readonly from: "referral" | "agent"
    readonly amount: bigint
    /** Sent as `Idempotency-Key`; one is made per call when left out, so a retry never moves twice. */
    readonly idempotencyKey?: string | undefined
  }

  /** The answer of `transfer`: the three balances after it, and whether it replayed an earlier one. */
  export interface TransferResult {
    readonly message: string
    readonly balance: typeof ResellerApi.BalanceResponse.Type["balance"]
    readonly replayed: boolean
  }
  /** Errors of `events` and `followEvents`. */
  export type EventsError = ErrorOf<Api["events"]["list"]>
  /** Errors of `triggerEvent`. */
  export type TriggerEventError = ErrorOf<Api["events"]["trigger"]>
  /** Errors of `webhookSettings`. */
  export type WebhookSettingsError = ErrorOf<Api["webhooks"]["settings"]>
  /** Errors of `deliveries`. */
  export type DeliveriesError = ErrorOf<Api["webhooks"]["deliveries"]>
  /** Errors of `resendDelivery`. */
  export type ResendDeliveryError = ErrorOf<Api["webhooks"]["resend"]>
  /** Any error of a call: the contract's typed errors, and no answer or one off the contract. */
  export type Error =
    | BalanceError
    | NetworksError
    | BundlesError
    | PlaceOrderError
    | GetOrderError
    | PhoneNumberLookupError
    | ListOrdersError
    | TransactionsError
    | EventsError
    | TriggerEventError
    | WebhookSettingsError
    | DeliveriesError
    | ResendDeliveryError

  /** The query of GET /wallet/transactions. */
  export type TransactionsInput = typeof ListTransactionsParams.Type
  /** A page of the account's ledger. */
  export type TransactionsPage = Omit<ResellerApi.TransactionsPage, "success">
  /** The query of GET /events. */
  export type EventsInput = typeof ListEventsParams.Type
  /** A page of the account's events and the cursor after it. */
  export type EventsPage = Omit<ResellerApi.EventsPage, "success">
  /** An event of the feed. */
  export type Event = ResellerApi.EventsPage["events"][number]
  /** The query of GET /webhooks/deliveries. */
  export type DeliveriesInput = typeof ListDeliveriesParams.Type
  /** A page of deliveries. */
  export type DeliveriesPage = Omit<ResellerApi.DeliveriesPage, "success">
  /** A delivery. */
  export type Delivery = ResellerApi.DeliveriesPage["deliveries"][number]
  /** What `triggerEvent` returns: the test event, and its delivery when the account has a webhook URL. */
  export type Triggered = Omit<typeof ResellerApi.EventTriggered.Type, "success">
  /** The webhook URL and signing secret. */
  export type WebhookSettings = typeof ResellerApi.WebhookSettingsResponse.Type["webhook"]

  /** What `followEvents` takes. */
  export interface FollowOptions {
    /** Start after this cursor; by default after the newest event, so only new events come. */
    readonly since?: string | undefined
    /** Only events of this type. */
    readonly type?: WebhookEventType | undefined
    /** The wait between polls when nothing is left to read (default 2 seconds). */
    readonly interval?: Duration.DurationInput | undefined
  }

  /** The body of POST /orders as the contract defines it; `reference` is filled in when `autoReference` is on. */
  export type PlaceOrderInput = typeof PlaceOrderPayload.Encoded

  /** The query of GET /orders as the contract defines it. */
  export type ListOrdersInput = typeof ListOrdersParams.Type

  /** A placed order, and whether the server replayed it (`Idempotent-Replayed: true`) rather than buying. */
  export type PlaceOrderResult = Omit<ResellerApi.PlaceOrderResponse, "success" | "warnings"> & {
    readonly replayed: boolean
    /** What the number's prefix says against the bundle's network; empty when nothing (the order is placed all the same). */
    readonly warnings: ReadonlyArray<OrderWarning>
  }

  /** What the server tells of a number's network (GET /phone-numbers/{phone_number}). */
  export type PhoneNumberNetwork = Omit<typeof ResellerApi.PhoneNumberResponse.Type, "success">

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
    /** The network a number's prefix belongs to, `null` when none (an extension of the API). */
    readonly phoneNumber: (phoneNumber: string) => Effect.Effect<PhoneNumberNetwork, PhoneNumberLookupError>
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
    /**
     * Moves earnings from the referral or agent wallet to main, under an `Idempotency-Key` (made
     * here when not given), so it is retried after a transient failure and never moves twice.
     */
    readonly transfer: (input: TransferInput) => Effect.Effect<TransferResult, TransferError>
    /** One page of the account's ledger, newest first (an extension of the API). */
    readonly transactions: (params?: TransactionsInput) => Effect.Effect<TransactionsPage, TransactionsError>
    /** One page of the account's events, newest first, and the cursor after it (an extension). */
    readonly events: (params?: EventsInput) => Effect.Effect<EventsPage, EventsError>
    /**
     * The account's events as they happen, oldest first, forever: polls GET /events with the
     * cursor of the last page, so each event comes once, in order (an extension).
     */
    readonly followEvents: (options?: FollowOptions) => Stream.Stream<Event, EventsError>
    /** Records a test event of a type (marked `test: true`) and queues it to the webhook URL (an extension). */
    readonly triggerEvent: (type: WebhookEventType) => Effect.Effect<Triggered, TriggerEventError>
    /** The account's webhook URL and signing secret (an extension). */
    readonly webhookSettings: () => Effect.Effect<WebhookSettings, WebhookSettingsError>
    /** One page of deliveries to the webhook URL, newest first (an extension). */
    readonly deliveries: (params?: DeliveriesInput) => Effect.Effect<DeliveriesPage, DeliveriesError>
    /** Delivers an event again now (an extension). */
    readonly resendDelivery: (id: string) => Effect.Effect<Delivery, ResendDeliveryError>
  }
}

/**
 * Turns a failed check of an input into the contract's 422 error, worded as the server words
 * its own; `field` names the input when it is one value rather than an object of fields.
 */
const validationError = (error: ParseResult.ParseError, field?: string): ValidationError => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  return Validation.validationError(Validation.fieldErrors(
    field === undefined ? issues : issues.map((issue) => ({ ...issue, path: [field, ...issue.path] }))
  ))
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
        [API_KEY_HEADER]: Redacted.value(resolved.apiKey),
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

    // A transfer carries a key, so it may be retried as an order with a reference is.
    const transferWithKey = yield* HttpApiClient.endpoint(ResellerApi.ResellerApi, {
      group: "wallet",
      endpoint: "transfer",
      httpClient: transport(always),
      baseUrl: resolved.origin
    })

    const listOrders = (params: BundlesClient.ListOrdersInput = {}) =>
      check(ListOrdersParams, params).pipe(
        Effect.flatMap((urlParams) => api.orders.list({ urlParams })),
        Effect.map(({ orders, pagination }) => ({ orders, pagination })),
        Effect.withSpan("BundlesClient.listOrders")
      )

    const events = (params: BundlesClient.EventsInput = {}) =>
      check(ListEventsParams, params).pipe(
        Effect.flatMap((urlParams) => api.events.list({ urlParams })),
        Effect.map(({ cursor, events, pagination }) => ({ events, pagination, cursor })),
        Effect.withSpan("BundlesClient.events")
      )

    const followEvents = (options: BundlesClient.FollowOptions = {}) =>
      Stream.unwrap(Effect.gen(function*() {
        const type = options.type === undefined ? {} : { type: options.type }
        const start = options.since === undefined
          ? (yield* events({ ...type, per_page: 1 })).cursor
          : yield* check(EventCursor, options.since, "since")
        const interval = options.interval ?? Duration.seconds(2)
        return Stream.paginateChunkEffect(start, (since) =>
          Effect.gen(function*() {
            const page = yield* events({ ...type, since, per_page: FEED.max })
            // Read on at once while a full page came back; otherwise wait before asking again.
            if (page.pagination.last_page <= 1) yield* Effect.sleep(interval)
            // Oldest first, as they happened.
            return [Chunk.fromIterable([...page.events].reverse()), Option.some(page.cursor)] as const
          }))
      })).pipe(Stream.withSpan("BundlesClient.followEvents"))

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
            replayed: response.headers[IDEMPOTENT_REPLAYED_HEADER] === "true",
            warnings: body.warnings ?? []
          }
        }).pipe(Effect.withSpan("BundlesClient.placeOrder")),
      phoneNumber: (phoneNumber) =>
        check(PhoneNumber, phoneNumber, "phone_number").pipe(
          Effect.flatMap((phone_number) => api.phoneNumbers.lookup({ path: { phone_number } })),
          Effect.map(({ basis, network, phone_number }) => ({ phone_number, network, basis })),
          Effect.withSpan("BundlesClient.phoneNumber")
        ),
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
        }),
      transfer: (input) =>
        Effect.gen(function*() {
          const payload = yield* check(TransferPayload, { from: input.from, amount: input.amount })
          const key = yield* check(IdempotencyKey, input.idempotencyKey ?? newReference(), "idempotency_key")
          const [body, response] = yield* transferWithKey({
            payload,
            headers: { [IDEMPOTENCY_KEY_HEADER]: key },
            withResponse: true
          })
          return {
            message: body.message,
            balance: body.balance,
            replayed: response.headers[IDEMPOTENT_REPLAYED_HEADER] === "true"
          }
        }).pipe(Effect.withSpan("BundlesClient.transfer")),
      transactions: (params = {}) =>
        check(ListTransactionsParams, params).pipe(
          Effect.flatMap((urlParams) =>
            api.wallet.transactions({ urlParams })
          ),
          Effect.map(({ entries, pagination }) => ({ entries, pagination })),
          Effect.withSpan("BundlesClient.transactions")
        ),
      events,
      followEvents,
      triggerEvent: (type) =>
        check(WebhookEventType, type, "type").pipe(
          Effect.flatMap((type) => api.events.trigger({ payload: { type } })),
          Effect.map(({ delivery, event }) => ({ event, delivery })),
          Effect.withSpan("BundlesClient.triggerEvent")
        ),
      webhookSettings: () =>
        api.webhooks.settings().pipe(
          Effect.map((body) => body.webhook),
          Effect.withSpan("BundlesClient.webhookSettings")
        ),
      deliveries: (params = {}) =>
        check(ListDeliveriesParams, params).pipe(
          Effect.flatMap((urlParams) => api.webhooks.deliveries({ urlParams })),
          Effect.map(({ deliveries, pagination }) => ({ deliveries, pagination })),
          Effect.withSpan("BundlesClient.deliveries")
        ),
      resendDelivery: (id) =>
        check(EventId, id, "delivery_id").pipe(
          Effect.flatMap((delivery_id) => api.webhooks.resend({ path: { delivery_id } })),
          Effect.map((body) => body.delivery),
          Effect.withSpan("BundlesClient.resendDelivery")
        )
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
