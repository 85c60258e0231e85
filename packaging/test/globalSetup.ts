// The release tarballs of the current sources, packed by `pack.mjs` (what `pnpm pack:release`
// runs) into a temporary folder; the tests find it with `inject("releaseDir")`.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    releaseDir: string
    packed: string
  }
}

export default function setup(project: TestProject) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "databundle-release-out-"))
  const packed = execFileSync(
    process.execPath,
    [fileURLToPath(new URL("../pack.mjs", import.meta.url)), "--out", dir],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"]
    }
  )
  project.provide("releaseDir", dir)
  project.provide("packed", packed)
  return () => fs.rmSync(dir, { recursive: true, force: true })
}
