/**
 * The Promise face: `createClient` for apps that do not use Effect. Each method runs the
 * Effect face's method and maps its result to camelCase and its failure to an error class of
 * `Errors.ts`; there is no second HTTP implementation.
 */
import { REQUEST_ID_HEADER } from "@databundle/contract/ApiError"
import { ListEventsParams } from "@databundle/contract/Event"
import { ListTransactionsParams } from "@databundle/contract/Ledger"
import { ListOrdersParams, PlaceOrderPayload } from "@databundle/contract/Order"
import type { WebhookEvent, WebhookEventType } from "@databundle/contract/Webhook"
import { ListDeliveriesParams } from "@databundle/contract/WebhookDelivery"
import { FetchHttpClient, type HttpClientError } from "@effect/platform"
import { Cause, Effect, Either, Exit, type ParseResult } from "effect"
import { BundlesClient } from "./BundlesClient.js"
import { type Camelize, camelize, camelKey, fromAliases, type WithAliases } from "./Casing.js"
import * as Errors from "./Errors.js"
import type { ClientOptions } from "./Options.js"
import { MAX_PER_PAGE } from "./OrderTerms.js"
import { type Attempt, currentCall } from "./Retry.js"

/** Options of one call. */
export interface CallOptions {
  /** Cancels the call, including any wait between attempts; it then rejects with `AbortError`. */
  readonly signal?: AbortSignal | undefined
  /** Milliseconds one attempt may take, overriding the client's `timeout`. */
  readonly timeout?: number | undefined
}

/** The three wallet balances, in pesewas. */
export type Balance = Camelize<Effect.Effect.Success<ReturnType<BundlesClient.Service["balance"]>>>
/** A network. */
export type Network = Camelize<Effect.Effect.Success<ReturnType<BundlesClient.Service["networks"]>>[number]>
/** A bundle, `price` in pesewas. */
export type Bundle = Camelize<Effect.Effect.Success<ReturnType<BundlesClient.Service["bundles"]>>[number]>
/** What `orders.create` returns: the order, the main balance after it, and whether it was a replay. */
export type PlaceOrderResult = Camelize<BundlesClient.PlaceOrderResult>
/** What `phoneNumbers.lookup` returns: the number, its prefix's network or `null`, and `basis: "prefix"`. */
export type PhoneNumberNetwork = Camelize<BundlesClient.PhoneNumberNetwork>
/** An order as `orders.get` shows it. */
export type OrderStatus = Camelize<Effect.Effect.Success<ReturnType<BundlesClient.Service["getOrder"]>>>
/** An order as lists show it. */
export type Order = Camelize<BundlesClient.OrdersPage["orders"][number]>
/** A page of orders and where it sits in the whole list. */
export type OrdersPage = Camelize<BundlesClient.OrdersPage>
/** The input of `orders.create`: `bundleId` (or `bundle_id`), `phoneNumber` (or `phone_number`), `reference?`. */
export type CreateOrderInput = WithAliases<BundlesClient.PlaceOrderInput>
/** The filters of `orders.list`: `page`, `perPage`, `status`, `reference`, `phoneNumber`, `from`, `to`. */
export type ListOrdersInput = WithAliases<BundlesClient.ListOrdersInput>

/** The filters of `wallet.transactions`: `page`, `perPage`, `wallet`, `reason`, `from`, `to`. */
export type TransactionsInput = WithAliases<BundlesClient.TransactionsInput>
/** A page of the account's ledger. */
export type TransactionsPage = Camelize<BundlesClient.TransactionsPage>
/** The filters of `events.list`: `since`, `type`, `page`, `perPage`. */
export type EventsInput = WithAliases<Omit<BundlesClient.EventsInput, "since"> & { readonly since?: string }>
/**
 * A page of the account's events and the cursor after it. The events are as a webhook delivers
 * them (snake_case, as `verifyWebhook` returns them), so one handler serves both.
 */
export interface EventsPage {
  readonly events: Array<WebhookEvent>
  readonly pagination: Camelize<BundlesClient.EventsPage["pagination"]>
  readonly cursor: string
}
/** The filters of `webhooks.deliveries`: `state`, `type`, `page`, `perPage`. */
export type DeliveriesInput = WithAliases<BundlesClient.DeliveriesInput>
/** A page of deliveries. */
export type DeliveriesPage = Camelize<BundlesClient.DeliveriesPage>
/** A delivery to the webhook URL. */
export type Delivery = Camelize<BundlesClient.Delivery>
/** The webhook URL and signing secret. */
export type WebhookSettings = Camelize<BundlesClient.WebhookSettings>

/** The client of the Promise face. */
export interface Client {
  /** The three wallet balances, in pesewas. */
  readonly balance: (options?: CallOptions) => Promise<Balance>
  /** The active networks. */
  readonly networks: (options?: CallOptions) => Promise<Array<Network>>
  /** The bundles of a network, inactive ones included (`isActive: false`), priced for this account. */
  readonly bundles: (networkId: number, options?: CallOptions) => Promise<Array<Bundle>>
  /** Phone numbers (an extension of the API). */
  readonly phoneNumbers: {
    /** The network a number's prefix belongs to (`network: null` when none); ported numbers keep their old prefix. */
    readonly lookup: (phoneNumber: string, options?: CallOptions) => Promise<PhoneNumberNetwork>
  }
  /** Orders of this account. */
  readonly orders: {
    /** Buys a bundle; with `autoReference` on, a reference is generated when none is given so a retry never buys twice. */
    readonly create: (order: CreateOrderInput, options?: CallOptions) => Promise<PlaceOrderResult>
    /** One order by its number. */
    readonly get: (orderNumber: string, options?: CallOptions) => Promise<OrderStatus>
    /** One page of orders, newest first. */
    readonly list: (params?: ListOrdersInput, options?: CallOptions) => Promise<OrdersPage>
    /** Every page of orders matching `params`, in turn, from `page` (default 1). */
    readonly pages: (params?: ListOrdersInput, options?: CallOptions) => AsyncIterableIterator<OrdersPage>
    /** Every order matching `params`, newest first, fetched page by page (50 a page unless `perPage` is given). */
    readonly all: (params?: Omit<ListOrdersInput, "page">, options?: CallOptions) => AsyncIterableIterator<Order>
  }
  /** The account's ledger (an extension of the API). */
  readonly wallet: {
    /** One page of wallet movements, newest first. */
    readonly transactions: (params?: TransactionsInput, options?: CallOptions) => Promise<TransactionsPage>
  }
  /** The account's events (an extension of the API). */
  readonly events: {
    /** One page of events, newest first, and the cursor to pass as `since` next time. */
    readonly list: (params?: EventsInput, options?: CallOptions) => Promise<EventsPage>
    /** Every new event, oldest first, as it happens (from `since`, else from now); stop with the signal. */
    readonly follow: (
      options?: { readonly since?: string; readonly type?: WebhookEventType; readonly intervalMs?: number },
      call?: CallOptions
    ) => AsyncIterableIterator<WebhookEvent>
    /** Records a test event (marked `test: true`) and queues it to the webhook URL, if any. */
    readonly trigger: (
      type: WebhookEventType,
      options?: CallOptions
    ) => Promise<{ readonly event: WebhookEvent; readonly delivery: Delivery | null }>
  }
  /** The account's webhook (an extension of the API). */
  readonly webhooks: {
    /** The URL and the signing secret. */
    readonly settings: (options?: CallOptions) => Promise<WebhookSettings>
    /** One page of deliveries, newest first. */
    readonly deliveries: (params?: DeliveriesInput, options?: CallOptions) => Promise<DeliveriesPage>
    /** Delivers an event again now. */
    readonly resend: (id: string, options?: CallOptions) => Promise<Delivery>
  }
}

const placeFields = Object.keys(PlaceOrderPayload.fields)
const listFields = Object.keys(ListOrdersParams.fields)
const transactionFields = Object.keys(ListTransactionsParams.fields)
const eventFields = Object.keys(ListEventsParams.fields)
const deliveryFields = Object.keys(ListDeliveriesParams.fields)

const camelErrors = (errors: Readonly<Record<string, ReadonlyArray<string>>>) => {
  const out: Record<string, ReadonlyArray<string>> = {}
  for (const [field, messages] of Object.entries(errors)) out[field.split(".").map(camelKey).join(".")] = messages
  return out
}

type FaceError =
  | BundlesClient.BalanceError
  | BundlesClient.NetworksError
  | BundlesClient.BundlesError
  | BundlesClient.PlaceOrderError
  | BundlesClient.GetOrderError
  | BundlesClient.ListOrdersError
  | BundlesClient.TransactionsError
  | BundlesClient.EventsError
  | BundlesClient.TriggerEventError
  | BundlesClient.WebhookSettingsError
  | BundlesClient.DeliveriesError
  | BundlesClient.ResendDeliveryError

/** Waits `ms`, or less when the signal aborts. */
const pause = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener("abort", () => {
      clearTimeout(timer)
      resolve()
    }, { once: true })
  })

const isTimeout = (error: HttpClientError.RequestError) => Cause.isTimeoutException(error.cause)

/**
 * An error's one code, the body's stable snake_case `code` (`order_not_found`), so an app
 * sees the same code the server sends and the docs list; an error without one (the
 * platform's decode error) gets its name in that form.
 */
const codeOf = (error: { readonly _tag: string }): string =>
  "code" in error && typeof error.code === "string"
    ? error.code
    : error._tag === "HttpApiDecodeError"
    ? "bad_request"
    : error._tag.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()

/** Maps an error of the Effect face to its class here. `requestId` is the last response's. */
export const fromEffectError = (error: FaceError, requestId: string | undefined): Errors.BundlesError => {
  const base = (status: number) => ({ message: error.message, status, code: codeOf(error), requestId, cause: error })
  switch (error._tag) {
    case "InsufficientBalance":
      return new Errors.InsufficientBalanceError({ ...base(400), balance: error.balance, required: error.required })
    case "BundleUnavailable":
      return new Errors.BundleUnavailableError(base(400))
    case "BadRequest":
    case "HttpApiDecodeError": // the platform's own 400, which this server turns into a 422
      return new Errors.BadRequestError(base(400))
    case "Unauthorized":
      return new Errors.UnauthorizedError({ ...base(401), reason: error.reason })
    case "NetworkNotFound":
      return new Errors.NetworkNotFoundError(base(404))
    case "OrderNotFound":
      return new Errors.OrderNotFoundError(base(404))
    case "DeliveryNotFound":
      return new Errors.DeliveryNotFoundError(base(404))
    case "NotFound":
      return new Errors.NotFoundError(base(404))
    case "Conflict":
      return new Errors.ConflictError(base(409))
    case "MethodNotAllowed":
      return new Errors.ApiError(base(405))
    case "PayloadTooLarge":
      return new Errors.ApiError(base(413))
    case "RequestTimeout":
      return new Errors.ApiError(base(408))
    case "ValidationError":
      return new Errors.ValidationError({ ...base(422), errors: camelErrors(error.errors) })
    case "RateLimited":
      return new Errors.RateLimitedError({ ...base(429), retryAfter: error.retry_after })
    case "ServerError":
      return new Errors.ServerError({ ...base(500), requestId: error.request_id })
    case "RequestError":
      if (error.reason !== "Transport") return new Errors.BundlesError(error.message, { cause: error })
      return isTimeout(error)
        ? new Errors.TimeoutError(error.description ?? "timed out", { cause: error })
        : new Errors.NetworkError(`network failure: ${describe(error.cause)}`, { cause: error })
    case "ResponseError": {
      const status = error.response.status
      const id = error.response.headers[REQUEST_ID_HEADER] ?? requestId
      return status >= 500
        ? new Errors.ServerError({
          message: `server error ${status}`,
          status,
          code: "server_error",
          requestId: id,
          cause: error
        })
        : new Errors.UnexpectedResponseError(`unexpected response ${status}`, status, error)
    }
    case "ParseError":
      return new Errors.UnexpectedResponseError(
        `the response does not match the API contract: ${(error as ParseResult.ParseError).message}`,
        undefined,
        error
      )
    default: {
      const unknown: never = error
      return new Errors.BundlesError(String(unknown))
    }
  }
}

const describe = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause
    return inner instanceof Error ? `${cause.message} (${inner.message})` : cause.message
  }
  return String(cause)
}

/**
 * A client of the reseller API for Promise code. Throws `ConfigurationError` at once for
 * unusable options, above all a base URL that is not HTTPS (loopback hosts excepted).
 */
export const createClient = (options: ClientOptions): Client => {
  const made = Effect.runSync(Effect.either(BundlesClient.make(options).pipe(Effect.provide(FetchHttpClient.layer))))
  if (Either.isLeft(made)) throw new Errors.ConfigurationError(made.left.message)
  const client = made.right

  const run = async <A, E extends FaceError>(effect: Effect.Effect<A, E>, call: CallOptions = {}): Promise<A> => {
    if (call.timeout !== undefined && !(Number.isInteger(call.timeout) && call.timeout > 0)) {
      throw new Errors.ConfigurationError("timeout must be a whole number of milliseconds above 0")
    }
    let last: Attempt | undefined
    const exit = await Effect.runPromiseExit(
      Effect.locally(effect, currentCall, {
        timeoutMillis: call.timeout,
        observe: (attempt) => (last = attempt)
      }),
      call.signal === undefined ? undefined : { signal: call.signal }
    )
    if (Exit.isSuccess(exit)) return exit.value
    if (Cause.isInterruptedOnly(exit.cause) || call.signal?.aborted === true) {
      throw new Errors.AbortError("the call was aborted", { cause: call.signal?.reason })
    }
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "Some") throw fromEffectError(failure.value, last?.requestId)
    // A defect is a programming error (an ambiguous input, a missing Web Crypto): throw it as it is.
    throw Cause.squash(exit.cause)
  }

  const list = (params: ListOrdersInput | undefined, call?: CallOptions) =>
    run(Effect.suspend(() => client.listOrders(fromAliases(listFields, params))), call).then(camelize)

  async function* pages(params?: ListOrdersInput, call?: CallOptions): AsyncIterableIterator<OrdersPage> {
    const first = fromAliases(listFields, params) as { page?: number }
    for (let page = first.page ?? 1;; page++) {
      const result = await list({ ...params, page } as ListOrdersInput, call)
      yield result
      const { currentPage, lastPage } = result.pagination
      if (result.orders.length === 0 || currentPage >= lastPage) return
    }
  }

  async function* all(params?: Omit<ListOrdersInput, "page">, call?: CallOptions): AsyncIterableIterator<Order> {
    // Orders placed while paging push older ones onto later pages; never hand one out twice.
    const seen = new Set<string>()
    const perPage = fromAliases(listFields, params).per_page === undefined ? { perPage: MAX_PER_PAGE } : {}
    for await (const page of pages({ ...perPage, ...params } as ListOrdersInput, call)) {
      for (const order of page.orders) {
        if (seen.has(order.orderNumber)) continue
        seen.add(order.orderNumber)
        yield order
      }
    }
  }

  async function* follow(
    options: { readonly since?: string; readonly type?: WebhookEventType; readonly intervalMs?: number } = {},
    call: CallOptions = {}
  ): AsyncIterableIterator<WebhookEvent> {
    const type = options.type === undefined ? {} : { type: options.type }
    const page = (since: string | undefined, perPage: number) =>
      run(Effect.suspend(() => client.events({ ...type, since: since as any, per_page: perPage })), call)
    // From now unless told otherwise: the cursor of the newest event.
    let since = options.since ?? (await page(undefined, 1)).cursor
    const interval = options.intervalMs ?? 2000
    while (call.signal?.aborted !== true) {
      const next = await page(since, 100)
      for (const event of [...next.events].reverse()) yield event
      since = next.cursor
      // Read on at once while full pages come back; otherwise wait before asking again.
      if (next.pagination.last_page <= 1) await pause(interval, call.signal)
    }
  }

  return {
    balance: (call) => run(client.balance(), call).then(camelize),
    networks: (call) => run(client.networks(), call).then(camelize),
    bundles: (networkId, call) => run(client.bundles(networkId), call).then(camelize),
    phoneNumbers: {
      lookup: (phoneNumber, call) => run(client.phoneNumber(phoneNumber), call).then(camelize)
    },
    orders: {
      create: (order, call) =>
        run(
          Effect.suspend(() => client.placeOrder(fromAliases(placeFields, order) as BundlesClient.PlaceOrderInput)),
          call
        ).then(camelize),
      get: (orderNumber, call) => run(client.getOrder(orderNumber), call).then(camelize),
      list,
      pages,
      all
    },
    wallet: {
      transactions: (params, call) =>
        run(Effect.suspend(() => client.transactions(fromAliases(transactionFields, params))), call).then(camelize)
    },
    events: {
      list: (params, call) =>
        run(Effect.suspend(() => client.events(fromAliases(eventFields, params))), call).then((page) => ({
          events: [...page.events],
          pagination: camelize(page.pagination),
          cursor: page.cursor
        })),
      follow,
      trigger: (type, call) =>
        run(client.triggerEvent(type), call).then(({ delivery, event }) => ({
          event,
          delivery: delivery === null ? null : camelize(delivery)
        }))
    },
    webhooks: {
      settings: (call) => run(client.webhookSettings(), call).then(camelize),
      deliveries: (params, call) =>
        run(Effect.suspend(() => client.deliveries(fromAliases(deliveryFields, params))), call).then(camelize),
      resend: (id, call) => run(client.resendDelivery(id), call).then(camelize)
    }
  }
}
