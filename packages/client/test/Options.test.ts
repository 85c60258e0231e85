/**
 * What the client refuses before any request (a key must never travel over plain HTTP to
 * another machine), the version it announces, and the money helpers.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import {
  BundlesClient,
  ClientOptionsError,
  ConfigurationError,
  createClient,
  formatCedis,
  formatGhs,
  isLoopback,
  parseCedis,
  VERSION
} from "../src/index.js"

const refused = (options: Parameters<typeof createClient>[0]) => {
  try {
    createClient(options)
  } catch (error) {
    assert.instanceOf(error, ConfigurationError)
    return (error as ConfigurationError).message
  }
  throw new Error(`accepted ${JSON.stringify(options)}`)
}

describe("base URL", () => {
  it("refuses plain HTTP to any host but this machine", () => {
    for (const baseUrl of ["http://api.example.com/api/v1", "http://10.0.0.1", "http://128.0.0.1", "http://[::2]"]) {
      assert.include(refused({ apiKey: "k", baseUrl }), "https:", baseUrl)
    }
    for (const baseUrl of ["ftp://127.0.0.1", "file:///etc/passwd", "ws://localhost"]) {
      assert.include(refused({ apiKey: "k", baseUrl }), "https:", baseUrl)
    }
  })

  it("allows HTTPS anywhere and plain HTTP to loopback hosts", () => {
    for (
      const baseUrl of [
        "https://api.example.com/api/v1",
        "http://localhost:8080",
        "http://app.localhost",
        "http://127.0.0.1:8080/api/v1",
        "http://127.10.20.30",
        "http://[::1]:8080",
        "http://[::ffff:127.0.0.1]"
      ]
    ) {
      assert.doesNotThrow(() => createClient({ apiKey: "k", baseUrl }), baseUrl)
    }
    assert.isTrue(isLoopback("LOCALHOST"))
    assert.isFalse(isLoopback("localhost.example.com"))
    assert.isFalse(isLoopback("127.0.0.1.nip.io"))
  })

  it("refuses what cannot be a base URL, a missing key and out-of-range numbers", () => {
    assert.include(refused({ apiKey: "k", baseUrl: "not a url" }), "not a URL")
    assert.include(refused({ apiKey: "k", baseUrl: "https://u:p@api.example.com" }), "user name")
    assert.include(refused({ apiKey: "k", baseUrl: "https://api.example.com/?x=1" }), "query")
    assert.include(refused({ apiKey: " ", baseUrl: "https://api.example.com" }), "apiKey")
    assert.include(refused({ apiKey: "k", baseUrl: "https://a.example", timeout: 0 }), "timeout")
    assert.include(refused({ apiKey: "k", baseUrl: "https://a.example", retry: { maxAttempts: 0 } }), "maxAttempts")
    assert.include(refused({ apiKey: "k", baseUrl: "https://a.example", retry: { maxWait: -1 } }), "maxWait")
    assert.include(refused({ apiKey: "k", baseUrl: "https://a.example", userAgent: "bad\nagent" }), "userAgent")
  })

  it("refuses a per-call timeout that is not a positive whole number", async () => {
    const client = createClient({ apiKey: "k", baseUrl: "http://127.0.0.1:9" })
    await expect(client.balance({ timeout: 0 })).rejects.toThrow(ConfigurationError)
    await expect(client.networks({ timeout: 1.5 })).rejects.toThrow(ConfigurationError)
  })

  it("the Effect face's layer fails with ClientOptionsError", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.provide(BundlesClient, BundlesClient.layer({ apiKey: "k", baseUrl: "http://api.example.com" }))
    )
    assert.isTrue(Exit.isFailure(exit))
    if (Exit.isFailure(exit)) {
      expect(exit.cause).toMatchObject({ _tag: "Fail", error: { _tag: "ClientOptionsError" } })
      assert.instanceOf((exit.cause as any).error, ClientOptionsError)
    }
  })
})

describe("version", () => {
  it("is the package's version", () => {
    const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    assert.strictEqual(VERSION, pkg.version)
  })
})

describe("money", () => {
  it("parses cedis text and JSON numbers into pesewas exactly, and formats them back", () => {
    assert.strictEqual(parseCedis("5.50"), 550n)
    assert.strictEqual(parseCedis("5.5"), 550n)
    assert.strictEqual(parseCedis(10.8), 1080n)
    assert.strictEqual(parseCedis(0.29), 29n)
    assert.strictEqual(parseCedis("-0.25"), -25n)
    assert.strictEqual(formatCedis(1080n), "10.80")
    assert.strictEqual(formatGhs(5n), "GHS 0.05")
    for (const bad of ["5.555", "abc", "", "1e3", 0.1 + 0.2, Number.NaN, Infinity]) {
      assert.throws(() => parseCedis(bad), RangeError, undefined, String(bad))
    }
  })
})
