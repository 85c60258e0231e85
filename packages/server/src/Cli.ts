/**
 * The `bundles-server` command: `serve`, `migrate`, `backup`, `restore` and the operator's `admin` commands.
 */
import * as CommandLine from "@databundle/terminal/CommandLine"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as AdminCli from "./AdminCli.js"
import * as Backup from "./Backup.js"
import * as Database from "./Database.js"
import { examples } from "./Examples.js"
import * as Logging from "./Logging.js"
import * as Serve from "./Serve.js"
import * as Service from "./Service.js"

/** The package version, read from its package.json (beside both src/ and dist/). */
export const VERSION: string = JSON.parse(
  fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")
).version

const serve = Command.make("serve", {
  port: Options.integer("port").pipe(
    Options.withDescription("Port to listen on (env PORT, default 8080)"),
    Options.optional
  ),
  host: Options.text("host").pipe(
    Options.withDescription("Address to bind (env HOST, default 127.0.0.1)"),
    Options.optional
  ),
  demo: Options.boolean("demo").pipe(
    Options.withDescription("On an empty database, load the demo catalogue and a funded demo account")
  ),
  workers: Options.integer("workers").pipe(
    Options.withDescription(
      "Server processes sharing the port (env BUNDLES_WORKERS, default 1); more than one needs Postgres"
    ),
    Options.optional
  ),
  metricsPort: Options.integer("metrics-port").pipe(
    Options.withDescription("Serve GET /metrics on this port too, without the admin token (env BUNDLES_METRICS_PORT)"),
    Options.optional
  )
}, (options) => Layer.launch(Serve.layer(options)).pipe(Effect.provide(Logging.toStdout))).pipe(
  Command.withDescription("Serve /api/v1 and /admin/v1 until SIGINT or SIGTERM")
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    yield* Effect.scoped(Layer.build(Database.layer))
    yield* Console.log(`Migrations applied (${yield* Database.kind} database)`)
  }).pipe(Effect.provide(Logging.toStderr))).pipe(
    Command.withDescription("Apply database migrations and exit")
  )

/** The whole command tree. */
export const command = Command.make("bundles-server").pipe(
  Command.withDescription("The data bundle reseller server"),
  Command.withSubcommands([
    serve,
    migrate,
    Backup.backupCommand,
    Backup.restoreCommand,
    Service.command,
    AdminCli.command
  ])
)

const cli = Command.run(command, { name: "bundles-server", version: VERSION })

/**
 * Runs the command line (`process.argv`) on the terminal toolkit's runner, as `bundles` runs:
 * the same help layout, and colour only where the stream takes it (the parser's help and
 * errors included).
 */
export const run = (argv: ReadonlyArray<string>) =>
  CommandLine.run("bundles-server", cli, argv, { command, version: VERSION, examples })
