/**
 * The production road answers every request exactly as the framework's own router would, with
 * the same middleware: two servers with the same history, each on its own database, one as it
 * is served (`Http.serve`: the route table's decision, each endpoint's handler called by it,
 * cached reads from memory) and one as `HttpApiBuilder.serve` serves the API, the admission an
 * API middleware and the framework's router matching every request (`Http.serveByRouter`), are sent the
 * same requests, and their answers must be the same: status, every header but the per-request
 * ones, and the body, once what names the same thing in each world is written alike (see
 * `fuzz/Roads.ts`).
 *
 * The requests: for every endpoint of the four APIs, valid and broken ones drawn from the
 * contract's own schemas (`fuzz/Schemas.ts`), then the fuzzing's bad requests of every kind
 * (wrong methods, unknown paths, bad parameters, bodies, framing and credentials). A spy on the
 * admission shows that the production road did take its shortcuts on the way; bad requests
 * sent on a connection kept alive must leave it kept or closed alike; at the end,
 * both worlds hold the same accounts, balances, ledgers and orders.
 *
 * A failure prints fast-check's seed: replay it with `FUZZ_SEED=<seed>`.
 */
import { targets } from "@databundle/core/testing"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import fc from "fast-check"
import * as Admission from "../src/Admission.js"
import * as Http from "../src/Http.js"
import { replay } from "./fuzz/Check.js"
import { endpointsOf } from "./fuzz/Endpoints.js"
import { everything } from "./fuzz/Families.js"
import { describeProbe, type Probe, probe, send, sendKeptAlive } from "./fuzz/Probe.js"
import { withNoise } from "./fuzz/Requests.js"
import { comparable, correspondences, translate } from "./fuzz/Roads.js"
import { drawAll, drawnRequests, undrawable } from "./fuzz/Schemas.js"
import { ADMIN, setup, type World } from "./fuzz/World.js"
import { ADMIN_TOKEN, testConfig } from "./Harness.js"

class Reference extends Context.Tag("test/Differential/Reference")<Reference, World>() {}
class Production extends Context.Tag("test/Differential/Production")<Production, World>() {}

const UNLIMITED = {
  BUNDLES_RATE_LIMITS: "all=1000000,orders=1000000,balance=1000000",
  BUNDLES_AUTH_FAILURE_LIMIT: "1000000",
  BUNDLES_DASHBOARD_LIMITS: "dashboard=1000000,access=1000000",
  // Pending orders stay pending for the whole run: no worker moves one world ahead of the other.
  BUNDLES_SIMULATOR_PENDING_SECONDS: "3600"
}

/** The ids of the requests admitted from memory alone, and of those answered from the catalogue's cache. */
const shortcuts = { memory: new Set<string>(), cache: new Set<string>() }

const spied = Layer.succeed(Admission.Shortcuts, (info, way) => {
  shortcuts[way].add(info.id)
})

/** A server of its own on a database of its own (a fresh build of every layer), with the world set up on it. */
const side = <I>(tag: Context.Tag<I, World>, target: (typeof targets)[number], serve: typeof Http.serve) =>
  Layer.fresh(
    Layer.effect(tag, setup).pipe(
      Layer.provide(
        serve.pipe(
          Layer.provide(spied),
          Layer.provideMerge(Http.AppLive),
          Layer.provideMerge(target.layer),
          Layer.provideMerge(NodeHttpServer.layerTest),
          Layer.provide(testConfig(UNLIMITED)),
          Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
        )
      )
    )
  )

const bothRoads = (target: (typeof targets)[number]) =>
  Layer.merge(
    side(Reference, target, Http.serveByRouter),
    side(Production, target, Http.serve)
  )

/** Sends `p` to the reference, then (translated) to the production road, and fails unless the answers agree. */
const agree = async (reference: World, production: World, p: Probe) => {
  const pairs = correspondences(reference, production)
  const routed = await send(reference.port, p)
  const answered = await send(production.port, translate(p, pairs))
  assert.isFalse(
    shortcuts.cache.has(String(routed.headers["x-request-id"])),
    "the reference answered nothing from a cache"
  )
  assert.deepStrictEqual(
    comparable(answered, pairs, true),
    comparable(routed, pairs, false),
    `the roads differ on ${describeProbe(p)}`
  )
  return answered
}

/** Every request `generator` draws, sent to both roads: the answers agree. */
const roadsAgree = (generator: (w: World) => fc.Arbitrary<Probe>, numRuns: number) =>
  Effect.gen(function*() {
    const reference = yield* Reference
    const production = yield* Production
    yield* Effect.promise(() =>
      fc.assert(fc.asyncProperty(generator(reference), (p) => agree(reference, production, p).then(() => {})), {
        numRuns,
        endOnFailure: true,
        ...replay
      })
    )
  })

const SEED = Number(process.env.FUZZ_SEED ?? 27)
const drawn = drawAll(SEED)
const TIMEOUT = 240_000

for (const target of targets) {
  describe(`the production road answers as the router on ${target.name}`, () => {
    layer(bothRoads(target), { timeout: 180_000, excludeTestServices: true })((it) => {
      it.effect("every endpoint's payload and query schema gives values to send", () =>
        Effect.gen(function*() {
          assert.deepStrictEqual(undrawable(drawn, yield* Reference), [])
        }))

      it.effect("the shortcuts are taken: cached reads from the cache, the busiest requests admitted from memory, alike", () =>
        Effect.gen(function*() {
          const reference = yield* Reference
          const production = yield* Production
          const [network] = reference.activeNetworks
          const withKey = (method: "GET" | "POST", path: string, body?: unknown) =>
            probe({
              fault: "none",
              method,
              target: `/api/v1${path}`,
              headers: {
                "x-api-key": reference.rich.key,
                ...(body === undefined ? {} : { "content-type": "application/json" })
              },
              body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
              expect: [200]
            })
          const requests = [
            [withKey("GET", "/networks"), "cache"],
            [withKey("GET", `/networks/${network}/bundles`), "cache"],
            [withKey("GET", "/balance"), "memory"],
            [withKey("GET", `/orders/${reference.richOrders[0]!.orderNumber}`), "memory"],
            [withKey("POST", "/orders", { bundle_id: reference.buyable[0], phone_number: "0241234567" }), "memory"],
            [withKey("POST", "/orders", { bundle_id: reference.buyable[0], phone_number: "12" }), "memory"],
            [withKey("GET", "/orders/ORD-000000000000"), "memory"]
          ] as const
          for (const [p, way] of requests) {
            // (The first request of a key the production road has not seen yet is admitted by a lookup.)
            yield* Effect.promise(() => agree(reference, production, p))
            const answered = yield* Effect.promise(() => agree(reference, production, p))
            assert.isTrue(
              shortcuts[way].has(String(answered.headers["x-request-id"])),
              `${p.method} ${p.target}: ${way}`
            )
          }
        }))

      for (const api of ["public", "admin", "dashboard", "console"] as const) {
        it.effect(
          `${api} API: valid and broken requests drawn from the contract's schemas`,
          () => roadsAgree((w) => withNoise(drawnRequests(w, drawn, api)), 150),
          TIMEOUT
        )
      }

      it.effect(
        "bad requests of every kind: methods, paths, parameters, queries, bodies, framing, credentials",
        () => roadsAgree((w) => withNoise(everything(w)), 250),
        TIMEOUT
      )

      it.effect(
        "on a connection kept alive, both keep it or close it alike, and answer the next request",
        () =>
          Effect.gen(function*() {
            const reference = yield* Reference
            const production = yield* Production
            // Both ways happen among the requests: a body left unread closes, the rest keep.
            const seen = new Set<boolean>()
            yield* Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(withNoise(everything(reference)), async (p) => {
                  const pairs = correspondences(reference, production)
                  const routed = await sendKeptAlive(reference.port, p)
                  const answered = await sendKeptAlive(production.port, translate(p, pairs))
                  assert.deepStrictEqual(
                    { status: answered.first.status, next: answered.next, kept: answered.kept },
                    { status: routed.first.status, next: routed.next, kept: routed.kept },
                    `the roads differ on ${describeProbe(p)}`
                  )
                  seen.add(routed.kept)
                }),
                { numRuns: 80, endOnFailure: true, ...replay }
              )
            )
            assert.deepStrictEqual([...seen].sort(), [false, true])
          }),
        TIMEOUT
      )

      it.effect("after it all, both worlds hold the same accounts, balances, ledgers and orders", () =>
        Effect.gen(function*() {
          const reference = yield* Reference
          const production = yield* Production
          const read = (path: string) =>
            probe({
              fault: "none",
              method: "GET",
              target: `${ADMIN}${path}`,
              headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
              expect: [200]
            })
          const paths = ["/accounts?per_page=100", "/orders?per_page=100", "/audit", "/catalog"]
          for (const id of reference.accountIds) paths.push(`/accounts/${id}`, `/accounts/${id}/ledger?per_page=100`)
          for (const path of paths) {
            const answered = yield* Effect.promise(() => agree(reference, production, read(path)))
            assert.strictEqual(answered.status, 200, `${path}: ${answered.text}`)
          }
          assert.isAbove(endpointsOf(reference).length, 0)
        }))
    })
  })
}
