/**
 * The whole server as a web-standard handler (`Request` → `Promise<Response>`), to mount in
 * another framework or runtime. It serves both APIs and runs the background workers, on
 * the database the environment selects (or the one given).
 */
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import * as Database from "./Database.js"
import * as Http from "./Http.js"

/** Options of `make`. */
export interface WebHandlerOptions {
  /** The database; by default `DATABASE_URL`, else the embedded one in `BUNDLES_DATA_DIR`. */
  readonly database?: Layer.Layer<SqlClient.SqlClient, unknown>
}

/**
 * Builds the handler. Call `dispose` on shutdown: it stops the workers and closes the database.
 * Unauthenticated requests are rate-limited by client address, which a `Request` does not
 * carry, so behind this handler they share one quota unless the host puts the address in
 * the request (see docs/operations.md).
 */
export const make = (options: WebHandlerOptions = {}) =>
  Http.webHandler(
    Layer.mergeAll(
      Http.AppLive.pipe(Layer.provide(Layer.orDie(options.database ?? Database.layer))),
      NodeHttpServer.layerContext
    )
  )
