/**
 * Traces, sent over OTLP/HTTP (JSON) when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and not
 * collected at all when it is not. Every request is a span (`http.server METHOD`) carrying
 * its `request_id`; an order's requests carry its `order_number`; the domain's services add
 * their own spans beneath (`Orders.place`, ...).
 *
 * The standard variables apply: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL, instead
 * of the endpoint plus `/v1/traces`), `OTEL_EXPORTER_OTLP_HEADERS` (`name=value,...`),
 * `OTEL_SERVICE_NAME` (default `bundles-server`), `OTEL_BSP_SCHEDULE_DELAY` (how often
 * spans are sent, in milliseconds, default 5000).
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { Config, Duration, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as OutsideAnswers from "./OutsideAnswers.js"

const settings = Config.all({
  endpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")),
  tracesEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  headers: Config.string("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.withDefault("")),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("bundles-server")),
  delay: Config.integer("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5000))
})

/** `name=value,name2=value2` (values percent-encoded), as the OTLP exporters read it. */
const parseHeaders = (text: string): Record<string, string> =>
  Object.fromEntries(
    text.split(",").map((pair) => pair.trim()).filter((pair) => pair.includes("=")).map((pair) => {
      const at = pair.indexOf("=")
      return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())]
    })
  )

/** Where spans go (OTLP/HTTP), when anywhere. */
const destination = Effect.map(settings, (config) =>
  Option.orElse(
    Option.filter(config.tracesEndpoint, (url) => url.length > 0),
    () =>
      Option.map(
        Option.filter(config.endpoint, (url) => url.length > 0),
        (endpoint) => `${endpoint.replace(/\/+$/, "")}/v1/traces`
      )
  ))

/** True when traces are sent; without it no span is worth making. */
export const enabled = Effect.map(destination, Option.isSome)

/** The package version, for the traces' resource. */
const VERSION: string = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")).version

/**
 * The tracer, or, when no endpoint is configured, tracing turned off: every span is then a
 * no-op one (no clock read, no attributes, nothing kept), where the default tracer would
 * make each span of every request for no one.
 */
export const layer = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* settings
  const url = yield* destination
  if (Option.isNone(url)) return Layer.setTracerEnabled(false)
  return OtlpTracer.layer({
    url: url.value,
    resource: { serviceName: config.serviceName, serviceVersion: VERSION },
    headers: parseHeaders(config.headers),
    exportInterval: Duration.millis(config.delay)
  }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(OutsideAnswers.httpClient))
}))
