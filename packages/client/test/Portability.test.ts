/**
 * The default entry runs wherever `fetch` and Web Crypto do: bundled for a neutral platform
 * and for browsers it must need no Node built-in. And it tree-shakes: an app that takes only
 * the phone or webhook helper does not carry the HTTP client.
 */
import { assert, describe, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const builtins = new Set(builtinModules)

/** Bundles `contents` (an ES module in the package's folder); returns the output and every Node built-in it asked for. */
const bundle = async (contents: string, platform: "neutral" | "browser") => {
  const nodeImports: Array<string> = []
  const result = await esbuild.build({
    stdin: { contents, resolveDir: packageDir, loader: "ts", sourcefile: "entry.ts" },
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    platform,
    target: "es2022",
    // A neutral build reads no package.json field by default; these are what ESM runtimes use.
    mainFields: ["module", "main"],
    // The workspace's packages from their sources (the packed package is checked by Packed.test.ts).
    conditions: ["@databundle/source", "import", "default"],
    logLevel: "silent",
    plugins: [{
      name: "no-node-builtins",
      setup(build) {
        build.onResolve({ filter: /.*/ }, (args) => {
          if (args.path.startsWith("node:") || builtins.has(args.path) || builtins.has(args.path.split("/")[0]!)) {
            nodeImports.push(`${args.path} (from ${args.importer})`)
            return { path: args.path, external: true }
          }
          return undefined
        })
      }
    }]
  })
  return { code: result.outputFiles[0]!.text, nodeImports }
}

describe("the default entry", () => {
  for (const platform of ["neutral", "browser"] as const) {
    it(`bundles for a ${platform} platform without any Node built-in`, async () => {
      const { code, nodeImports } = await bundle(`export * from "./src/index.ts"`, platform)
      assert.deepStrictEqual(nodeImports, [])
      assert.include(code, "databundle-client/")
    })
  }

  it("is tree-shakeable: the helpers alone leave the HTTP client out", async () => {
    const whole = await bundle(`export { createClient } from "./src/index.ts"`, "neutral")
    const phone = await bundle(`export { normalizePhone } from "./src/index.ts"`, "neutral")
    const webhook = await bundle(`export { verifyWebhook } from "./src/index.ts"`, "neutral")
    for (const helper of [phone, webhook]) assert.notInclude(helper.code, "x-api-key")
    assert.isBelow(phone.code.length, 8_000)
    // The verifier decodes events with the contract's schemas, so it carries effect's Schema
    // (about 320 kB minified), never the HTTP client.
    assert.isBelow(webhook.code.length, whole.code.length / 1.5)
    assert.include(whole.code, "x-api-key")
    assert.isAbove(whole.code.length, 50_000)
  })

  it("the package is ESM with an exports map, and ships types from its build", async () => {
    const pkg = (await import("../package.json", { with: { type: "json" } })).default as any
    assert.strictEqual(pkg.type, "module")
    assert.strictEqual(pkg.sideEffects, false)
    // The workspace reads the sources through a condition of its own; everyone else gets the build.
    assert.deepStrictEqual(pkg.exports["."], {
      "@databundle/source": "./src/index.ts",
      types: "./dist/index.d.ts",
      default: "./dist/index.js"
    })
    assert.deepStrictEqual(pkg.publishConfig.exports["."], { types: "./dist/index.d.ts", default: "./dist/index.js" })
  })
})
