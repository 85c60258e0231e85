/**
 * The console's handlers (sign-in, and the admin API's operator endpoints). Being built.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { ServerApi } from "./ServerApi.js"

const pending = Effect.dieMessage("not built yet")

export const layer = Layer.mergeAll(
  HttpApiBuilder.group(ServerApi, "consoleAccess", (h) => Effect.succeed(h.handle("signIn", () => pending))),
  HttpApiBuilder.group(ServerApi, "consoleSession", (h) =>
    Effect.succeed(h.handle("current", () => pending).handle("signOut", () => pending))),
  HttpApiBuilder.group(ServerApi, "operators", (h) =>
    Effect.succeed(h.handle("list", () => pending).handle("create", () => pending).handle("disable", () => pending))),
  HttpApiBuilder.group(ServerApi, "actions", (h) => Effect.succeed(h.handle("list", () => pending))),
  HttpApiBuilder.group(ServerApi, "stats", (h) => Effect.succeed(h.handle("get", () => pending))),
  HttpApiBuilder.group(ServerApi, "webhooksAdmin", (h) =>
    Effect.succeed(h.handle("health", () => pending).handle("deliveries", () => pending).handle("resend", () => pending))),
  HttpApiBuilder.group(ServerApi, "catalogAdmin", (h) =>
    Effect.succeed(
      h.handle("networks", () => pending).handle("updateNetwork", () => pending).handle("updateBundle", () => pending)
    ))
)
