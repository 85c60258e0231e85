/**
 * The library packages as the world outside this repository gets them. `pnpm pack` of the
 * contract and the client (their `prepack` script builds them, so the tarballs are never
 * stale), installed with npm into a fresh project together with `effect` from the registry.
 * There, with nothing of the workspace in reach, plain Node runs a script that buys a bundle
 * from a real server, a bundler bundles the client, and TypeScript checks a consumer under
 * `nodenext` and under `bundler`. And in the workspace, every library package's build loads
 * under plain Node through its exports map, module by module, with no condition set.
 * Packaging does not depend on the database, so the server runs on PGlite only.
 */
import { targets } from "@databundle/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { startServer, type TestServer } from "./Server.js"

const run = promisify(execFile)
const packagesDir = fileURLToPath(new URL("../..", import.meta.url))

/**
 * The environment of a child process, without what the workspace's pnpm says about the script
 * it runs (npm would take it for its own); `npm_config_*` settings such as a registry stay.
 */
const cleanEnv = (extra: Record<string, string> = {}) => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) =>
      !/^npm_(lifecycle_|package_|command$|execpath$|node_execpath$|config_user_agent$)/i.test(name)
    )
  ),
  COREPACK_ENABLE_DOWNLOAD_PROMPT: "0",
  ...extra
})

/** Runs a command; on failure the error carries its output. */
const sh = async (command: string, args: ReadonlyArray<string>, cwd: string, env = cleanEnv()) => {
  try {
    return await run(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 })
  } catch (error: any) {
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`)
  }
}

// A plain Node script: ESM, no TypeScript, no loader, both faces of the client.
const SCRIPT = `
import { BundlesClient, createClient, formatGhs, InsufficientBalanceError } from "@databundle/client"
import { ResellerApi } from "@databundle/contract"
import { Effect } from "effect"

const baseUrl = process.env.BASE_URL
const client = createClient({ apiKey: process.env.FUNDED_KEY, baseUrl })
const before = await client.balance()
const networks = await client.networks()
const bundle = (await client.bundles(Number(process.env.NETWORK_ID))).find((b) => b.name === process.env.BUNDLE)
const placed = await client.orders.create({ bundleId: bundle.id, phoneNumber: "0241234567", reference: "packed-1" })
const fetched = await client.orders.get(placed.order.orderNumber)

let refused = null
try {
  await createClient({ apiKey: process.env.EMPTY_KEY, baseUrl }).orders.create({ bundleId: bundle.id, phoneNumber: "0241234567" })
} catch (error) {
  refused = { insufficient: error instanceof InsufficientBalanceError, required: String(error.required) }
}

const effectBalance = await Effect.runPromise(
  Effect.flatMap(BundlesClient, (c) => c.balance()).pipe(
    Effect.provide(BundlesClient.layer({ apiKey: process.env.FUNDED_KEY, baseUrl }))
  )
)

console.log(JSON.stringify({
  resolved: import.meta.resolve("@databundle/client"),
  prefix: ResellerApi.RESELLER_PREFIX,
  before: formatGhs(before.main),
  networks: networks.length,
  order: { number: placed.order.orderNumber, price: String(bundle.price), paid: String(placed.order.amountPaid) },
  fetched: fetched.orderNumber,
  after: String(placed.walletBalance),
  effectMain: String(effectBalance.main),
  refused
}))
`

// A TypeScript consumer: what it uses must type-check, and what is wrong must not.
const CONSUMER = `
import { BundlesClient, createClient, formatGhs, InsufficientBalanceError, type Order } from "@databundle/client"
import { parseCedis } from "@databundle/client/Money"
import { ResellerApi } from "@databundle/contract"
import { Effect } from "effect"

const client = createClient({ apiKey: "key", baseUrl: "https://api.example.com/api/v1" })

export const main: Promise<string> = client.balance().then((balance) => formatGhs(balance.main))
export const orderNumber = (order: Order): string => order.orderNumber
export const shortBy = (error: unknown): bigint =>
  error instanceof InsufficientBalanceError ? error.required - error.balance : 0n
export const price: bigint = parseCedis("5.50")
export const prefix: string = ResellerApi.RESELLER_PREFIX
export const effectBalance = Effect.flatMap(BundlesClient, (c) => c.balance()).pipe(
  Effect.provide(BundlesClient.layer({ apiKey: "key", baseUrl: "https://api.example.com" }))
)

// @ts-expect-error a bundle id is a number
export const wrongId = client.orders.create({ bundleId: "1", phoneNumber: "0241234567" })
// @ts-expect-error money is bigint pesewas, not a number
export const wrongMoney: Promise<number> = client.balance().then((balance) => balance.main)
`

/**
 * Type-checks consumer.ts in the working directory as `tsc` would with the options given as
 * JSON, and the shipped declarations of the @databundle packages with it, strictly
 * (`skipLibCheck` would hide a declaration that imports what is not installed); the rest of
 * node_modules only as far as they use it. Prints the diagnostics and how many of the client's
 * declarations were checked. A process of its own: checking takes seconds of CPU.
 */
const TYPECHECK = `
const [typescript, json] = process.argv.slice(2)
const ts = (await import(typescript)).default
const dir = process.cwd()
const config = ts.parseJsonConfigFileContent({
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2022", "DOM"],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    types: [],
    ...JSON.parse(json)
  },
  files: ["consumer.ts"]
}, ts.sys, dir)
const program = ts.createProgram({ rootNames: config.fileNames, options: config.options })
const checked = program.getSourceFiles().filter((file) =>
  file.fileName.includes("/node_modules/@databundle/") || !file.fileName.includes("/node_modules/")
)
const diagnostics = [
  ...config.errors,
  ...program.getOptionsDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...checked.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])
]
console.log(JSON.stringify({
  clientDeclarations: checked.filter((file) => file.fileName.includes("/@databundle/client/dist/")).length,
  diagnostics: ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => dir,
    getNewLine: () => "\\n"
  })
}))
`
const typescript = pathToFileURL(createRequire(import.meta.url).resolve("typescript")).href

describe("the library packages, built and packed", () => {
  let tmp: string
  let app: string
  let starting: Promise<TestServer> | undefined
  let server: TestServer

  beforeAll(async () => {
    starting = startServer(targets[0]!)
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "databundle-packed-"))
    app = path.join(tmp, "app")
    fs.mkdirSync(app)
    // One after the other: the client's build type-checks the contract's project too.
    for (const name of ["contract", "client"]) {
      await sh("corepack", ["pnpm", "pack", "--pack-destination", tmp], path.join(packagesDir, name))
    }
    const tarballs = fs.readdirSync(tmp).filter((name) => name.endsWith(".tgz"))
    assert.sameMembers(tarballs, ["databundle-contract-0.1.0.tgz", "databundle-client-0.1.0.tgz"])

    await sh("npm", ["init", "-y"], app)
    await sh("npm", ["pkg", "set", "type=module"], app)
    const effectVersion = JSON.parse(fs.readFileSync(path.join(packagesDir, "client/package.json"), "utf8"))
      .dependencies.effect
    await sh("npm", [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...tarballs.map((name) => path.join(tmp, name)),
      `effect@${effectVersion}`
    ], app)
    fs.writeFileSync(path.join(app, "buy.mjs"), SCRIPT)
    fs.writeFileSync(path.join(app, "consumer.ts"), CONSUMER)
    fs.writeFileSync(path.join(app, "typecheck.mjs"), TYPECHECK)
    server = await starting
  }, 300_000)

  afterAll(async () => {
    await (await starting?.catch(() => undefined))?.dispose()
    if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it("ships built files only, with real versions of its dependencies", () => {
    for (const name of ["contract", "client"]) {
      const dir = path.join(app, "node_modules/@databundle", name)
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
      const manifest = JSON.stringify(pkg)
      assert.notInclude(manifest, "workspace:")
      assert.notInclude(manifest, "@databundle/source")
      assert.notInclude(manifest, "./src/")
      assert.notInclude(manifest, "./test/")
      assert.isFalse(fs.existsSync(path.join(dir, "src")))
      assert.deepStrictEqual(pkg.exports["."], { types: "./dist/index.d.ts", default: "./dist/index.js" })
      // Every module has its JavaScript and its declarations, and no declaration points at a missing map.
      const files = fs.readdirSync(path.join(dir, "dist"))
      const modules = files.filter((file) => file.endsWith(".js")).map((file) => file.slice(0, -3))
      assert.include(modules, "index")
      for (const module of modules) {
        assert.include(files, `${module}.d.ts`)
        assert.notInclude(fs.readFileSync(path.join(dir, "dist", `${module}.d.ts`), "utf8"), "sourceMappingURL")
      }
    }
    const client = JSON.parse(fs.readFileSync(path.join(app, "node_modules/@databundle/client/package.json"), "utf8"))
    assert.strictEqual(client.dependencies["@databundle/contract"], "0.1.0")
  })

  it("runs under plain Node: both faces against a real server, typed errors included", async () => {
    const bundle = server.bundle("MTN 1GB")
    const funded = await server.account({ funds: 100_000n })
    const empty = await server.account()
    const { stdout } = await sh(
      process.execPath,
      ["buy.mjs"],
      app,
      cleanEnv({
        BASE_URL: server.baseUrl,
        FUNDED_KEY: funded.key,
        EMPTY_KEY: empty.key,
        NETWORK_ID: String(bundle.networkId),
        BUNDLE: bundle.name
      })
    )
    const result = JSON.parse(stdout)
    // The installed copy, not the workspace's.
    assert.strictEqual(result.resolved, `file://${fs.realpathSync(app)}/node_modules/@databundle/client/dist/index.js`)
    assert.strictEqual(result.prefix, "/api/v1")
    assert.strictEqual(result.before, "GHS 1000.00")
    assert.strictEqual(result.networks, server.networks.size)
    assert.strictEqual(result.order.price, String(bundle.price))
    assert.strictEqual(result.order.paid, String(bundle.price))
    assert.strictEqual(result.fetched, result.order.number)
    assert.strictEqual(result.after, String(100_000n - bundle.price))
    assert.strictEqual(result.effectMain, result.after)
    assert.deepStrictEqual(result.refused, { insufficient: true, required: String(bundle.price) })
    assert.strictEqual(await server.mainBalance(funded.id), 100_000n - bundle.price)
  })

  it("bundles for a browser with a bundler's default resolution", async () => {
    const result = await esbuild.build({
      stdin: { contents: `export { createClient } from "@databundle/client"`, resolveDir: app },
      absWorkingDir: app,
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      logLevel: "silent",
      metafile: true
    })
    const inputs = Object.keys(result.metafile.inputs)
    assert.include(inputs, "node_modules/@databundle/client/dist/index.js")
    assert.isTrue(inputs.some((input) => input.startsWith("node_modules/@databundle/contract/dist/")))
    assert.include(result.outputFiles[0]!.text, "databundle-client/")
  })

  it("every library package, built, loads under plain Node in the workspace, module by module", async () => {
    // The contract and the client were built by packing them.
    for (const name of ["core", "sql-pg", "sql-pglite", "terminal"]) {
      await sh(process.execPath, ["build.mjs"], path.join(packagesDir, name))
    }
    const load = `
      const loaded = {}
      for (const specifier of JSON.parse(process.env.SPECIFIERS)) {
        loaded[specifier] = { resolved: import.meta.resolve(specifier), names: Object.keys(await import(specifier)).length }
      }
      console.log(JSON.stringify(loaded))
    `
    for (const name of ["contract", "client", "core", "sql-pg", "sql-pglite", "terminal"]) {
      const dir = path.join(packagesDir, name)
      const modules = fs.readdirSync(path.join(dir, "src")).filter((file) => file.endsWith(".ts")).map((file) =>
        file.slice(0, -3)
      )
      const specifier = (module: string) => module === "index" ? `@databundle/${name}` : `@databundle/${name}/${module}`
      // Each package imports itself by name, through its own exports map, with no condition set.
      const { stdout } = await sh(
        process.execPath,
        ["--input-type=module", "--eval", load],
        dir,
        cleanEnv({ SPECIFIERS: JSON.stringify(modules.map(specifier)) })
      )
      const loaded = JSON.parse(stdout)
      for (const module of modules) {
        const { names, resolved } = loaded[specifier(module)]
        assert.strictEqual(resolved, pathToFileURL(path.join(dir, "dist", `${module}.js`)).href)
        assert.isAbove(names, 0, specifier(module))
      }
    }
  }, 180_000)

  it("type-checks a TypeScript consumer under moduleResolution nodenext and bundler", async () => {
    const resolutions = {
      nodenext: { module: "NodeNext", moduleResolution: "NodeNext" },
      bundler: { module: "ESNext", moduleResolution: "Bundler" }
    }
    // Side by side: each is a process of its own.
    const results = await Promise.all(
      Object.entries(resolutions).map(async ([name, options]) => {
        const { stdout } = await sh(process.execPath, ["typecheck.mjs", typescript, JSON.stringify(options)], app)
        return { name, ...JSON.parse(stdout) }
      })
    )
    for (const { clientDeclarations, diagnostics, name } of results) {
      assert.strictEqual(diagnostics, "", name)
      assert.isAbove(clientDeclarations, 5, name)
    }
  }, 180_000)
})
