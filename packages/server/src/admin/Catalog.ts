/**
 * `admin catalog`: the catalogue file in and out. A file is checked whole before it is sent,
 * every problem reported with its place in the file.
 */
import { AdminApi, ApiError, Catalog } from "@databundle/contract"
import { Problem, problem } from "@databundle/terminal/Failure"
import * as Output from "@databundle/terminal/Output"
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { execute, request } from "./Call.js"
import { formatPath, shared } from "./Options.js"
import { indented } from "./Text.js"
import { catalogSync } from "./Upstreams.js"

/** Reads and decodes a catalogue file, reporting every problem with its place in the file. */
const readCatalog = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) => problem(`Cannot read ${file}: ${error.message}`))
    )
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => problem(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`)
    })
    return yield* Schema.decodeUnknown(Catalog.CatalogFile, { errors: "all" })(json).pipe(
      Effect.mapError((error) => {
        const errors: Record<string, Array<string>> = {}
        for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
          const place = issue.path.length === 0 ? "(file)" : formatPath(issue.path)
          errors[place] = [...(errors[place] ?? []), issue.message]
        }
        const headline = `${file} is not a valid catalogue file`
        const lines = Object.entries(errors).flatMap(([place, messages]) => messages.map((m) => `  ${place}: ${m}`))
        return new Problem({
          message: [`${headline}:`, ...lines].join("\n"),
          body: Schema.encodeSync(ApiError.ValidationError)(new ApiError.ValidationError({ message: headline, errors }))
        })
      })
    )
  })

const importColumns: ReadonlyArray<Output.Column<readonly [kind: string, counts: Catalog.ImportCounts]>> = [
  { title: "", value: ([kind]) => kind },
  { title: "CREATED", value: ([, counts]) => String(counts.created), right: true },
  { title: "UPDATED", value: ([, counts]) => String(counts.updated), right: true },
  { title: "UNCHANGED", value: ([, counts]) => String(counts.unchanged), right: true }
]

const kinds = { price_group: "price group", network: "network", bundle: "bundle" } as const

const catalogImport = Command.make("import", {
  ...shared,
  file: Args.file({ name: "FILE", exists: "yes" }).pipe(Args.withDescription("The catalogue file (JSON)")),
  dryRun: Options.boolean("dry-run").pipe(
    Options.withDescription("Check the file and print what it would create and update; change nothing")
  )
}, (options) =>
  execute(
    options,
    Effect.flatMap(readCatalog(options.file), (payload) =>
      request(
        options,
        (client) => options.dryRun ? client.catalogFile.preview({ payload }) : client.catalogFile.import({ payload })
      )),
    AdminApi.ImportResponse,
    (summary, s) => [
      options.dryRun ? `Dry run of ${options.file}: nothing was changed.` : `Imported ${options.file}:`,
      ...indented(Output.table(importColumns, [
        ["price groups", summary.price_groups],
        ["networks", summary.networks],
        ["bundles", summary.bundles]
      ], s)),
      ...(summary.changes === undefined ? [] : summary.changes.length === 0
        ? [options.dryRun ? "The import would change nothing." : "The import changed nothing."]
        : [
          options.dryRun ? "The import would:" : "The import did:",
          ...indented(summary.changes.map((change) => `${change.action} ${kinds[change.kind]} ${change.key}`))
        ])
    ]
  )).pipe(
    Command.withDescription(
      "Upsert networks, bundles, price groups and prices from a catalogue file (--dry-run: show what would change)"
    )
  )

const encodeCatalogFile = Schema.encodeSync(Catalog.CatalogFile)

const catalogExport = Command.make("export", shared, (options) =>
  execute(
    options,
    request(options, (client) => client.catalogFile.export()),
    AdminApi.CatalogExport,
    (catalog) => [JSON.stringify(encodeCatalogFile(catalog), null, 2)]
  )).pipe(Command.withDescription("Print the catalogue in the import file's format"))

/** `admin catalog`: import, export. */
export const catalog = Command.make("catalog").pipe(
  Command.withDescription("The catalogue: networks, bundles, price groups and prices"),
  Command.withSubcommands([catalogImport, catalogExport, catalogSync])
)
