/**
 * Graceful shutdown of the HTTP server: stop accepting connections, let the requests in
 * flight finish (closing each connection as it goes idle), and only then let the rest of
 * the application (workers, database) stop. A request that outlives the deadline has its
 * connection closed.
 */
import { Duration, Effect } from "effect"
import type * as http from "node:http"

/**
 * Counts the requests of `server` from the moment Node receives them (before any fiber runs)
 * until their response closes; once draining, answers close their connections.
 */
export const track = (server: http.Server) => {
  const state = { inFlight: 0, draining: false }
  server.on("request", (_request: http.IncomingMessage, response: http.ServerResponse) => {
    state.inFlight++
    if (state.draining) response.shouldKeepAlive = false
    response.once("close", () => state.inFlight--)
  })
  return state
}

/** What `track` keeps. */
export type Tracked = ReturnType<typeof track>

/** Drains `server`: returns once no request is in flight, or at the deadline. */
export const drain = (server: http.Server, state: Tracked, deadline: Duration.Duration) =>
  Effect.gen(function*() {
    state.draining = true
    const started = Date.now()
    yield* Effect.logInfo("shutting down: finishing requests in flight").pipe(
      Effect.annotateLogs({ in_flight: state.inFlight })
    )
    server.close()
    while (state.inFlight > 0 && Date.now() - started < Duration.toMillis(deadline)) {
      server.closeIdleConnections()
      yield* Effect.sleep("50 millis")
    }
    server.closeAllConnections()
    yield* Effect.logInfo("stopped accepting requests").pipe(
      Effect.annotateLogs({ abandoned: state.inFlight, drain_ms: Date.now() - started })
    )
  })
