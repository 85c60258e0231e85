/**
 * The upstreams file: what it accepts, and the clear refusals of what it does not.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import * as UpstreamConfig from "../src/UpstreamConfig.js"

const env = (name: string) => ({ ALPHA_KEY: "key-alpha" } as Record<string, string>)[name]
const parse = (value: unknown) => UpstreamConfig.parseFile(JSON.stringify(value), env)

describe("BUNDLES_UPSTREAMS_FILE", () => {
  it("reads upstreams with keys from the environment, priorities and low balances", () => {
    const parsed = parse({
      upstreams: [
        { name: "alpha", url: "https://a.example/api/v1", api_key_env: "ALPHA_KEY", networks: { mtn: 1, "*": 9 } },
        { name: "beta", url: "https://b.example/api/v1", api_key: "key-beta", low_balance: 50.5 }
      ]
    })
    const [alpha, beta] = Either.getOrThrow(parsed)
    assert.strictEqual(alpha!.access.kind, "upstream")
    assert.strictEqual(Redacted.value((alpha!.access as UpstreamConfig.ApiKeyAccess).apiKey), "key-alpha")
    assert.deepStrictEqual(UpstreamConfig.priorityFor(alpha!, "mtn"), Option.some(1))
    assert.deepStrictEqual(UpstreamConfig.priorityFor(alpha!, "telecel"), Option.some(9))
    assert.deepStrictEqual(UpstreamConfig.priorityFor(beta!, "mtn"), Option.some(100))
    assert.deepStrictEqual(beta!.lowBalance, Option.some(5050n))
  })

  it("serves only the networks listed when there is no *", () => {
    const [only] = Either.getOrThrow(parse({
      upstreams: [{ name: "mtn-only", url: "https://a.example", api_key: "k", networks: { mtn: 1 } }]
    }))
    assert.deepStrictEqual(UpstreamConfig.priorityFor(only!, "telecel"), Option.none())
  })

  it("refuses a missing key, a name listed twice, a bad slug, unknown fields and non-JSON", () => {
    const refusal = (value: unknown) => Either.getLeft(parse(value)).pipe(Option.getOrElse(() => "accepted"))
    assert.include(
      refusal({ upstreams: [{ name: "a", url: "https://a.example", api_key_env: "MISSING" }] }),
      "has no API key"
    )
    assert.include(
      refusal({
        upstreams: [{ name: "a", url: "https://a", api_key: "k" }, { name: "a", url: "https://b", api_key: "k" }]
      }),
      "listed twice"
    )
    assert.include(refusal({ upstreams: [{ name: "a", url: "u", api_key: "k", networks: { "MTN!": 1 } }] }), "networks")
    assert.include(refusal({ upstreams: [{ name: "a", url: "u", api_key: "k", colour: "red" }] }), "colour")
    assert.include(refusal({ upstreams: [] }), "upstreams")
    assert.include(Either.getLeft(UpstreamConfig.parseFile("{", env)).pipe(Option.getOrThrow), "not JSON")
  })
})

describe("BUNDLES_OPERATOR_WEBHOOK_URL and _SECRET", () => {
  const read = (vars: Record<string, string>) =>
    Effect.runSync(
      Effect.either(
        Effect.withConfigProvider(UpstreamConfig.operatorWebhook, ConfigProvider.fromMap(new Map(Object.entries(vars))))
      )
    )
  const secret = "whsec_b3BlcmF0b3Itc2VjcmV0LWZvci10ZXN0cy0xMjM0NQ=="

  it("are optional together, and read together", () => {
    assert.deepStrictEqual(read({}), Either.right(Option.none()))
    const both = Either.getOrThrow(read({
      BUNDLES_OPERATOR_WEBHOOK_URL: "https://ops.example/alerts",
      BUNDLES_OPERATOR_WEBHOOK_SECRET: secret
    }))
    assert.strictEqual(Option.getOrThrow(both).url, "https://ops.example/alerts")
    assert.strictEqual(Redacted.value(Option.getOrThrow(both).secret), secret)
  })

  it("refuse one without the other, a URL that is not http(s) and a secret that cannot sign", () => {
    const refusal = (vars: Record<string, string>) => String(Either.getLeft(read(vars)).pipe(Option.getOrThrow))
    assert.include(refusal({ BUNDLES_OPERATOR_WEBHOOK_URL: "https://ops.example" }), "go together")
    assert.include(refusal({ BUNDLES_OPERATOR_WEBHOOK_SECRET: secret }), "go together")
    assert.include(
      refusal({ BUNDLES_OPERATOR_WEBHOOK_URL: "ftp://ops.example", BUNDLES_OPERATOR_WEBHOOK_SECRET: secret }),
      "http or https"
    )
    assert.include(
      refusal({ BUNDLES_OPERATOR_WEBHOOK_URL: "https://ops.example", BUNDLES_OPERATOR_WEBHOOK_SECRET: "short!" }),
      "base64"
    )
  })
})
