/**
 * Paystack as the payment gateway (`BUNDLES_PAYMENTS_PROVIDER=paystack`): its mobile money
 * charge API collects from MTN MoMo, Telecel Cash and AirtelTigo Money wallets in Ghana, and
 * its signed webhooks (`x-paystack-signature`, HMAC-SHA512 of the body with the secret key)
 * arrive at `POST /callbacks/paystack`.
 *
 * The payment number is Paystack's transaction reference, so `collect` is idempotent: it asks
 * for the transaction first (`GET /transaction/verify/:reference`) and starts a charge
 * (`POST /charge`) only when Paystack has never seen it. A callback is a hint: it makes
 * `Payments.refresh` ask Paystack again, and the answer, not the callback's body, settles the
 * payment (once: only a pending payment settles).
 *
 * Some wallets (some Telecel Cash ones) make the charge answer `send_otp`: the payer gets a
 * one-time code, the payment awaits it (`AwaitingCode`, with Paystack's `display_text`), and
 * `submitCode` sends it with `POST /charge/submit_otp`.
 */
import { ApiError, Money, Payment } from "@databundle/contract"
import { PaymentProvider, Payments } from "@databundle/core"
import { HttpClient, HttpClientRequest, HttpServerRequest } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import { Clock, Config, ConfigError, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import * as OperatorAlerts from "./OperatorAlerts.js"
import * as OutsideAnswers from "./OutsideAnswers.js"
import * as UpstreamConfig from "./UpstreamConfig.js"

/** Where Paystack's webhooks are received. */
export const CALLBACK_PATH = "/callbacks/paystack"

/** The payment port's provider: `simulator` (the default) or `paystack`. */
export const providerKind = Config.literal("simulator", "paystack")("BUNDLES_PAYMENTS_PROVIDER").pipe(
  Config.withDefault("simulator" as const)
)

/** Paystack's settings: the secret key and the API's base URL (overridable for tests). */
export const config = Config.all({
  secretKey: Config.option(Config.redacted("BUNDLES_PAYSTACK_SECRET_KEY")).pipe(
    Config.mapOrFail((key) =>
      Option.isSome(key) && Redacted.value(key.value).trim().length > 0
        ? Either.right(key.value)
        : Either.left(ConfigError.MissingData(
          ["BUNDLES_PAYSTACK_SECRET_KEY"],
          "BUNDLES_PAYMENTS_PROVIDER=paystack needs your Paystack secret key (sk_live_... or sk_test_...)"
        ))
    )
  ),
  baseUrl: Config.string("BUNDLES_PAYSTACK_BASE_URL").pipe(
    Config.withDefault("https://api.paystack.co"),
    Config.map((url) => url.trim().replace(/\/+$/, ""))
  )
})

/** Paystack's names of the Ghanaian mobile money providers. */
export const PROVIDER_CODES: Record<Exclude<Payment.PaymentMethod, "manual_transfer">, string> = {
  mtn_momo: "mtn",
  telecel_cash: "vod",
  airteltigo_money: "atl"
}

/** How soon a pending charge is asked about again (the webhook usually comes first). */
const CHECK_AFTER = Duration.seconds(10)
/** How soon a charge that waits for the payer's code is asked about again (the payer is typing). */
const CODE_CHECK_AFTER = Duration.seconds(60)

/** A transaction as Paystack reports it (the fields read here). */
interface Transaction {
  readonly status?: string
  readonly amount?: number
  readonly currency?: string
  readonly id?: number | string
  readonly reference?: string
  readonly gateway_response?: string | null
  readonly message?: string | null
  readonly display_text?: string | null
}

interface Answer {
  readonly status?: boolean
  readonly message?: string
  readonly data?: Transaction
}

const FAILED = new Set(["failed", "abandoned"])

/**
 * What a transaction's state means for the payment. Success counts only for exactly the
 * amount, in GHS said in so many words (no currency is no success).
 */
export const outcomeOf = (request: PaymentProvider.CollectionRequest, tx: Transaction) => {
  if (tx.status === "success") {
    if (tx.amount !== Number(request.amount) || tx.currency !== "GHS") {
      return PaymentProvider.CollectionOutcome.Declined({
        reason: `Paystack reports ${tx.currency ?? "no currency"} ${
          tx.amount ?? "?"
        } (pesewas) for this payment, not GHS ${Number(request.amount)}: not credited, ask the operator`
      })
    }
    return PaymentProvider.CollectionOutcome.Approved({ providerReference: `PSK-${tx.id ?? tx.reference}` })
  }
  if (tx.status === "reversed") {
    return PaymentProvider.CollectionOutcome.Reversed({
      reason: tx.gateway_response || tx.message || "Paystack: the charge was reversed"
    })
  }
  if (tx.status !== undefined && FAILED.has(tx.status)) {
    return PaymentProvider.CollectionOutcome.Declined({
      reason: tx.gateway_response || tx.message || `Paystack: the charge ${tx.status}`
    })
  }
  if (tx.status === "send_otp") {
    return PaymentProvider.CollectionOutcome.AwaitingCode({
      prompt: tx.display_text || null,
      checkAfter: CODE_CHECK_AFTER
    })
  }
  return PaymentProvider.CollectionOutcome.Pending({ checkAfter: CHECK_AFTER })
}

/** The payment port on Paystack's API. */
export const provider = Layer.effect(
  PaymentProvider.PaymentProvider,
  Effect.gen(function*() {
    const { baseUrl, secretKey } = yield* config
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequest.prependUrl(baseUrl),
          HttpClientRequest.bearerToken(Redacted.value(secretKey)),
          HttpClientRequest.acceptJson
        )
      )
    )
    const send = (request: HttpClientRequest.HttpClientRequest) =>
      client.execute(request).pipe(
        Effect.flatMap((response) =>
          Effect.map(
            // A body that is not JSON reads as empty; one too large to read is no answer at all
            // (a charge it answered may have started: the payment stays pending, asked again).
            response.json.pipe(
              Effect.catchAll((error) => OutsideAnswers.isTooLarge(error) ? Effect.fail(error) : Effect.succeed({}))
            ),
            (body) => ({ status: response.status, body: body as Answer })
          )
        ),
        Effect.scoped
      )

    const charge = (request: PaymentProvider.CollectionRequest) =>
      Effect.gen(function*() {
        const method = request.method as keyof typeof PROVIDER_CODES
        const answer = yield* send(
          HttpClientRequest.post("/charge").pipe(HttpClientRequest.bodyUnsafeJson({
            email: request.email ?? `payments+${request.paymentNumber.toLowerCase()}@example.invalid`,
            amount: String(request.amount),
            currency: "GHS",
            reference: request.paymentNumber,
            mobile_money: { phone: request.payerNumber, provider: PROVIDER_CODES[method] }
          }))
        )
        if (answer.status >= 500) return yield* Effect.fail(new Error(`Paystack answered ${answer.status} to a charge`))
        if (answer.body.status === true && answer.body.data !== undefined) return outcomeOf(request, answer.body.data)
        // Another process started this very charge a moment ago: its state comes with the next check.
        if (/duplicate/i.test(answer.body.message ?? "")) {
          return PaymentProvider.CollectionOutcome.Pending({ checkAfter: Duration.seconds(2) })
        }
        // Refused outright (an invalid number, a provider that is down for this wallet...): nothing was charged.
        return PaymentProvider.CollectionOutcome.Declined({
          reason: `Paystack refused the charge: ${answer.body.message ?? `status ${answer.status}`}`
        })
      })

    /** The transaction as Paystack has it, or `None` when it has never seen the reference. */
    const verify = (request: PaymentProvider.CollectionRequest) =>
      Effect.gen(function*() {
        const verified = yield* send(
          HttpClientRequest.get(`/transaction/verify/${encodeURIComponent(request.paymentNumber)}`)
        )
        if (verified.status === 200 && verified.body.status === true && verified.body.data !== undefined) {
          return Option.some(verified.body.data)
        }
        if (verified.status === 400 || verified.status === 404) return Option.none<Transaction>()
        return yield* Effect.fail(new Error(`Paystack answered ${verified.status} to a verification`))
      })

    return {
      collect: (request) =>
        Effect.gen(function*() {
          const tx = yield* verify(request)
          return Option.isSome(tx) ? outcomeOf(request, tx.value) : yield* charge(request)
        }).pipe(Effect.orDie, Effect.withSpan("Paystack.collect")),
      submitCode: (request, code) =>
        Effect.gen(function*() {
          const answer = yield* send(
            HttpClientRequest.post("/charge/submit_otp").pipe(
              HttpClientRequest.bodyUnsafeJson({ otp: code, reference: request.paymentNumber })
            )
          )
          if (answer.status >= 500) {
            return yield* Effect.fail(new Error(`Paystack answered ${answer.status} to a one-time code`))
          }
          if (answer.body.status === true && answer.body.data !== undefined) {
            const data = answer.body.data
            // Asked for a code again: this one was not taken.
            if (data.status === "send_otp") {
              return {
                _tag: "WrongCode",
                message: data.message || data.display_text || "The code was not accepted: enter it again"
              } as const
            }
            return outcomeOf(request, data)
          }
          // Refused: a wrong or used code, or a charge that already moved on (a repeat, or the
          // callback came first). The transaction's own state decides which.
          const tx = yield* verify(request)
          if (Option.isSome(tx) && tx.value.status !== "send_otp") return outcomeOf(request, tx.value)
          return {
            _tag: "WrongCode",
            message: answer.body.message || `Paystack refused the code (status ${answer.status})`
          } as const
        }).pipe(Effect.orDie, Effect.withSpan("Paystack.submitCode"))
    }
  })
).pipe(Layer.provide(OutsideAnswers.httpClient))

/** The payment provider of the configuration. */
export const layer = Layer.unwrapEffect(Effect.map(
  providerKind,
  (kind) => kind === "paystack" ? provider : PaymentProvider.PaymentProvider.Simulator
))

/** True when `signature` is the hex HMAC-SHA512 of `body` under `secret`. */
export const signatureValid = (body: string, signature: string | undefined, secret: string): boolean => {
  if (signature === undefined || !/^[0-9a-f]{128}$/i.test(signature)) return false
  const expected = createHmac("sha512", secret).update(body, "utf8").digest()
  return timingSafeEqual(expected, Buffer.from(signature, "hex"))
}

/**
 * `POST /callbacks/paystack`: a webhook of Paystack's, signed with the secret key. A wrong or
 * missing signature is a 401 and changes nothing; a right one about one of our payments makes
 * it be asked about again now. A 404, as an unknown path, when Paystack is not the provider.
 * A payment already credited that Paystack now reports reversed is shown to the operator
 * (`reversed_at`), logged (`event: payment.reversed`) and, with `BUNDLES_OPERATOR_WEBHOOK_URL`,
 * posted to them as a `payment.reversed` alert; the wallet is left for the operator to adjust.
 */
export const callback = Effect.gen(function*() {
  const payments = yield* Payments.Payments
  const secret = (yield* providerKind) === "paystack"
    ? Option.some(Redacted.value((yield* config).secretKey))
    : Option.none<string>()
  const operator = yield* UpstreamConfig.operatorWebhook
  const alert = (payment: Payment.AdminPayment) =>
    Option.isNone(operator) ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.forkDaemon(
        OperatorAlerts.sendOperatorAlert(
          operator.value,
          OperatorAlerts.operatorEvent("payment.reversed", {
            payment_number: payment.payment_number,
            account_id: payment.account_id,
            amount: Number(Money.formatCedis(payment.amount)),
            reason: payment.reversal_reason
          }, now)
        ).pipe(Effect.provide(OutsideAnswers.httpClient))
      ))
  return Effect.gen(function*() {
    if (Option.isNone(secret)) {
      return yield* new ApiError.NotFound({ message: `No route for POST ${CALLBACK_PATH}` })
    }
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* Effect.orDie(request.text)
    if (!signatureValid(body, request.headers["x-paystack-signature"], secret.value)) {
      return yield* new ApiError.Unauthorized({ message: "Missing or wrong x-paystack-signature" })
    }
    const event = yield* Effect.try(() => JSON.parse(body) as { event?: string; data?: Transaction }).pipe(
      Effect.orElseSucceed(() => ({}) as { event?: string; data?: Transaction })
    )
    const reference = event.data?.reference
    const found = typeof reference === "string" ? yield* payments.refresh(reference) : Option.none()
    if (Option.isSome(found)) {
      const { payment, reversal } = found.value
      yield* Effect.logInfo(`Paystack ${event.event ?? "event"} for ${reference}: ${payment.status}`)
      if (reversal) yield* alert(payment)
    }
    return HttpServerResponse.unsafeJson({ success: true, message: "Received" })
  })
}).pipe(Effect.orDie)
