/**
 * `serve --workers N`: N server processes on one port (Node's cluster module), for one
 * Postgres database. The primary serves nothing itself: it starts the workers, replaces one
 * that dies, and on SIGINT/SIGTERM asks each to drain and waits until all have stopped.
 */
import { Deferred, Duration, Effect } from "effect"
import cluster, { type Worker } from "node:cluster"

/** True in a worker process started by `serve --workers`. */
export const isWorker = cluster.isWorker

/** Where the workers listen, as the first of them reported it. */
export interface Listening {
  readonly address: string
  readonly port: number
}

const RESTART_DELAY = Duration.seconds(1)
const STOP_DEADLINE = Duration.seconds(20)

/**
 * Starts `count` workers with `env` and keeps them running for the scope's lifetime; returns
 * once every one listens. A worker that exits while the scope is open is replaced.
 */
export const run = (count: number, env: Record<string, string>) =>
  Effect.gen(function*() {
    const ready = yield* Deferred.make<Listening, Error>()
    const running = new Set<Worker>()
    let listening = 0
    let stopping = false

    const start = () => {
      const worker = cluster.fork(env)
      running.add(worker)
      worker.once("listening", (address) => {
        if (++listening === count) {
          Deferred.unsafeDone(ready, Effect.succeed({ address: address.address ?? "127.0.0.1", port: address.port }))
        }
      })
      worker.once("exit", (code, signal) => {
        running.delete(worker)
        if (stopping) return
        if (listening < count) {
          Deferred.unsafeDone(
            ready,
            Effect.fail(new Error(`a worker exited while starting (${signal ?? `code ${code}`})`))
          )
          return
        }
        listening--
        Effect.runFork(
          Effect.logWarning("a worker stopped; starting another").pipe(
            Effect.annotateLogs({ pid: worker.process.pid, code, signal }),
            Effect.zipRight(Effect.sleep(RESTART_DELAY)),
            Effect.zipRight(Effect.sync(() => stopping || start()))
          )
        )
      })
    }

    const stopAll = Effect.async<void>((resume) => {
      stopping = true
      if (running.size === 0) return resume(Effect.void)
      const killer = setTimeout(
        () => running.forEach((worker) => worker.process.kill("SIGKILL")),
        Duration.toMillis(STOP_DEADLINE)
      )
      for (const worker of running) {
        worker.once("exit", () => {
          if (running.size === 0) {
            clearTimeout(killer)
            resume(Effect.void)
          }
        })
        worker.process.kill("SIGTERM")
      }
    })

    yield* Effect.addFinalizer(() =>
      Effect.logInfo("stopping workers").pipe(
        Effect.zipRight(stopAll),
        Effect.zipRight(Effect.logInfo("all workers stopped"))
      )
    )
    for (let i = 0; i < count; i++) start()
    return yield* Deferred.await(ready)
  })
