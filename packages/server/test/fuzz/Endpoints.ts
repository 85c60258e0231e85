/**
 * Endpoints: every endpoint of both APIs, read from the API itself (`HttpApi.reflect`), so a new
 * endpoint is fuzzed without anyone remembering to; and the data fuzzing needs for those that
 * take path parameters, a body or a query, keyed by `METHOD /prefix/path-template`, which
 * `coverageProblems` holds to the API.
 */
import { EndpointPolicy, Event, Page, Phone } from "@databundle/contract"
import { HttpApi } from "@effect/platform"
import { Option, SchemaAST as AST } from "effect"
import fc from "fast-check"
import { ServerApi } from "../../src/ServerApi.js"
import {
  adjustBody,
  type BrokenBody,
  catalogBody,
  catalogSyncBody,
  commissionsBody,
  createBody,
  fundBody,
  placeBody,
  resolveBody,
  transferBody,
  triggerBody,
  updateBody
} from "./Bodies.js"
import { consoleData } from "./ConsoleData.js"
import {
  changePasswordBody,
  dashboardPlaceBody,
  declineBody,
  emailBody,
  keyBody,
  paymentBody,
  paymentCodeBody,
  registerBody,
  resetBody,
  signInBody,
  testEventBody,
  verifyBody,
  webhookBody
} from "./DashboardBodies.js"
import { clip, type Method } from "./Probe.js"
import {
  badIdText,
  badIntText,
  badPhoneText,
  badReferenceText,
  ENUM_MISSES,
  existsAmong,
  goodPhone,
  goodReference,
  junk,
  rejects
} from "./Values.js"
import { ADMIN, CONSOLE, DASHBOARD, EVENT_TYPES, PUBLIC, WALLETS, type World } from "./World.js"

export type Api = "public" | "admin" | "dashboard" | "console"

/** Path parameters as encoded segments, with what is wrong with them when they are bad. */
export interface Params {
  readonly values: Readonly<Record<string, string>>
  readonly fault: string
}

export interface QueryParam {
  readonly name: string
  readonly good: fc.Arbitrary<string>
  readonly bad: fc.Arbitrary<string>
  /** Well formed but odd values that may get a 200 (an unknown account), besides the 422. */
  readonly odd?: fc.Arbitrary<string>
}

export interface Endpoint {
  readonly api: Api
  readonly method: Method
  /** The template, after the API prefix: `/networks/:network_id/bundles`. */
  readonly path: string
  /** What the contract declares of it: key, parameters, body limit, rate-limit scopes. */
  readonly declared: Declared
  /** Parameters that name existing things (never used without another fault). */
  readonly good: fc.Arbitrary<Params>
  /** Parameters that name nothing: 404. */
  readonly bad: fc.Arbitrary<Params>
  readonly body: fc.Arbitrary<BrokenBody> | undefined
  readonly query: ReadonlyArray<QueryParam> | undefined
}

export const noParams: fc.Arbitrary<Params> = fc.constant({ values: {}, fault: "" })

/** Percent-encoding of any string (a lone surrogate becomes U+FFFD first). */
export const encode = (raw: string) =>
  encodeURIComponent(raw.replace(/[\uD800-\uDFFF]/g, (c, i: number, s: string) => {
    const code = c.charCodeAt(0)
    const pair = code < 0xdc00 ? /[\uDC00-\uDFFF]/.test(s[i + 1] ?? "") : /[\uD800-\uDBFF]/.test(s[i - 1] ?? "")
    return pair ? c : "\uFFFD"
  }))

/** A path segment as sent: percent-encoded, except dot segments, which are sent as they are. */
export const segment = (raw: string) => raw === "." || raw === ".." ? raw : encode(raw)

export const badId = (existing: ReadonlyArray<number>) =>
  fc.oneof(
    { weight: 5, arbitrary: badIdText },
    { weight: 1, arbitrary: fc.constantFrom(".", "..") },
    // Well formed but unknown.
    { weight: 2, arbitrary: fc.integer({ min: Math.max(...existing) + 1, max: 2_147_483_647 }).map(String) }
  ).filter((s) => s.length > 0 && !existsAmong(new Set(existing))(s))

export const badOrderNumber = (visible: ReadonlyArray<string>) =>
  fc.oneof(junk, fc.stringMatching(/^ORD-[0-9A-Z]{12}$/), junk.map((s) => `ORD-${s}`), fc.constantFrom(".", ".."))
    .filter((s) => s.length > 0 && !visible.includes(s) && !visible.includes(s.trim()))

export const oneParam = (name: string, values: fc.Arbitrary<string>, what: string): fc.Arbitrary<Params> =>
  values.map((raw) => ({ values: { [name]: segment(raw) }, fault: `${what} ${JSON.stringify(clip(raw, 60))}` }))

export const pageParams = (maxPerPage: number): ReadonlyArray<QueryParam> => [
  { name: "page", good: fc.integer({ min: 1, max: 3 }).map(String), bad: badIntText(1, 1_000_000) },
  { name: "per_page", good: fc.integer({ min: 1, max: maxPerPage }).map(String), bad: badIntText(1, maxPerPage) }
]

/** The sides of an account the dashboard acts on. */
const MODES = ["live", "test"]

export const enumParam = (name: string, values: ReadonlyArray<string>): QueryParam => ({
  name,
  good: fc.constantFrom(...values),
  bad: ENUM_MISSES(values)
})

export const DATES = [
  "2026-02-30",
  "2026-13-01",
  "2026-00-10",
  "2026-1-1",
  "yesterday",
  "1700000000",
  "2026-11-01T08:00:00"
]
export const badDate = fc.oneof(
  fc.constantFrom(...DATES, "2026-11-01T25:00:00Z", "2026-11-01 08:00:00Z", "2026-11-01Z", "0000-00-00", "+2026-11-01"),
  junk
).filter(rejects(Page.DateBound))
export const dateParam = (name: string): QueryParam => ({
  name,
  good: fc.constantFrom("2026-01-01", "2026-11-01T08:00:00Z", "2020-02-29"),
  bad: badDate
})

/** An endpoint as the server's API declares it. */
export interface Declared {
  /** `METHOD /prefix/path-template`, the key of its fuzzing data. */
  readonly key: string
  readonly api: Api
  readonly method: Method
  /** The whole template, prefix included. */
  readonly template: string
  readonly params: ReadonlyArray<string>
  readonly hasPayload: boolean
  readonly query: ReadonlyArray<string>
  readonly policy: EndpointPolicy.Policy
  /** Whether it needs credentials (the dashboard's forms before a session do not). */
  readonly authenticated: boolean
}

/** Every endpoint of the server's API (public and admin), read from the API itself. */
export const DECLARED: ReadonlyArray<Declared> = (() => {
  const declared: Array<Declared> = []
  HttpApi.reflect(ServerApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations, middleware }) => {
      const query = Option.match(endpoint.urlParamsSchema, {
        onNone: () => [],
        onSome: (schema) => AST.getPropertySignatures(schema.ast).map((p) => String(p.name))
      })
      declared.push({
        key: `${endpoint.method} ${endpoint.path}`,
        api: endpoint.path.startsWith(`${ADMIN}/`)
          ? "admin"
          : endpoint.path.startsWith(`${DASHBOARD}/`)
          ? "dashboard"
          : endpoint.path.startsWith(`${CONSOLE}/`)
          ? "console"
          : "public",
        method: endpoint.method as Method,
        template: endpoint.path,
        params: endpoint.path.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1)),
        hasPayload: Option.isSome(endpoint.payloadSchema),
        query,
        policy: EndpointPolicy.fromAnnotations(mergedAnnotations),
        authenticated: middleware.size > 0
      })
    }
  })
  return declared
})()

/** What fuzzing an endpoint needs beyond its declaration: parameters, bodies and queries to send. */
export interface Data {
  /** Required when the path has parameters. */
  readonly good?: fc.Arbitrary<Params>
  /** Required when the path has parameters. */
  readonly bad?: fc.Arbitrary<Params>
  /** Required when the endpoint takes a payload. */
  readonly body?: fc.Arbitrary<BrokenBody>
  /** Required, one per declared query parameter, when it takes any. */
  readonly query?: ReadonlyArray<QueryParam>
}

/** The fuzzing data of every endpoint that needs some, by `METHOD /prefix/path-template`. */
const dataOf = (w: World): Readonly<Record<string, Data>> => {
  const accounts = [w.rich.id, w.other.id, w.broke.id]
  const allOrders = [...w.richOrders, ...w.otherOrders].map((o) => o.orderNumber)
  const account = (values: ReadonlyArray<number>) =>
    oneParam("account_id", fc.constantFrom(...values).map(String), "account")
  const badAccount = oneParam("account_id", badId(w.accountIds), "no account")
  return {
    [`GET ${PUBLIC}/networks/:network_id/bundles`]: {
      good: oneParam("network_id", fc.constantFrom(...w.activeNetworks).map(String), "network"),
      bad: oneParam(
        "network_id",
        fc.oneof(badId(w.activeNetworks), fc.constantFrom(...w.inactiveNetworks).map(String)),
        "no active network"
      )
    },
    [`POST ${PUBLIC}/orders`]: { body: placeBody(w) },
    [`GET ${PUBLIC}/orders/:order_number`]: {
      good: oneParam("order_number", fc.constantFrom(...w.richOrders.map((o) => o.orderNumber)), "order"),
      bad: oneParam(
        "order_number",
        fc.oneof(
          badOrderNumber(w.richOrders.map((o) => o.orderNumber)),
          // Another account's order is not visible.
          fc.constantFrom(...w.otherOrders.map((o) => o.orderNumber))
        ),
        "no visible order"
      )
    },
    [`GET ${PUBLIC}/phone-numbers/:phone_number`]: {
      good: oneParam(
        "phone_number",
        fc.constantFrom("0241234567", "233201234567", "0281234567", "0301234567"),
        "number"
      ),
      bad: oneParam(
        "phone_number",
        fc.oneof(junk, fc.constantFrom("024123456", "02412345678", "+233241234567", "2330241234567", "0241234567 "))
          .filter((s) => s.length > 0 && !Phone.GHANA_PHONE.test(s) && !Phone.GHANA_PHONE.test(s.trim())),
        "not a Ghana number"
      )
    },
    [`GET ${PUBLIC}/orders`]: {
      query: [
        ...pageParams(Page.ACCOUNT_LISTS.max),
        enumParam("status", ["pending", "successful", "failed"]),
        { name: "reference", good: goodReference, bad: badReferenceText },
        { name: "reference_prefix", good: goodReference, bad: badReferenceText },
        { name: "phone_number", good: goodPhone, bad: badPhoneText },
        dateParam("from"),
        dateParam("to")
      ]
    },
    [`GET ${PUBLIC}/wallet/transactions`]: {
      query: [
        ...pageParams(100),
        enumParam("wallet", WALLETS),
        enumParam("reason", [
          "funding",
          "adjustment",
          "order",
          "refund",
          "commission",
          "commission_reversal",
          "transfer"
        ]),
        dateParam("from"),
        dateParam("to")
      ]
    },
    [`GET ${PUBLIC}/events`]: {
      query: [
        ...pageParams(Page.FEED.max),
        enumParam("type", EVENT_TYPES),
        {
          name: "since",
          good: fc.constantFrom("0", "1", "9223372036854775807"),
          bad: fc.oneof(
            fc.constantFrom("", "00", "01", "-1", "1.0", "1e3", " 1", "9223372036854775808", "18446744073709551615"),
            junk
          ).filter(rejects(Event.EventCursor))
        }
      ]
    },
    [`POST ${PUBLIC}/events/test`]: { body: triggerBody },
    [`POST ${PUBLIC}/wallet/transfers`]: { body: transferBody },
    [`PUT ${ADMIN}/commissions`]: { body: commissionsBody },
    [`GET ${PUBLIC}/webhooks/deliveries`]: {
      query: [
        ...pageParams(100),
        enumParam("state", ["pending", "retrying", "delivered", "abandoned"]),
        enumParam("type", EVENT_TYPES)
      ]
    },
    [`POST ${PUBLIC}/webhooks/deliveries/:delivery_id/resend`]: {
      good: oneParam("delivery_id", fc.constantFrom(...w.richEvents), "delivery"),
      bad: oneParam(
        "delivery_id",
        fc.oneof(
          junk,
          fc.stringMatching(/^evt_[0-9A-Za-z]{24}$/),
          fc.constantFrom(".", ".."),
          // Another account's delivery is not visible.
          fc.constantFrom(...w.otherEvents)
        ).filter((s) => s.length > 0 && !w.richEvents.includes(s) && !w.richEvents.includes(s.trim())),
        "no visible delivery"
      )
    },
    [`POST ${ADMIN}/accounts`]: { body: createBody(w) },
    [`GET ${ADMIN}/accounts`]: {
      query: [
        ...pageParams(100),
        enumParam("status", ["active", "suspended"]),
        {
          name: "search",
          good: fc.constantFrom("fuzz", "Ama", "024", "1"),
          bad: fc.oneof(
            fc.constant(""),
            fc.string({ minLength: 101, maxLength: 300 }),
            fc.constantFrom("a\u0000b", "\u202Eevil")
          )
        }
      ]
    },
    [`GET ${ADMIN}/accounts/:account_id`]: { good: account(w.accountIds), bad: badAccount },
    [`PATCH ${ADMIN}/accounts/:account_id`]: { good: account(accounts), bad: badAccount, body: updateBody(w) },
    [`POST ${ADMIN}/accounts/:account_id/keys`]: {
      good: account(accounts),
      bad: badAccount,
      query: [enumParam("mode", ["live", "test"])]
    },
    [`DELETE ${ADMIN}/accounts/:account_id/keys/:key_id`]: {
      good: fc.constant({ values: { account_id: String(w.rich.id), key_id: String(w.rich.keyId) }, fault: "" }),
      bad: fc.oneof(
        fc.tuple(badAccount, fc.constantFrom(...w.keyIds.get(w.rich.id)!)).map(([a, key]) => ({
          values: { ...a.values, key_id: String(key) },
          fault: a.fault
        })),
        fc.tuple(
          fc.constantFrom(...accounts),
          fc.oneof(badIdText, fc.constantFrom(...[...w.keyIds.values()].flat().map(String)))
        )
          .filter(([a, key]) => key.length > 0 && !existsAmong(new Set(w.keyIds.get(a) ?? []))(key))
          .map(([a, key]) => ({
            values: { account_id: String(a), key_id: segment(key) },
            fault: `no key ${JSON.stringify(clip(key, 60))} on account ${a}`
          }))
      )
    },
    [`POST ${ADMIN}/accounts/:account_id/wallet/fund`]: { good: account(accounts), bad: badAccount, body: fundBody },
    [`POST ${ADMIN}/accounts/:account_id/wallet/adjust`]: {
      good: account(accounts),
      bad: badAccount,
      body: adjustBody
    },
    [`GET ${ADMIN}/accounts/:account_id/ledger`]: {
      good: account(accounts),
      bad: badAccount,
      query: [...pageParams(100), enumParam("wallet", WALLETS), enumParam("mode", ["live", "test"])]
    },
    [`POST ${ADMIN}/catalog`]: { body: catalogBody(w) },
    [`POST ${ADMIN}/catalog/preview`]: { body: catalogBody(w) },
    [`POST ${ADMIN}/upstreams/catalog-sync`]: { body: catalogSyncBody },
    [`GET ${ADMIN}/orders`]: {
      query: [
        ...pageParams(100),
        enumParam("status", ["pending", "successful", "failed"]),
        {
          name: "account_id",
          good: fc.constantFrom(...w.accountIds).map(String),
          bad: badIntText(1, Number.MAX_SAFE_INTEGER),
          odd: fc.bigInt({ min: 2n ** 31n, max: 2n ** 53n - 1n }).map(String)
        },
        { name: "reference", good: goodReference, bad: badReferenceText },
        { name: "phone_number", good: goodPhone, bad: badPhoneText },
        { name: "older_than", good: fc.integer({ min: 1, max: 525_600 }).map(String), bad: badIntText(1, 525_600) },
        enumParam("sort", ["newest", "oldest"]),
        enumParam("mode", ["live", "test"])
      ]
    },
    [`GET ${ADMIN}/orders/:order_number`]: {
      good: oneParam("order_number", fc.constantFrom(...allOrders), "order"),
      bad: oneParam("order_number", badOrderNumber(allOrders), "no order")
    },
    ...dashboardData(w),
    ...paymentsAdminData(w),
    ...consoleData(w),
    [`POST ${ADMIN}/orders/:order_number/resolve`]: {
      good: oneParam("order_number", fc.constant(w.pendingOrder), "order"),
      bad: oneParam("order_number", badOrderNumber(allOrders), "no order"),
      body: resolveBody
    }
  }
}

/** The fuzzing data of the operator's payment and email endpoints. */
const paymentsAdminData = (w: World): Readonly<Record<string, Data>> => {
  const payment = oneParam("payment_number", fc.constant(w.holder.paymentNumber), "payment")
  const noPayment = oneParam(
    "payment_number",
    fc.oneof(junk, fc.stringMatching(/^PAY-[0-9A-Z]{12}$/), fc.constantFrom(".", ".."))
      .filter((s) => s.length > 0 && s !== w.holder.paymentNumber && s.trim() !== w.holder.paymentNumber),
    "no payment"
  )
  return {
    [`GET ${ADMIN}/payments`]: {
      query: [
        ...pageParams(100),
        enumParam("status", ["pending", "successful", "failed"]),
        enumParam("method", ["mtn_momo", "telecel_cash", "airteltigo_money", "manual_transfer"]),
        enumParam("reversed", ["true"]),
        dateParam("from"),
        dateParam("to"),
        {
          name: "account_id",
          good: fc.constantFrom(...w.accountIds).map(String),
          bad: badIntText(1, Number.MAX_SAFE_INTEGER),
          odd: fc.bigInt({ min: 2n ** 31n, max: 2n ** 53n - 1n }).map(String)
        }
      ]
    },
    [`GET ${ADMIN}/payments/:payment_number`]: { good: payment, bad: noPayment },
    [`POST ${ADMIN}/payments/:payment_number/approve`]: { good: payment, bad: noPayment },
    [`POST ${ADMIN}/payments/:payment_number/decline`]: { good: payment, bad: noPayment, body: declineBody },
    [`GET ${ADMIN}/emails`]: {
      query: [
        ...pageParams(100),
        { name: "to", good: fc.constant("someone@example.com"), bad: fc.string({ minLength: 255, maxLength: 400 }) }
      ]
    }
  }
}

/** The fuzzing data of the dashboard API's endpoints. */
const dashboardData = (w: World): Readonly<Record<string, Data>> => {
  const h = w.holder
  const allOrders = [...w.richOrders, ...w.otherOrders].map((o) => o.orderNumber)
  const holderKeys = w.keyIds.get(h.accountId) ?? [h.keyId]
  const otherKeys = [...w.keyIds.entries()].filter(([a]) => a !== h.accountId).flatMap(([, keys]) => keys)
  const badEvent = fc.oneof(
    junk,
    fc.stringMatching(/^evt_[0-9A-Za-z]{24}$/),
    fc.constantFrom(".", "..")
  ).filter((s) => s.length > 0 && s !== h.eventId && s.trim() !== h.eventId)
  const event = oneParam("event_id", fc.constant(h.eventId), "event")
  const noEvent = oneParam("event_id", badEvent, "no event of this account")
  return {
    [`POST ${DASHBOARD}/register`]: { body: registerBody },
    [`POST ${DASHBOARD}/email/verify`]: { body: verifyBody },
    [`POST ${DASHBOARD}/email/resend`]: { body: emailBody },
    [`POST ${DASHBOARD}/session`]: { body: signInBody },
    [`POST ${DASHBOARD}/password/forgot`]: { body: emailBody },
    [`POST ${DASHBOARD}/password/reset`]: { body: resetBody },
    [`POST ${DASHBOARD}/password`]: { body: changePasswordBody },
    [`GET ${DASHBOARD}/networks/:network_id/bundles`]: {
      good: oneParam("network_id", fc.constantFrom(...w.activeNetworks).map(String), "network"),
      bad: oneParam(
        "network_id",
        fc.oneof(badId(w.activeNetworks), fc.constantFrom(...w.inactiveNetworks).map(String)),
        "no active network"
      )
    },
    [`GET ${DASHBOARD}/home`]: { query: [enumParam("mode", MODES)] },
    [`POST ${DASHBOARD}/orders`]: { body: dashboardPlaceBody(w) },
    [`GET ${DASHBOARD}/orders`]: {
      query: [
        enumParam("mode", MODES),
        ...pageParams(Page.ACCOUNT_LISTS.max),
        enumParam("status", ["pending", "successful", "failed"]),
        { name: "reference", good: goodReference, bad: badReferenceText },
        { name: "reference_prefix", good: goodReference, bad: badReferenceText },
        { name: "phone_number", good: goodPhone, bad: badPhoneText },
        dateParam("from"),
        dateParam("to")
      ]
    },
    [`GET ${DASHBOARD}/orders/:order_number`]: {
      // The order is a live one: on the test side it is not found.
      query: [enumParam("mode", ["live"])],
      good: oneParam("order_number", fc.constant(h.orderNumber), "order"),
      bad: oneParam(
        "order_number",
        fc.oneof(badOrderNumber([h.orderNumber]), fc.constantFrom(...allOrders)),
        "no order of this account"
      )
    },
    [`GET ${DASHBOARD}/ledger`]: {
      query: [
        enumParam("mode", MODES),
        ...pageParams(Page.ACCOUNT_LISTS.max),
        enumParam("wallet", WALLETS),
        enumParam("reason", ["funding", "adjustment", "order", "refund"]),
        dateParam("from"),
        dateParam("to")
      ]
    },
    [`POST ${DASHBOARD}/payments`]: { body: paymentBody },
    [`POST ${DASHBOARD}/wallet/transfers`]: { body: transferBody },
    [`GET ${DASHBOARD}/payments`]: {
      query: [
        ...pageParams(Page.ACCOUNT_LISTS.max),
        enumParam("status", ["pending", "successful", "failed"]),
        enumParam("method", ["mtn_momo", "telecel_cash", "airteltigo_money", "manual_transfer"]),
        dateParam("from"),
        dateParam("to")
      ]
    },
    [`GET ${DASHBOARD}/payments/:payment_number`]: {
      good: oneParam("payment_number", fc.constant(h.paymentNumber), "payment"),
      bad: oneParam(
        "payment_number",
        fc.oneof(junk, fc.stringMatching(/^PAY-[0-9A-Z]{12}$/), fc.constantFrom(".", ".."))
          .filter((s) => s.length > 0 && s !== h.paymentNumber && s.trim() !== h.paymentNumber),
        "no payment of this account"
      )
    },
    [`POST ${DASHBOARD}/payments/:payment_number/otp`]: {
      good: oneParam("payment_number", fc.constant(h.paymentNumber), "payment"),
      bad: oneParam(
        "payment_number",
        fc.oneof(junk, fc.stringMatching(/^PAY-[0-9A-Z]{12}$/), fc.constantFrom(".", ".."))
          .filter((s) => s.length > 0 && s !== h.paymentNumber && s.trim() !== h.paymentNumber),
        "no payment of this account"
      ),
      body: paymentCodeBody
    },
    [`POST ${DASHBOARD}/keys`]: { body: keyBody },
    [`DELETE ${DASHBOARD}/keys/:key_id`]: {
      good: oneParam("key_id", fc.constantFrom(...holderKeys).map(String), "key"),
      bad: oneParam(
        "key_id",
        fc.oneof(badIdText, fc.constantFrom(...otherKeys.map(String)))
          .filter((k) => k.length > 0 && !existsAmong(new Set(holderKeys))(k)),
        "no key of this account"
      )
    },
    [`PUT ${DASHBOARD}/webhook`]: { body: webhookBody },
    [`GET ${DASHBOARD}/webhook/deliveries`]: {
      query: [
        ...pageParams(100),
        enumParam("state", ["pending", "retrying", "delivered", "abandoned"]),
        enumParam("type", ["order.successful", "order.failed", "wallet.funded", "wallet.debited"])
      ]
    },
    [`POST ${DASHBOARD}/webhook/test`]: { body: testEventBody },
    [`GET ${DASHBOARD}/webhook/deliveries/:event_id`]: { good: event, bad: noEvent },
    [`POST ${DASHBOARD}/webhook/deliveries/:event_id/resend`]: { good: event, bad: noEvent },
    // Off on the fuzzed server (no --demo): every request to it is a 404, as an unknown path.
    [`GET ${DASHBOARD}/demo/mailbox`]: {
      query: [{
        name: "email",
        good: fc.constant("someone@example.com"),
        bad: fc.oneof(fc.string({ maxLength: 2 }), fc.string({ minLength: 255, maxLength: 400 }))
      }]
    }
  }
}

/**
 * What is wrong with the fuzzing data: an endpoint of the API without the data it needs (its
 * path parameters, body or query parameters), data that names no endpoint, or data the
 * endpoint does not take.
 */
export const coverageProblems = (w: World): Array<string> => {
  const data = dataOf(w)
  const problems: Array<string> = []
  for (const e of DECLARED) {
    const d = data[e.key] ?? {}
    if (e.params.length > 0 && (d.good === undefined || d.bad === undefined)) {
      problems.push(`${e.key}: no good and bad path parameters`)
    }
    if (e.params.length === 0 && (d.good !== undefined || d.bad !== undefined)) {
      problems.push(`${e.key}: path parameters for a path without any`)
    }
    if (e.hasPayload !== (d.body !== undefined)) {
      problems.push(
        `${e.key}: ${e.hasPayload ? "no bad bodies for its payload" : "bodies for an endpoint without one"}`
      )
    }
    const names = (d.query ?? []).map((q) => q.name).sort().join(", ")
    if (names !== [...e.query].sort().join(", ")) {
      problems.push(`${e.key}: query parameters [${names}], declared [${[...e.query].sort().join(", ")}]`)
    }
  }
  for (const key of Object.keys(data)) {
    if (!DECLARED.some((e) => e.key === key)) problems.push(`${key}: no such endpoint in the API`)
  }
  return problems
}

/** Every endpoint of both APIs, with good and bad parameters, bodies and queries. */
export const endpointsOf = (w: World): ReadonlyArray<Endpoint> => {
  const data = dataOf(w)
  return DECLARED.map((declared): Endpoint => {
    const d = data[declared.key] ?? {}
    return {
      api: declared.api,
      method: declared.method,
      path: declared.template.slice(prefixOf(declared.api).length),
      declared,
      good: d.good ?? noParams,
      bad: d.bad ?? noParams,
      body: d.body,
      query: d.query
    }
  })
}

export const prefixOf = (api: Api) =>
  api === "public" ? PUBLIC : api === "dashboard" ? DASHBOARD : api === "console" ? CONSOLE : ADMIN

export const fill = (endpoint: Endpoint, params: Params) =>
  prefixOf(endpoint.api) + endpoint.path.replace(/:(\w+)/g, (_, name: string) => params.values[name]!)

/** The methods served at an endpoint's path. */
export const allowedAt = (endpoints: ReadonlyArray<Endpoint>, endpoint: Endpoint) =>
  endpoints.filter((other) => other.api === endpoint.api && other.path === endpoint.path).map((other) => other.method)
