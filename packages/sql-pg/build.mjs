// Builds the published package (dist/ JS and declarations) the same way as the contract's.
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildLibrary } from "../contract/build.mjs"

await buildLibrary(path.dirname(fileURLToPath(import.meta.url)))
