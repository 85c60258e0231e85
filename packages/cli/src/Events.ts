/**
 * The account's events and webhooks: `events list`, `events trigger`, `webhooks listen`,
 * `webhooks deliveries`, `webhooks resend`. `webhooks listen` follows the event feed (GET /events
 * with its cursor) and forwards each event to a local URL, signed with the account's webhook
 * secret exactly as a delivery is, so a receiver under development sees real deliveries
 * without a public URL.
 */
import { BundlesClient, formatGhs, webhookBody, type WebhookEventType, webhookHeaders } from "@databundle/client"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Clock, Duration, Effect, Option, Stream } from "effect"
import type * as Config from "./Config.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

type Event = BundlesClient.Event
type Delivery = BundlesClient.Delivery

/** How long the local receiver has to answer a forwarded event. */
export const FORWARD_TIMEOUT = Duration.seconds(10)

/** What an event is about, in a few words: its order and status, or its wallet movement. */
export const summary = (event: Event): string => {
  const test = event.test === true ? " (test)" : ""
  switch (event.type) {
    case "order.successful":
    case "order.failed":
      return `${Output.clean(event.data.order_number)} ${Output.clean(event.data.phone_number)} ${
        formatGhs(event.data.amount_paid)
      }${test}`
    case "wallet.funded":
    case "wallet.debited":
      return `${event.data.wallet} ${event.type === "wallet.funded" ? "+" : "-"}${
        formatGhs(event.data.amount)
      } ${event.data.reason}, balance ${formatGhs(event.data.balance)}${test}`
  }
}

const optional = <K extends string, A>(key: K, option: Option.Option<A>): { [P in K]?: A } =>
  Option.match(option, { onNone: () => ({}), onSome: (value) => ({ [key]: value }) as { [P in K]?: A } })

/** The options of `events list`. */
export interface ListInput extends Config.Shared {
  readonly since: Option.Option<string>
  readonly type: Option.Option<WebhookEventType>
  readonly page: Option.Option<number>
  readonly perPage: Option.Option<number>
}

/** `bundles events list`: one page of the account's events, newest first, and the cursor after it. */
export const list = (options: ListInput) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const page = yield* (yield* BundlesClient).events({
        ...optional("since", options.since) as { since?: any },
        ...optional("type", options.type),
        ...optional("page", options.page),
        ...optional("per_page", options.perPage)
      })
      if (options.json) return yield* Output.printJson({ success: true, ...page })
      const { out } = yield* Output.styles
      const { current_page, last_page, total } = page.pagination
      yield* Output.printLines([
        ...(page.events.length === 0
          ? [total === 0 ? "No events." : `No events on page ${current_page}.`]
          : Output.table<Event>(
            [
              { title: "DATE", value: (e) => Output.date(e.created_at) },
              { title: "TYPE", value: (e) => e.type },
              { title: "ID", value: (e) => e.id },
              { title: "SUMMARY", value: (e) => summary(e) }
            ],
            page.events,
            out
          )),
        ...(total === 0 ? [] : [`Page ${current_page} of ${Math.max(last_page, 1)} (${total} in all)`]),
        `Cursor ${page.cursor} (pass --since ${page.cursor} to list only what comes after)`
      ])
    }))

/** `bundles events trigger TYPE`: a test event, to the feed and to the webhook URL if there is one. */
export const trigger = (options: Config.Shared & { readonly type: WebhookEventType }) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const triggered = yield* (yield* BundlesClient).triggerEvent(options.type)
      if (options.json) return yield* Output.printJson({ success: true, ...triggered })
      yield* Output.printLines([
        `Sent a test ${triggered.event.type} event, ${triggered.event.id}.`,
        triggered.delivery === null
          ? "The account has no webhook URL: it is in the event feed only (bundles webhooks listen forwards it)."
          : "Queued for delivery to the account's webhook URL (see bundles webhooks deliveries)."
      ])
    }))

/** The options of `webhooks listen`. */
export interface ListenInput extends Config.Shared {
  readonly forwardTo: string
  readonly since: Option.Option<string>
  readonly type: Option.Option<WebhookEventType>
  readonly interval: number
}

/** What became of one forwarded event. */
interface Forwarded {
  readonly status: number | null
  readonly error: string | null
  readonly millis: number
}

/**
 * `bundles webhooks listen --forward-to URL`: from now (or `--since`), every event of the account,
 * oldest first, POSTed to the URL with the headers of a real delivery. One line per event on
 * stdout (with `--json`, one JSON object per line); runs until stopped (Ctrl-C).
 */
export const listen = (options: ListenInput) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const client = yield* BundlesClient
      const http = yield* HttpClient.HttpClient
      const { err, out } = yield* Output.styles
      const settings = yield* client.webhookSettings()
      const type = Option.getOrUndefined(options.type)
      // Where to start, taken before saying "Ready", so every event after that line is forwarded.
      const since = Option.isSome(options.since)
        ? options.since.value
        : (yield* client.events({ per_page: 1, ...(type === undefined ? {} : { type }) })).cursor
      yield* Output.note(
        `${err.bold("Ready.")} Forwarding the account's events to ${Output.clean(options.forwardTo)}, signed with ` +
          `the account's webhook secret ${settings.secret.slice(0, 10)}... (Ctrl-C to stop)`
      )
      const forward = (event: Event) =>
        Effect.gen(function*() {
          const body = webhookBody(event)
          const headers = yield* Effect.promise(() =>
            webhookHeaders({ id: event.id, type: event.type, body, secret: settings.secret })
          )
          const started = yield* Clock.currentTimeMillis
          const answer = yield* http.execute(
            HttpClientRequest.post(options.forwardTo).pipe(
              HttpClientRequest.setHeaders({ ...headers, "user-agent": "bundles-cli webhooks listen" }),
              HttpClientRequest.bodyText(body, "application/json")
            )
          ).pipe(
            Effect.map((response) => response.status),
            Effect.scoped,
            Effect.timeoutFail({
              duration: FORWARD_TIMEOUT,
              onTimeout: () => new Error(`no answer within ${Duration.format(FORWARD_TIMEOUT)}`)
            }),
            Effect.either
          )
          const millis = (yield* Clock.currentTimeMillis) - started
          const forwarded: Forwarded = answer._tag === "Right"
            ? { status: answer.right, error: null, millis }
            : { status: null, error: reason(answer.left), millis }
          if (options.json) {
            return yield* Output.printJson({ event, forwarded: { url: options.forwardTo, ...forwarded } })
          }
          const ok = forwarded.status !== null && forwarded.status >= 200 && forwarded.status < 300
          const result = forwarded.status === null
            ? out.red(`failed: ${Output.clean(forwarded.error ?? "")}`)
            : (ok ? out.green : out.red)(`${forwarded.status}`)
          yield* Output.printLines([
            `${Output.date(event.created_at)}  ${event.type.padEnd(16)}  ${event.id}  ${
              summary(event)
            }  -> ${result} ` +
            `(${forwarded.millis} ms)`
          ])
        })
      yield* client.followEvents({
        since,
        type,
        interval: Duration.seconds(options.interval)
      }).pipe(Stream.runForEach(forward))
    }).pipe(Effect.provide(NodeHttpClient.layer)))

const reason = (error: unknown): string => {
  const cause = (error as { cause?: unknown }).cause
  const inner = cause instanceof Error ? (cause as { code?: string }).code ?? cause.message : undefined
  return inner ?? (error instanceof Error ? error.message : String(error))
}

const deliveriesTable = (deliveries: ReadonlyArray<Delivery>, s: Output.Style) =>
  Output.table<Delivery>(
    [
      { title: "ID", value: (d) => d.id },
      { title: "EVENT", value: (d) => d.event_type },
      { title: "STATE", value: (d) => d.state === "delivered" ? s.green(d.state) : d.state },
      { title: "ATTEMPTS", value: (d) => String(d.attempts), right: true },
      {
        title: "LAST",
        value: (d) => d.last_status === null ? (d.last_error === null ? "" : "none") : String(d.last_status)
      },
      { title: "NEXT RETRY", value: (d) => d.next_attempt_at === null ? "" : Output.date(d.next_attempt_at) },
      { title: "CREATED", value: (d) => Output.date(d.created_at) },
      { title: "URL", value: (d) => Output.clean(d.url ?? "") }
    ],
    deliveries,
    s
  )

/** The options of `webhooks deliveries`. */
export interface DeliveriesInput extends Config.Shared {
  readonly state: Option.Option<"pending" | "retrying" | "delivered" | "abandoned">
  readonly type: Option.Option<WebhookEventType>
  readonly page: Option.Option<number>
  readonly perPage: Option.Option<number>
}

/** `bundles webhooks deliveries`: deliveries to the webhook URL, newest first. */
export const deliveries = (options: DeliveriesInput) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const page = yield* (yield* BundlesClient).deliveries({
        ...optional("state", options.state),
        ...optional("type", options.type),
        ...optional("page", options.page),
        ...optional("per_page", options.perPage)
      })
      if (options.json) return yield* Output.printJson({ success: true, ...page })
      const { out } = yield* Output.styles
      const { current_page, last_page, total } = page.pagination
      if (page.deliveries.length === 0) {
        return yield* Output.printLines([total === 0 ? "No deliveries." : `No deliveries on page ${current_page}.`])
      }
      yield* Output.printLines([
        ...deliveriesTable(page.deliveries, out),
        `Page ${current_page} of ${Math.max(last_page, 1)} (${total} in all)`
      ])
    }))

/** `bundles webhooks resend ID`: delivers an event again now. */
export const resend = (options: Config.Shared & { readonly id: string }) =>
  Session.run(options, () =>
    Effect.gen(function*() {
      const delivery = yield* (yield* BundlesClient).resendDelivery(options.id)
      if (options.json) return yield* Output.printJson({ success: true, delivery })
      yield* Output.printLines([`Delivery ${delivery.id} queued again: it is attempted now.`])
    }))
