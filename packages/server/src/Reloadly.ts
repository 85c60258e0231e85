/**
 * Reloadly's top-up API as a seller (`Seller.ts`): Ghana's operators and their fixed-amount
 * data bundles, top-ups under our order number as `customIdentifier`, a transaction's status,
 * and the account's balance, behind an OAuth client-credentials token that is cached and
 * renewed before it expires (and once more when an answer says it has expired).
 *
 * A top-up is looked up by its `customIdentifier` before one is sent, so a repeat after a lost
 * answer finds the top-up already made instead of buying again. Every failure is read into the
 * provider's terms (`Seller.Failure`): a failure before the top-up request left (the token, a
 * refused connection, a 429) proves it was not sent; a refusal Reloadly names (out of balance,
 * a number or amount the operator does not take) proves it was not made; anything else (a 5xx,
 * a timeout, an error code we do not know) may have made it, so the order is only looked up there.
 */
import { type Bundle, Money, type Network, type Order, Phone } from "@databundle/contract"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, Option, Redacted, Schema } from "effect"
import { fail, readJson as readJsonOf, slugOf, waitOf, within } from "./AggregatorHttp.js"
import type { Seller, SellerOrder } from "./Seller.js"
import type * as UpstreamConfig from "./UpstreamConfig.js"

/** The media type Reloadly's top-up API answers with. */
const ACCEPT = "application/com.reloadly.topups-v1+json"

/** Reloadly's error codes that prove a top-up was not made (Reloadly's error reference). */
const REFUSALS = new Set([
  "INSUFFICIENT_BALANCE",
  "INVALID_RECIPIENT_PHONE",
  "COULD_NOT_AUTO_DETECT_OPERATOR",
  "OPERATOR_NOT_IN_SERVICE",
  "OPERATOR_UNAVAILABLE",
  "INVALID_AMOUNT_FOR_OPERATOR",
  "COUNTRY_NOT_SUPPORTED",
  "PHONE_RECENTLY_RECHARGED",
  "TRANSACTION_CANNOT_BE_PROCESSED_AT_THE_MOMENT"
])

/** A bundle's id at this seller: the operator's id and the amount in pesewas, in one integer column. */
const AMOUNT_SPAN = 100_000
const MAX_ID = 2 ** 31 - 1

/** The bundle id of an operator's fixed amount; none when it does not fit (an amount of GHS 1000 or more). */
export const bundleId = (operatorId: number, pesewas: bigint): Option.Option<number> => {
  const id = operatorId * AMOUNT_SPAN + Number(pesewas)
  return pesewas > 0n && pesewas < BigInt(AMOUNT_SPAN) && id <= MAX_ID ? Option.some(id) : Option.none()
}

/** An amount Reloadly writes as a JSON number, in minor units (decimal text, never arithmetic). */
const minorUnits = (amount: number): Option.Option<bigint> => {
  const text = String(amount)
  const [whole, fraction = ""] = text.split(".")
  return Option.getRight(Money.parseCedis(`${whole}${fraction === "" ? "" : `.${fraction.slice(0, 2)}`}`))
}

const Token = Schema.Struct({
  access_token: Schema.String,
  expires_in: Schema.Union(Schema.Number, Schema.NumberFromString)
})

const FixedAmounts = Schema.optional(Schema.NullOr(Schema.Array(Schema.Number)))
const Descriptions = Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })))

/** An operator as `/operators/...` describe it, as far as we read it. */
const Operator = Schema.Struct({
  operatorId: Schema.Number,
  name: Schema.String,
  bundle: Schema.optional(Schema.Boolean),
  data: Schema.optional(Schema.Boolean),
  denominationType: Schema.optional(Schema.String),
  destinationCurrencyCode: Schema.optional(Schema.NullOr(Schema.String)),
  localFixedAmounts: FixedAmounts,
  localFixedAmountsDescriptions: Descriptions
})
type Operator = typeof Operator.Type

const Transaction = Schema.Struct({
  transactionId: Schema.Number,
  status: Schema.optional(Schema.NullOr(Schema.String)),
  customIdentifier: Schema.optional(Schema.NullOr(Schema.String))
})
type Transaction = typeof Transaction.Type

const Status = Schema.Struct({ status: Schema.String, transaction: Schema.optional(Schema.NullOr(Transaction)) })
const Transactions = Schema.Struct({ content: Schema.Array(Transaction) })
const Balance = Schema.Struct({ balance: Schema.Number, currencyCode: Schema.optional(Schema.String) })
const ErrorBody = Schema.Struct({
  message: Schema.optional(Schema.NullOr(Schema.String)),
  errorCode: Schema.optional(Schema.NullOr(Schema.String))
})

/** Reloadly's transaction status in our terms: only `SUCCESSFUL` delivers; `FAILED` and `REFUNDED` fail. */
export const statusOf = (status: string | null | undefined): Order.OrderStatus =>
  status === undefined || status === null || status === "SUCCESSFUL"
    ? "successful"
    : status === "FAILED" || status === "REFUNDED"
    ? "failed"
    : "pending"

const orderOf = (transaction: Transaction, status?: string | null): SellerOrder => ({
  order_number: String(transaction.transactionId),
  status: statusOf(status === undefined ? transaction.status : status)
})

/** A seller over one Reloadly account. */
export const make = (
  config: UpstreamConfig.Upstream,
  access: UpstreamConfig.ReloadlyAccess,
  timeout: Duration.Duration
): Effect.Effect<Seller, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const base = config.url.replace(/\/+$/, "")
    const lock = yield* Effect.makeSemaphore(1)
    let token: { readonly value: string; readonly renewAt: number } | undefined

    const timed = within("Reloadly", timeout)
    const readJson = readJsonOf("Reloadly")

    /** A new token; any failure here proves nothing was bought. */
    const newToken = Effect.gen(function*() {
      const request = HttpClientRequest.post(access.authUrl).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.bodyUnsafeJson({
          client_id: access.clientId,
          client_secret: Redacted.value(access.clientSecret),
          grant_type: "client_credentials",
          audience: access.audience
        })
      )
      const response = yield* timed(http.execute(request)).pipe(
        Effect.catchAll((error) => fail({ _tag: "NotConnected", message: `no Reloadly token: ${error.message}` }))
      )
      if (response.status === 429) {
        return yield* fail({
          _tag: "RateLimited",
          waitMillis: waitOf(response),
          message: "429 from Reloadly's token endpoint"
        })
      }
      if (response.status !== 200) {
        return yield* fail({
          _tag: "NotConnected",
          message: `Reloadly's token endpoint answered ${response.status}: check the client id and secret`
        })
      }
      const body = yield* readJson(Token, response).pipe(
        Effect.catchAll(() => fail({ _tag: "NotConnected", message: "Reloadly's token answer cannot be read" }))
      )
      const now = yield* Clock.currentTimeMillis
      const lifetime = body.expires_in * 1000
      // Renewed a minute before it expires, or at nine tenths of a short lifetime.
      token = { value: body.access_token, renewAt: now + lifetime - Math.min(60_000, lifetime / 10) }
      return body.access_token
    })

    const currentToken = lock.withPermits(1)(Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      return token !== undefined && now < token.renewAt ? token.value : yield* newToken
    }))

    /** One call with the current token; an answer that the token is no longer good renews it once. */
    const call = (request: HttpClientRequest.HttpClientRequest) =>
      Effect.gen(function*() {
        const send = (value: string) =>
          timed(http.execute(request.pipe(HttpClientRequest.bearerToken(value), HttpClientRequest.accept(ACCEPT))))
        const first = yield* currentToken
        let response = yield* send(first)
        if (response.status === 401) {
          yield* lock.withPermits(1)(Effect.sync(() => {
            if (token?.value === first) token = undefined
          }))
          response = yield* send(yield* currentToken)
        }
        return response
      })

    /** A non-2xx answer in the provider's terms; `placing` says whether a refusal proves absence. */
    const failureOf = (response: HttpClientResponse.HttpClientResponse, placing: boolean) =>
      Effect.gen(function*() {
        const status = response.status
        if (status === 429) {
          return yield* fail({ _tag: "RateLimited", waitMillis: waitOf(response), message: "429 from Reloadly" })
        }
        if (status === 401 || status === 403) {
          return yield* fail({ _tag: "NotConnected", message: `Reloadly refused our token (${status})` })
        }
        if (status === 404) return yield* fail({ _tag: "NotFound", message: "not found at Reloadly" })
        const body = Option.getOrUndefined(Either.getRight(
          yield* Effect.either(readJson(ErrorBody, response))
        ))
        const code = body?.errorCode ?? undefined
        const message = `Reloadly answered ${status}${code ? ` ${code}` : ""}${
          body?.message ? `: ${body.message}` : ""
        }`
        if (placing && status >= 400 && status < 500 && code !== undefined && REFUSALS.has(code)) {
          return yield* fail({ _tag: "Refused", message, balanceTooLow: code === "INSUFFICIENT_BALANCE" })
        }
        return yield* fail({ _tag: "Unknown", message })
      })

    const get = <A, I>(path: string, schema: Schema.Schema<A, I>) =>
      Effect.gen(function*() {
        const response = yield* call(HttpClientRequest.get(`${base}${path}`))
        if (response.status !== 200) return yield* failureOf(response, false)
        return yield* readJson(schema, response)
      })

    const sells = (operator: Operator) =>
      (operator.data === true || operator.bundle === true) && operator.denominationType === "FIXED" &&
      operator.destinationCurrencyCode === "GHS"

    const networkOf = (operator: Operator): Network.Network => ({
      id: operator.operatorId as Network.NetworkId,
      name: operator.name,
      slug: access.operators[String(operator.operatorId)] ?? slugOf(operator.name),
      color: "#6B7280",
      delivery: "Seconds to minutes",
      bundles_count: offersOf(operator).length
    })

    /** An operator's fixed amounts in cedis, with their descriptions. */
    const offersOf = (operator: Operator) =>
      (operator.localFixedAmounts ?? []).flatMap((amount) => {
        const pesewas = minorUnits(amount)
        if (Option.isNone(pesewas)) return []
        const id = bundleId(operator.operatorId, pesewas.value)
        if (Option.isNone(id)) return []
        const descriptions = operator.localFixedAmountsDescriptions ?? {}
        const description = descriptions[String(amount)] ?? descriptions[amount.toFixed(2)] ?? ""
        return [{ id: id.value, pesewas: pesewas.value, description }]
      })

    const lookup = (reference: string) =>
      Effect.map(
        get(
          `/topups/reports/transactions?customIdentifier=${encodeURIComponent(reference)}&page=1&size=5`,
          Transactions
        ),
        (page) => ({
          orders: page.content.filter((t) => t.customIdentifier === reference).map((t) => orderOf(t))
        })
      )

    return {
      balance: () =>
        Effect.flatMap(get("/accounts/balance", Balance), (body) =>
          Option.match(minorUnits(body.balance), {
            onNone: () => fail({ _tag: "Unknown", message: `a balance we cannot read: ${body.balance}` }),
            onSome: (main) => Effect.succeed({ main })
          })),
      networks: () =>
        Effect.map(
          get(
            "/operators/countries/GH?includeData=true&includeBundles=true&suggestedAmounts=false",
            Schema.Array(Operator)
          ),
          (operators) => operators.filter(sells).map(networkOf)
        ),
      bundles: (networkId) =>
        Effect.map(get(`/operators/${networkId}`, Operator), (operator) =>
          sells(operator)
            ? offersOf(operator).map((offer): Bundle.Bundle => {
              const size = /(\d+(?:\.\d+)?\s?[GM]B)/i.exec(offer.description)?.[1]?.replace(/\s/g, "").toUpperCase() ??
                Money.formatGhs(offer.pesewas)
              return {
                id: offer.id as Bundle.BundleId,
                size,
                name: `${operator.name} ${size}`,
                price: offer.pesewas,
                badge: offer.description.slice(0, 60),
                is_active: true
              }
            })
            : []),
      placeOrder: ({ bundle_id, phone_number, reference }) =>
        Effect.gen(function*() {
          // A top-up already made under this reference is the answer: never buy twice.
          const held = yield* lookup(reference)
          if (held.orders[0] !== undefined) return { order: held.orders[0] }
          const operatorId = Math.floor(bundle_id / AMOUNT_SPAN)
          const pesewas = BigInt(bundle_id % AMOUNT_SPAN)
          const response = yield* call(
            HttpClientRequest.post(`${base}/topups`).pipe(
              HttpClientRequest.bodyUnsafeJson({
                operatorId,
                amount: Number(Money.formatCedis(pesewas)),
                useLocalAmount: true,
                customIdentifier: reference,
                recipientPhone: { countryCode: "GH", number: `233${Phone.nationalDigits(phone_number)}` }
              })
            )
          )
          if (response.status !== 200 && response.status !== 201) return yield* failureOf(response, true)
          return { order: orderOf(yield* readJson(Transaction, response)) }
        }),
      getOrder: (orderNumber) =>
        Effect.map(
          get(`/topups/${encodeURIComponent(orderNumber)}/status`, Status),
          (body) => ({ order_number: orderNumber, status: statusOf(body.status) })
        ),
      listOrders: ({ reference }) => lookup(reference)
    } satisfies Seller
  })
