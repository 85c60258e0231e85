/**
 * Requests that decode but that the state refuses: no such bundle, account, key or order; no
 * money; an order already settled.
 */
import { Account as AccountContract, Money, Phone, Wallet } from "@databundle/contract"
import { Schema } from "effect"
import fc from "fast-check"
import type { BrokenBody } from "./Bodies.js"
import { credentials, validCredentials } from "./Credentials.js"
import { type Api, endpointsOf, segment } from "./Endpoints.js"
import type { Method, Probe } from "./Probe.js"
import { request } from "./Requests.js"
import { goodPhone, goodReference, inIdRange, rejects } from "./Values.js"
import { type Account, WALLETS, type World } from "./World.js"

/** Requests that decode but that the state refuses: no such bundle, account, key or order; no money; settled. */
export const refusedByState = (w: World, api: Api): fc.Arbitrary<Probe> => {
  const endpoints = endpointsOf(w)
  const at = (method: Method, path: string) =>
    endpoints.find((e) => e.api === api && e.method === method && e.path === path)!
  const values = (values: Record<string, string | number>) => ({
    values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, segment(String(v))])),
    fault: ""
  })
  const json = (fault: string, value: unknown): BrokenBody => ({ fault, text: JSON.stringify(value) })
  const unknownAccount = fc.oneof(
    fc.integer({ min: Math.max(...w.accountIds) + 1, max: 2_147_483_647 }),
    // Past the database's 32-bit ids.
    fc.constantFrom(2_147_483_648, 4_294_967_296, 99_999_999_999, Number.MAX_SAFE_INTEGER)
  )
  const unknownOrder = fc.stringMatching(/^ORD-[0-9A-Z]{12}$/).filter((n) =>
    ![...w.richOrders, ...w.otherOrders].some((o) => o.orderNumber === n)
  )
  const admin = validCredentials(w, "admin")
  if (api === "public") {
    const place = at("POST", "/orders")
    const key = (account: Account) => credentials("", { "x-api-key": account.key })
    return fc.oneof(
      fc.tuple(fc.constantFrom(...w.unbuyable), goodPhone).map(([bundle, phone]) =>
        request(place, {
          fault: `bundle ${bundle} cannot be bought`,
          params: values({}),
          credentials: key(w.rich),
          body: json("", { bundle_id: bundle, phone_number: phone }),
          expect: [400]
        })
      ),
      fc.tuple(fc.integer({ min: w.maxBundleId + 1, max: 2_147_483_647 }), goodPhone).map(([bundle, phone]) =>
        request(place, {
          fault: `no bundle ${bundle}`,
          params: values({}),
          credentials: key(w.rich),
          body: json("", { bundle_id: bundle, phone_number: phone }),
          expect: [422]
        })
      ),
      fc.tuple(fc.constantFrom(...w.buyable), goodPhone, fc.option(goodReference)).map(([bundle, phone, reference]) =>
        request(place, {
          fault: "an empty wallet",
          params: values({}),
          credentials: key(w.broke),
          body: json("", { bundle_id: bundle, phone_number: phone, ...(reference === null ? {} : { reference }) }),
          expect: [400],
          insufficient: true
        })
      ),
      fc.tuple(fc.constantFrom(...w.richOrders), fc.constantFrom(...w.buyable), goodPhone, fc.boolean())
        .filter(([o, bundle, phone, sameBundle]) =>
          // Both forms of one number are the same phone.
          sameBundle ? Phone.nationalDigits(o.phone) !== Phone.nationalDigits(phone) : o.bundleId !== bundle
        )
        .map(([o, bundle, phone, sameBundle]) =>
          request(place, {
            fault: `reference ${o.reference} reused with another ${sameBundle ? "phone number" : "bundle"}`,
            params: values({}),
            credentials: key(w.rich),
            body: json("", {
              bundle_id: sameBundle ? o.bundleId : bundle,
              phone_number: sameBundle ? phone : o.phone,
              reference: o.reference
            }),
            expect: [422]
          })
        ),
      fc.tuple(
        fc.constantFrom(w.rich, w.other, w.broke),
        fc.constantFrom("referral", "agent"),
        fc.bigInt({ min: 1n, max: 100_000n })
      ).map(([account, wallet, over]) =>
        request(at("POST", "/wallet/transfers"), {
          fault: `a transfer of more than the ${wallet} wallet holds`,
          params: values({}),
          credentials: key(account),
          body: json("", {
            from: wallet,
            amount: Number(Money.formatCedis(w.balances.get(`${account.id}:${wallet}`)! + over))
          }),
          expect: [400],
          insufficient: true
        })
      )
    )
  }
  const overdraw = fc.tuple(
    fc.constantFrom(w.rich, w.other, w.broke),
    fc.constantFrom(...WALLETS),
    fc.bigInt({ min: 1n, max: 100_000n })
  ).map(([account, wallet, over]) => {
    const amount = -(w.balances.get(`${account.id}:${wallet}`)! + over)
    return request(at("POST", "/accounts/:account_id/wallet/adjust"), {
      fault: `an adjustment below 0 of the ${wallet} wallet`,
      params: values({ account_id: account.id }),
      credentials: admin,
      body: json("", { amount: Number(Money.formatCedis(amount)), wallet, note: "fuzz: more than there is" }),
      expect: [400],
      insufficient: true
    })
  })
  return fc.oneof(
    overdraw,
    fc.tuple(fc.constantFrom(...w.settledOrders), fc.constantFrom("successful", "failed")).filter(([order, status]) =>
      status === "successful" || w.failedOrders.includes(order)
    ).map(([order, status]) =>
      request(at("POST", "/orders/:order_number/resolve"), {
        fault: "the order is already settled",
        params: values({ order_number: order }),
        credentials: admin,
        body: json("", { status }),
        expect: [409]
      })
    ),
    fc.tuple(unknownOrder, fc.constantFrom("successful", "failed")).map(([order, status]) =>
      request(at("POST", "/orders/:order_number/resolve"), {
        fault: "no such order",
        params: values({ order_number: order }),
        credentials: admin,
        body: json("", { status }),
        expect: [404]
      })
    ),
    fc.tuple(
      unknownAccount,
      // Any text: the contract's free-text rules (no control or bidi characters, no lone
      // surrogates, something visible) refuse some with a 422 before the account is looked up;
      // other text reaches the lookup: 404.
      fc.oneof(
        fc.string({ unit: "binary", minLength: 1, maxLength: 100 }),
        fc.constantFrom("\u0000", "fuzz\u0000note", "\uD800", "\r\n", "\u202E")
      ),
      fc.constantFrom<readonly [Method, string, ((text: string) => [unknown, Schema.Schema<any, any>]) | undefined]>(
        ["POST", "/accounts/:account_id/wallet/fund", (text) => [
          { amount: 10, wallet: "main", note: text },
          Wallet.FundWalletPayload
        ]],
        [
          "POST",
          "/accounts/:account_id/wallet/adjust",
          (text) => [{ amount: 10, note: text }, Wallet.AdjustWalletPayload]
        ],
        [
          "PATCH",
          "/accounts/:account_id",
          (text) => [{ name: text.slice(0, 100) }, AccountContract.UpdateAccountPayload]
        ],
        ["POST", "/accounts/:account_id/keys", undefined],
        ["GET", "/accounts/:account_id", undefined],
        ["GET", "/accounts/:account_id/ledger", undefined]
      )
    ).map(([account, text, [method, path, body]]) => {
      const [payload, schema] = body === undefined ? [undefined, undefined] : body(text)
      const acceptedText = schema !== undefined && !rejects(schema)(payload)
      return request(at(method, path), {
        fault: `no account ${account}`,
        params: values({ account_id: account }),
        credentials: admin,
        body: payload === undefined ? undefined : json("", payload),
        // The gateway refuses a lone surrogate anywhere in the JSON text before routing: 422.
        // Past that, a path parameter that does not decode (an id past the database's range)
        // is a 404 before the payload is decoded.
        expect: payload === undefined
          ? [404]
          : /\p{Cs}/u.test(text)
          ? [422]
          : acceptedText || !inIdRange(account)
          ? [404]
          : [422]
      })
    }),
    fc.constantFrom(...[...w.keyIds].flatMap(([owner, keys]) => keys.map((key) => [owner, key] as const)))
      .chain(([owner, key]) =>
        fc.constantFrom(...w.accountIds.filter((a) => a !== owner)).map((account) =>
          request(at("DELETE", "/accounts/:account_id/keys/:key_id"), {
            fault: `key ${key} belongs to account ${owner}, not ${account}`,
            params: values({ account_id: account, key_id: key }),
            credentials: admin,
            expect: [404]
          })
        )
      ),
    fc.tuple(unknownAccount, fc.option(fc.constantFrom("pending", "successful", "failed"))).map(([account, status]) =>
      request(at("GET", "/orders"), {
        fault: `orders of account ${account}, which does not exist`,
        params: values({}),
        credentials: admin,
        query: `account_id=${account}${status === null ? "" : `&status=${status}`}`,
        // An empty list, or a 422 for an id no account can have.
        expect: [200, 422]
      })
    ),
    fc.stringMatching(/^zz[a-z0-9]{1,20}$/).map((group) =>
      request(at("POST", "/accounts"), {
        fault: `no price group ${group}`,
        params: values({}),
        credentials: admin,
        body: json("", { name: "Fuzz", price_group: group }),
        expect: [422]
      })
    )
  )
}
