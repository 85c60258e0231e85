#!/usr/bin/env node
/**
 * The `bundles-server` binary. Exit status: 0 success, 1 failure, 2 usage error; a server
 * stopped by SIGINT or SIGTERM exits 0 once it has finished the requests in flight.
 */
import * as CommandLine from "@databundle/terminal/CommandLine"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as Cli from "./Cli.js"

Cli.run(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({
    disablePrettyLogger: true,
    disableErrorReporting: true,
    teardown: (exit, onExit) => onExit(CommandLine.exitCode(exit, 0))
  })
)
