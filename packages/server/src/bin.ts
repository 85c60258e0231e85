#!/usr/bin/env node
/**
 * The `bundles-server` binary.
 */
import { ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect } from "effect"
import { CliFailure } from "./AdminCli.js"
import * as Cli from "./Cli.js"

Cli.run(process.argv).pipe(
  // Usage errors were already printed by the parser; scripts tell them apart by exit status 2.
  Effect.catchIf(ValidationError.isValidationError, () => Effect.sync(() => process.exit(2))),
  // A failed admin command already printed why (stderr, and its body on stdout with --json).
  Effect.catchIf((error) => error instanceof CliFailure, () => Effect.sync(() => process.exitCode = 1)),
  // Anything else that stops a command (a database that cannot be reached, a data directory
  // in use) is reported as one line; the details go to the log.
  Effect.tapErrorCause((cause) =>
    Cause.isInterruptedOnly(cause) ? Effect.void : Console.error(`bundles-server: ${Cause.squash(cause)}`)
  ),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
