/**
 * Bodies: well-formed JSON that does not decode, endpoint by endpoint.
 */
import { Account } from "@databundle/contract"
import { Schema } from "effect"
import fc from "fast-check"
import { clip } from "./Probe.js"
import {
  adjustBases,
  badEnum,
  badName,
  badNonZeroCedis,
  badNote,
  badPhoneText,
  badPositiveCedis,
  badPriceGroupText,
  badReferenceText,
  badString,
  createBases,
  fundBases,
  goodPhone,
  goodReference,
  junk,
  PRICE_GROUP,
  RawJson,
  rejects,
  resolveBases,
  toJson,
  wrongType
} from "./Values.js"
import { EVENT_TYPES, WALLETS, type World } from "./World.js"

/** A JSON body that is well formed but does not decode: what it breaks, and its text. */
export interface BrokenBody {
  readonly fault: string
  readonly text: string
}

export interface FieldSpec {
  readonly name: string
  readonly required: boolean
  readonly bad: fc.Arbitrary<unknown>
}

export const hugeString = fc.tuple(fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.integer({ min: 5_000, max: 50_000 })).map((
  [unit, length]
) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length))

/** Unknown fields and a `__proto__`, added to bodies that are bad anyway. */
export const extraFields = fc.record({
  fields: fc.dictionary(fc.stringMatching(/^x_[a-z]{1,8}$/), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
  proto: fc.boolean()
})

/** A base object with at least one field broken: given a bad value, or left out when required. */
export const breakFields = (base: fc.Arbitrary<Record<string, unknown>>, fields: ReadonlyArray<FieldSpec>) =>
  fc.tuple(
    base,
    fc.uniqueArray(fc.constantFrom(...fields), { minLength: 1, maxLength: fields.length, selector: (f) => f.name }),
    fc.tuple(...fields.map((f) => f.bad)),
    fc.array(fc.boolean(), { minLength: fields.length, maxLength: fields.length }),
    // Now and then one broken field gets a huge string, which no field of the contract accepts.
    fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(fc.nat(), hugeString) }),
    extraFields
  ).map(([base, broken, bads, drop, huge, extra]): BrokenBody => {
    const body: Record<string, unknown> = { ...extra.fields, ...base }
    const faults: Array<string> = []
    const hugeField = huge === null ? undefined : broken[huge[0] % broken.length]
    fields.forEach((field, i) => {
      if (!broken.includes(field)) return
      const bad = field === hugeField ? huge![1] : bads[i]
      if (field.required && drop[i] && field !== hugeField) {
        delete body[field.name]
        faults.push(`${field.name} missing`)
      } else {
        body[field.name] = bad
        faults.push(`${field.name} = ${clip(toJson(bad), 40)}`)
      }
    })
    const text = toJson(body)
    return {
      fault: faults.join(", "),
      text: extra.proto ? text.replace(/^\{/, `{"__proto__":{"success":true,"admin":true},`).replace(/,}$/, "}") : text
    }
  })

/** A body that is not a JSON object at all. */
export const notAnObject = fc.constantFrom("[]", "[{}]", "\"order\"", "42", "null", "true", "0").map((
  text
): BrokenBody => ({
  fault: `the body is ${text}`,
  text
}))

export const withNonObjects = (bodies: fc.Arbitrary<BrokenBody>) =>
  fc.oneof({ weight: 6, arbitrary: bodies }, { weight: 1, arbitrary: notAnObject })

export const placeBody = (w: World) =>
  withNonObjects(breakFields(
    fc.record({ bundle_id: fc.constantFrom(...w.buyable), phone_number: goodPhone, reference: goodReference }, {
      requiredKeys: ["bundle_id", "phone_number"]
    }),
    [
      {
        name: "bundle_id",
        required: true,
        bad: fc.oneof(
          wrongType("number"),
          fc.constantFrom<unknown>(0, -1, 1.5, 1.234, 2_147_483_648, 1e20, new RawJson("1e400"), new RawJson("-0")),
          fc.integer({ min: -2_147_483_648, max: 0 }),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
          // Well formed but no such bundle.
          fc.integer({ min: w.maxBundleId + 1, max: 2_147_483_647 })
        )
      },
      { name: "phone_number", required: true, bad: fc.oneof(badPhoneText, wrongType("string")) },
      { name: "reference", required: false, bad: fc.oneof(badReferenceText, wrongType("string")) }
    ]
  ))

export const createBody = (w: World) =>
  withNonObjects(breakFields(fc.constantFrom(...createBases), [
    { name: "name", required: true, bad: badName },
    {
      name: "price_group",
      required: false,
      bad: fc.oneof(badPriceGroupText(w.priceGroups), wrongType("string").filter((v) => v !== null))
    }
  ]))

export const goodLimits = fc.record({
  all: fc.option(fc.integer({ min: 1, max: 1_000_000 })),
  orders: fc.option(fc.integer({ min: 1, max: 1_000_000 })),
  balance: fc.option(fc.integer({ min: 1, max: 1_000_000 }))
}, { requiredKeys: [] })

export const badLimits = fc.oneof(
  fc.constantFrom<unknown>(null, "x", 1, [], true),
  fc.tuple(
    fc.constantFrom("all", "orders", "balance"),
    fc.constantFrom<unknown>(0, -1, 1.5, 1_000_001, "10", true, [], {}, new RawJson("1e400"))
  ).map(([scope, value]) => ({ [scope]: value }))
)

export const updateBody = (w: World) =>
  withNonObjects(breakFields(
    fc.record({
      name: fc.string({ minLength: 1, maxLength: 100 }),
      price_group: fc.constantFrom(null, ...w.priceGroups),
      status: fc.constantFrom("active", "suspended"),
      webhook_url: fc.constantFrom(null, "https://example.com/hook", "http://127.0.0.1:9/x"),
      rotate_webhook_secret: fc.boolean(),
      limits: goodLimits,
      agent_id: fc.constant(null),
      referred_by: fc.constant(null)
    }, { requiredKeys: [] }),
    [
      { name: "name", required: false, bad: badName },
      {
        name: "price_group",
        required: false,
        bad: fc.oneof(badPriceGroupText(w.priceGroups), wrongType("string").filter((v) => v !== null))
      },
      { name: "status", required: false, bad: badEnum(["active", "suspended"]) },
      {
        name: "webhook_url",
        required: false,
        bad: fc.oneof(
          fc.constantFrom("ftp://example.com", "javascript:alert(1)", "not a url", "", "//example.com", "http//x"),
          fc.string({ minLength: 2030, maxLength: 2100 }).map((s) => `https://example.com/${encodeURIComponent(s)}`),
          junk,
          wrongType("string").filter((v) => v !== null)
        ).filter(rejects(Schema.NullOr(Account.WebhookUrl)))
      },
      { name: "rotate_webhook_secret", required: false, bad: wrongType("boolean") },
      { name: "limits", required: false, bad: badLimits },
      ...(["agent_id", "referred_by"] as const).map((name) => ({
        name,
        required: false,
        bad: fc.constantFrom<unknown>(0, -1, 1.5, "1", true, [], {}, 2_147_483_648)
      }))
    ]
  ))

export const walletField = { name: "wallet", required: false, bad: badEnum(WALLETS) }

/** The optional `mode` of a movement or a key. */
export const modeField = { name: "mode", required: false, bad: badEnum(["live", "test"]) }

export const fundBody = withNonObjects(breakFields(fc.constantFrom(...fundBases), [
  { name: "amount", required: true, bad: badPositiveCedis },
  walletField,
  { name: "note", required: false, bad: badNote },
  modeField
]))

export const adjustBody = withNonObjects(breakFields(fc.constantFrom(...adjustBases), [
  { name: "amount", required: true, bad: badNonZeroCedis },
  walletField,
  { name: "note", required: true, bad: fc.oneof(fc.constant(""), badNote) },
  modeField
]))

export const resolveBody = withNonObjects(breakFields(fc.constantFrom(...resolveBases), [
  { name: "status", required: true, bad: badEnum(["successful", "failed"]) },
  { name: "note", required: false, bad: fc.oneof(fc.constant(""), badNote) }
]))

/** The body of POST /wallet/transfers with one field broken. */
export const transferBody = withNonObjects(breakFields(
  fc.constantFrom<Record<string, unknown>>({ from: "agent", amount: 0.1 }, { from: "referral", amount: 12.5 }),
  [
    { name: "from", required: true, bad: badEnum(["referral", "agent"]) },
    { name: "amount", required: true, bad: badPositiveCedis }
  ]
))

/** The body of PUT /admin/v1/commissions with its rate broken or missing. */
export const commissionsBody = withNonObjects(breakFields(
  fc.constantFrom<Record<string, unknown>>({ referral_percent: 0 }),
  [{
    name: "referral_percent",
    required: true,
    bad: fc.oneof(
      fc.constantFrom<unknown>(-1, 100.01, 101, 2.345, 1e21, "2", null, true, [], {}, new RawJson("1e400")),
      wrongType("number")
    )
  }]
))

/** The body of POST /events/test with its type broken or missing. */
export const triggerBody = withNonObjects(breakFields(fc.constantFrom({ type: "order.successful" }), [
  { name: "type", required: true, bad: badEnum(EVENT_TYPES) }
]))

/** A catalogue sync from the upstreams with one field broken. */
export const catalogSyncBody = withNonObjects(breakFields(
  fc.constantFrom<Record<string, unknown>>({}, { markup: "8%" }, { markup: "12.5%", dry_run: true }),
  [
    {
      name: "upstream",
      required: false,
      bad: fc.oneof(badString((s) => /^[a-z0-9][a-z0-9_-]{0,31}$/.test(s), fc.constant("Alpha!")), wrongType("string"))
    },
    {
      name: "markup",
      required: false,
      bad: fc.oneof(
        badString((s) => /^\d{1,4}(\.\d{1,2})?%$/.test(s), fc.constantFrom("8", "8.123%", "-1%", "x%")),
        wrongType("string")
      )
    },
    { name: "price_groups", required: false, bad: fc.oneof(fc.constant({ agent: "5" }), wrongType("object")) },
    { name: "dry_run", required: false, bad: wrongType("boolean") }
  ]
))

/** The catalogue export with one thing in it broken. */
export const catalogBody = (w: World): fc.Arbitrary<BrokenBody> => {
  const networkFields: Record<string, fc.Arbitrary<unknown>> = {
    slug: fc.oneof(badString((s) => /^[a-z0-9][a-z0-9-]{0,31}$/.test(s)), wrongType("string")),
    name: fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 200 }), wrongType("string")),
    color: fc.oneof(
      badString((s) => /^#[0-9A-Fa-f]{6}$/.test(s), fc.constantFrom("red", "#FFF", "#GGGGGG")),
      wrongType("string")
    ),
    delivery: fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 200 })),
    active: wrongType("boolean"),
    bundles: fc.constantFrom<unknown>(null, "x", {}, 1)
  }
  const bundleFields: Record<string, fc.Arbitrary<unknown>> = {
    key: fc.oneof(
      badString((s) => /^[a-z0-9][a-z0-9_.-]{0,63}$/.test(s), fc.constantFrom("MTN-1GB", "a b")),
      wrongType("string")
    ),
    size: fc.oneof(fc.constant(""), fc.string({ minLength: 33, maxLength: 60 })),
    name: fc.oneof(fc.constant(""), fc.string({ minLength: 101, maxLength: 200 })),
    badge: fc.oneof(fc.string({ minLength: 101, maxLength: 200 }), wrongType("string")),
    active: wrongType("boolean"),
    price: badPositiveCedis,
    prices: fc.oneof(
      fc.constantFrom<unknown>("x", [], 1),
      fc.tuple(badPriceGroupText([]).filter((s) => !PRICE_GROUP.test(s)), fc.constant(1)).map(([g, p]) => ({ [g]: p })),
      badPositiveCedis.map((p) => ({ [w.priceGroups[0]!]: p }))
    )
  }
  const clone = () => JSON.parse(JSON.stringify(w.catalog)) as { price_groups: Array<unknown>; networks: Array<any> }
  const top = fc.constantFrom<readonly [string, (c: any) => void]>(
    ...([
      ["networks missing", (c: any) => delete c.networks],
      ["networks is not an array", (c: any) => (c.networks = { mtn: c.networks[0] })],
      ["networks is null", (c: any) => (c.networks = null)],
      ["101 networks", (c: any) => (c.networks = Array.from({ length: 101 }, () => c.networks[0]))],
      ["price_groups is not an array", (c: any) => (c.price_groups = "retail")],
      ["a price group name is invalid", (c: any) => c.price_groups.push("Not A Group")],
      ["a network is not an object", (c: any) => c.networks.push("glo")],
      ["501 bundles", (c: any) => (c.networks[0].bundles = Array.from({ length: 501 }, () => c.networks[0].bundles[0]))]
    ] as Array<readonly [string, (c: any) => void]>)
  ).map(([fault, mutate]): BrokenBody => {
    const c = clone()
    mutate(c)
    return { fault, text: JSON.stringify(c) }
  })
  const network = fc.tuple(
    fc.nat(),
    fc.constantFrom(...Object.keys(networkFields)).chain((f) => fc.tuple(fc.constant(f), networkFields[f]!))
  ).map(([n, [field, value]]): BrokenBody => {
    const c = clone()
    const i = n % c.networks.length
    c.networks[i][field] = value
    return { fault: `networks[${i}].${field} = ${clip(toJson(value), 40)}`, text: toJson(c) }
  })
  const bundle = fc.tuple(
    fc.nat(),
    fc.nat(),
    fc.constantFrom(...Object.keys(bundleFields)).chain((f) => fc.tuple(fc.constant(f), bundleFields[f]!))
  ).map(([n, b, [field, value]]): BrokenBody => {
    const c = clone()
    const i = n % c.networks.length
    const j = b % c.networks[i].bundles.length
    c.networks[i].bundles[j][field] = value
    return { fault: `networks[${i}].bundles[${j}].${field} = ${clip(toJson(value), 40)}`, text: toJson(c) }
  })
  return withNonObjects(fc.oneof(top, network, bundle))
}
