/**
 * The outcome of every row of a bulk run, and the results CSV it is written to: one line per
 * row of the file, in file order, whether bought now, bought by an earlier run, or not bought.
 * The outcomes and the file's columns are the client's (`@databundle/client/Bulk`), the same
 * the dashboard's results download has; here the amounts are pesewas.
 */
import * as Bulk from "@databundle/client/Bulk"
import { formatCedis } from "@databundle/client/Money"
import { problem } from "@databundle/terminal/Failure"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import type * as Catalogue from "./Catalogue.js"

/** A row of the file, with its bundle as this command line reads the catalogue. */
export type Row = Bulk.Row<Catalogue.Entry>

/** What became of a row (amounts in pesewas). */
export type Outcome = Bulk.Outcome<bigint>

/** A row and what became of it. */
export type Result = Bulk.Result<bigint, Catalogue.Entry>

/** The results CSV text, header first. */
export const toCsv = (results: ReadonlyArray<Result>): string =>
  Bulk.toCsv(
    Bulk.RESULT_COLUMNS,
    results.map((result) => {
      const fields = Bulk.resultFields(result)
      return Bulk.RESULT_COLUMNS.map((column) => {
        const value = fields[column]
        return typeof value === "bigint" ? formatCedis(value) : value
      })
    })
  )

/** Writes the results CSV whole, then renames it into place, so a reader never sees half a file. */
export const write = (file: string, results: ReadonlyArray<Result>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const temporary = `${file}.${process.pid}.tmp`
    yield* fs.writeFileString(temporary, toCsv(results))
    yield* fs.rename(temporary, file)
  }).pipe(Effect.mapError((error) => problem(`Cannot write the results file ${file}: ${error.message}`)))
