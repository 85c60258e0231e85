/**
 * The program of the `bundles` binary (`bin.ts` loads it). Exit status: 0 success, 1 failure,
 * 2 usage error, 130 stopped by Ctrl-C (the first Ctrl-C interrupts the command, which
 * finishes what must not be cut short; a second one ends the process at once).
 */
import * as Tty from "@databundle/terminal/Tty"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Cli from "./Cli.js"

Cli.run(process.argv).pipe(
  Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer, Tty.layer)),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => onExit(Cli.exitCode(exit))
  })
)
