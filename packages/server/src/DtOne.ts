/**
 * DT One's DVS API as a seller (`Seller.ts`): Ghana's fixed-value data products, transactions
 * created and confirmed in one call under our order number as `external_id`, a transaction's
 * status class, and the account's balance, with HTTP Basic credentials (key and secret).
 *
 * As with Reloadly, a transaction is looked up by its `external_id` before one is created, so a
 * repeat after a lost answer follows the transaction already made. A 400 or 422 answer to the
 * creation is a validation refusal (nothing is created); a 409, a 5xx, a timeout or an answer we
 * cannot read may have created it, so the order is only looked up there.
 */
import { type Bundle, Money, type Network, type Order, Phone } from "@databundle/contract"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { type Duration, Effect, Option, Redacted, Schema } from "effect"
import { fail, readJson as readJsonOf, slugOf, waitOf, within } from "./AggregatorHttp.js"
import type { Seller, SellerOrder } from "./Seller.js"
import type * as UpstreamConfig from "./UpstreamConfig.js"

const Product = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  description: Schema.optional(Schema.NullOr(Schema.String)),
  type: Schema.String,
  operator: Schema.Struct({ id: Schema.Number, name: Schema.String }),
  destination: Schema.optional(Schema.NullOr(Schema.Struct({ amount: Schema.Number, unit: Schema.String }))),
  benefits: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    type: Schema.String,
    unit: Schema.optional(Schema.NullOr(Schema.String)),
    amount: Schema.optional(Schema.NullOr(Schema.Struct({ base: Schema.optional(Schema.NullOr(Schema.Number)) })))
  }))))
})
type Product = typeof Product.Type

const Transaction = Schema.Struct({
  id: Schema.Number,
  external_id: Schema.optional(Schema.NullOr(Schema.String)),
  status: Schema.Struct({ class: Schema.Struct({ message: Schema.String }) })
})
type Transaction = typeof Transaction.Type

const Balances = Schema.Array(Schema.Struct({ available: Schema.Number, unit: Schema.String }))

/** DT One's status class in our terms: COMPLETED delivers; REJECTED, CANCELLED, DECLINED and REVERSED fail. */
export const statusOf = (statusClass: string): Order.OrderStatus =>
  statusClass === "COMPLETED"
    ? "successful"
    : ["REJECTED", "CANCELLED", "DECLINED", "REVERSED"].includes(statusClass)
    ? "failed"
    : "pending"

const orderOf = (t: Transaction): SellerOrder => ({
  order_number: String(t.id),
  status: statusOf(t.status.class.message)
})

/** An amount in minor units, from its decimal text. */
const minorUnits = (amount: number): Option.Option<bigint> => {
  const [whole, fraction = ""] = String(amount).split(".")
  return Option.getRight(Money.parseCedis(`${whole}${fraction === "" ? "" : `.${fraction.slice(0, 2)}`}`))
}

/** The data a product gives, as a size: `1GB`, `500MB`. */
const sizeOf = (product: Product): string | undefined => {
  const data = product.benefits?.find((b) => b.type === "DATA")
  const amount = data?.amount?.base
  if (data === undefined || amount === undefined || amount === null) return undefined
  const unit = (data.unit ?? "MB").toUpperCase()
  return unit === "MB" && amount >= 1024 && amount % 1024 === 0 ? `${amount / 1024}GB` : `${amount}${unit}`
}

/** A seller over one DT One account. */
export const make = (
  config: UpstreamConfig.Upstream,
  access: UpstreamConfig.DtOneAccess,
  timeout: Duration.Duration
): Effect.Effect<Seller, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const base = config.url.replace(/\/+$/, "")

    const call = (request: HttpClientRequest.HttpClientRequest) =>
      http.execute(request.pipe(
        HttpClientRequest.basicAuth(access.apiKey, Redacted.value(access.apiSecret)),
        HttpClientRequest.acceptJson
      )).pipe(within("DT One", timeout))

    const readJson = readJsonOf("DT One")

    const failureOf = (response: HttpClientResponse.HttpClientResponse, placing: boolean) =>
      Effect.gen(function*() {
        const status = response.status
        if (status === 429) {
          return yield* fail({ _tag: "RateLimited", waitMillis: waitOf(response), message: "429 from DT One" })
        }
        if (status === 401 || status === 403) {
          return yield* fail({ _tag: "NotConnected", message: `DT One refused our key (${status})` })
        }
        if (status === 404) return yield* fail({ _tag: "NotFound", message: "not found at DT One" })
        const text = yield* Effect.orElseSucceed(response.text, () => "")
        const message = `DT One answered ${status}: ${text.slice(0, 200)}`
        if (placing && (status === 400 || status === 422)) {
          return yield* fail({ _tag: "Refused", message, balanceTooLow: /balance/i.test(text) })
        }
        return yield* fail({ _tag: "Unknown", message })
      })

    const get = <A, I>(path: string, schema: Schema.Schema<A, I>) =>
      Effect.gen(function*() {
        const response = yield* call(HttpClientRequest.get(`${base}${path}`))
        if (response.status !== 200) return yield* failureOf(response, false)
        return yield* readJson(schema, response)
      })

    /** Ghana's fixed-value products priced in cedis that give data. */
    const products = Effect.gen(function*() {
      const all: Array<Product> = []
      for (let page = 1; page <= 20; page++) {
        const batch = yield* get(
          `/products?country_iso_code=GHA&type=FIXED_VALUE_RECHARGE&per_page=100&page=${page}`,
          Schema.Array(Product)
        )
        all.push(...batch)
        if (batch.length < 100) break
      }
      return all.filter((p) => p.destination?.unit === "GHS" && sizeOf(p) !== undefined)
    })

    const lookup = (reference: string) =>
      Effect.map(
        get(`/transactions?external_id=${encodeURIComponent(reference)}`, Schema.Array(Transaction)),
        (list) => ({ orders: list.filter((t) => t.external_id === reference).map(orderOf) })
      )

    return {
      balance: () =>
        Effect.flatMap(get("/balances", Balances), (list) => {
          const chosen = list.find((b) => b.unit === "GHS") ?? list[0]
          const main = chosen === undefined ? Option.none() : minorUnits(chosen.available)
          return Option.isSome(main)
            ? Effect.succeed({ main: main.value })
            : fail({ _tag: "Unknown", message: "DT One gave no balance we can read" })
        }),
      networks: () =>
        Effect.map(products, (list) => {
          const byOperator = new Map<number, { name: string; count: number }>()
          for (const p of list) {
            const entry = byOperator.get(p.operator.id) ?? { name: p.operator.name, count: 0 }
            entry.count++
            byOperator.set(p.operator.id, entry)
          }
          return [...byOperator].map(([id, { count, name }]): Network.Network => ({
            id: id as Network.NetworkId,
            name,
            slug: access.operators[String(id)] ?? slugOf(name),
            color: "#6B7280",
            delivery: "Seconds to minutes",
            bundles_count: count
          }))
        }),
      bundles: (networkId) =>
        Effect.map(products, (list) =>
          list.filter((p) =>
            p.operator.id === networkId
          ).flatMap((p): Array<Bundle.Bundle> => {
            const price = minorUnits(p.destination!.amount)
            if (Option.isNone(price)) return []
            const size = sizeOf(p)!
            return [{
              id: p.id as Bundle.BundleId,
              size,
              name: p.name,
              price: price.value,
              badge: (p.description ?? "").slice(0, 60),
              is_active: true
            }]
          })),
      placeOrder: ({ bundle_id, phone_number, reference }) =>
        Effect.gen(function*() {
          // A transaction already made under this reference is the answer: never buy twice.
          const held = yield* lookup(reference)
          if (held.orders[0] !== undefined) return { order: held.orders[0] }
          const response = yield* call(
            HttpClientRequest.post(`${base}/async/transactions`).pipe(
              HttpClientRequest.bodyUnsafeJson({
                external_id: reference,
                product_id: bundle_id,
                auto_confirm: true,
                credit_party_identifier: { mobile_number: `+233${Phone.nationalDigits(phone_number)}` }
              })
            )
          )
          if (response.status !== 200 && response.status !== 201) return yield* failureOf(response, true)
          return { order: orderOf(yield* readJson(Transaction, response)) }
        }),
      getOrder: (orderNumber) =>
        Effect.map(get(`/transactions/${encodeURIComponent(orderNumber)}`, Transaction), orderOf),
      listOrders: ({ reference }) => lookup(reference)
    } satisfies Seller
  })
