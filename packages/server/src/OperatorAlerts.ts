/**
 * Alerts to the operator (`BUNDLES_OPERATOR_WEBHOOK_URL`): signed and shaped like an account's
 * webhook event, posted with a few retries.
 */
import { Webhook } from "@databundle/contract"
import { Tokens, WebhookDelivery } from "@databundle/core"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Cause, Clock, Effect, Redacted, Schedule } from "effect"
import type * as UpstreamConfig from "./UpstreamConfig.js"

/**
 * The body of an operator alert (`upstream.balance_low`, `payment.reversed`): signed and shaped
 * like an account's webhook event; amounts in `data` are cedis.
 */
export const operatorEvent = (
  type: "upstream.balance_low" | "payment.reversed",
  data: Readonly<Record<string, string | number | null>>,
  now: number
) => JSON.stringify({ id: Tokens.eventId(), type, created_at: new Date(now).toISOString(), livemode: true, data })

/** How many times an operator alert is tried, a few seconds apart, before it is given up (and logged). */
const OPERATOR_ATTEMPTS = 5

/** Posts an operator alert to `BUNDLES_OPERATOR_WEBHOOK_URL`, signed with its secret; retried, never failing. */
export const sendOperatorAlert = (target: UpstreamConfig.OperatorWebhook, body: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const { id, type } = JSON.parse(body) as { id: string; type: string }
    const secret = Redacted.value(target.secret)
    const attempt = Effect.gen(function*() {
      const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const signed = yield* Effect.promise(() => Webhook.deliveryHeaders({ id, type, body, secret, timestamp }))
      const response = yield* client.execute(
        HttpClientRequest.post(target.url).pipe(
          HttpClientRequest.setHeaders({ ...signed, "user-agent": WebhookDelivery.USER_AGENT }),
          HttpClientRequest.bodyText(body, "application/json")
        )
      ).pipe(Effect.scoped, Effect.timeout("10 seconds"))
      if (response.status < 200 || response.status >= 300) {
        return yield* Effect.fail(new Error(`the operator webhook answered ${response.status}`))
      }
    })
    yield* attempt.pipe(
      Effect.retry({ times: OPERATOR_ATTEMPTS - 1, schedule: Schedule.exponential("2 seconds") }),
      Effect.catchAllCause((cause) =>
        Effect.logWarning(`operator webhook ${type} ${id} not delivered`, Cause.pretty(cause)).pipe(
          Effect.annotateLogs({ event: "operator_webhook.failed" })
        )
      )
    )
  })
