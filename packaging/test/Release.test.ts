/**
 * The three release tarballs as an operator and an app developer get them: each installed
 * with npm into a folder under the system's temporary directory, where no node_modules of the
 * workspace can be reached, and run there. The server (installed globally into its own
 * prefix) serves the demo from an empty folder; the CLI, installed beside it, logs in, reads
 * the balance and buys a bundle whose id it has just read; the client, installed into a plain
 * npm project, makes typed calls from ESM JavaScript and type-checks under strict TypeScript
 * with `moduleResolution` node16 and bundler. Prints each tarball's size and install time.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, assert, beforeAll, describe, inject, it } from "vitest"

const exec = promisify(execFile)
const releaseDir = inject("releaseDir")
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")

/** An environment with nothing of the workspace: its PATH (for node and npm), a home of its own. */
const envIn = (home: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: home,
  // The npm cache of this machine's user, so installs can be served offline when it holds them.
  npm_config_cache: path.join(os.homedir(), ".npm"),
  // The machine's way to the registry: its registry, proxies and extra certificate authorities (an
  // install with `--prefix` no longer reads the npm configuration beside npm, where a cafile may be).
  ...Object.fromEntries(
    [
      "npm_config_registry",
      "npm_config_cafile",
      "NODE_EXTRA_CA_CERTS",
      "HTTPS_PROXY",
      "https_proxy",
      "HTTP_PROXY",
      "http_proxy",
      "NO_PROXY",
      "no_proxy"
    ]
      .flatMap((name) => process.env[name] === undefined ? [] : [[name, process.env[name]!]])
  ),
  ...extra
})

/** Runs a command; on failure the error carries its output. */
const sh = async (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv) => {
  try {
    return await exec(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 })
  } catch (error: any) {
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`)
  }
}

const tarball = (name: string) => {
  const file = fs.readdirSync(releaseDir).find((f) => f.startsWith(`databundle-${name}-`) && f.endsWith(".tgz"))
  assert.isDefined(file, `release/ holds databundle-${name}-*.tgz`)
  return path.join(releaseDir, file!)
}

const NPM_INSTALL = ["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefer-offline"]

/** Installs, timing it. */
const install = async (args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv) => {
  const started = performance.now()
  await sh("npm", [...NPM_INSTALL, ...args], cwd, env)
  return Math.round(performance.now() - started)
}

/** Every file under `dir`, relative to it. */
const filesOf = (dir: string): Array<string> =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => fs.statSync(path.join(dir, f)).isFile())

/** What every published package carries: its manifest's fields, README, LICENSE, and no TypeScript source. */
const assertPublished = (dir: string, name: string) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
  assert.strictEqual(pkg.name, name)
  assert.match(pkg.version, /^\d+\.\d+\.\d+/)
  assert.strictEqual(pkg.license, "MIT")
  assert.match(pkg.engines.node, /^>=\d+/)
  assert.isArray(pkg.files)
  const manifest = JSON.stringify(pkg)
  for (const workspaceOnly of ["workspace:", "@databundle/source", "./src/", "./test/"]) {
    assert.notInclude(manifest, workspaceOnly, name)
  }
  const files = filesOf(dir).filter((f) => !f.startsWith("node_modules/"))
  assert.includeMembers(files, ["README.md", "LICENSE", "package.json"], name)
  assert.deepStrictEqual(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")), [], name)
  return pkg
}

describe("the release tarballs, installed with npm outside the workspace", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "databundle-installed-"))
  const home = path.join(tmp, "home")
  const prefix = path.join(tmp, "global")
  const shop = path.join(tmp, "shop")
  const app = path.join(tmp, "app")
  const bin = (name: string) => path.join(prefix, "bin", name)
  const figures: Record<string, { bytes: number; installMs: number }> = {}
  let server: ChildProcess | undefined
  let baseUrl = ""
  let output = ""

  beforeAll(async () => {
    for (const dir of [home, prefix, shop, app]) fs.mkdirSync(dir)
    const env = envIn(home)
    // `npm install -g`, into a prefix of its own (bin/ and lib/node_modules/ under it).
    for (const name of ["server", "cli"]) {
      const installMs = await install(["-g", "--prefix", prefix, tarball(name)], tmp, env)
      figures[name] = { bytes: fs.statSync(tarball(name)).size, installMs }
    }
    await sh("npm", ["init", "-y"], app, env)
    await sh("npm", ["pkg", "set", "type=module"], app, env)
    figures.client = {
      bytes: fs.statSync(tarball("client")).size,
      installMs: await install([tarball("client")], app, env)
    }
    console.log(`release tarballs: ${JSON.stringify(figures)}`)

    // The server from an empty folder, as `bundles-server serve --demo`.
    server = spawn(bin("bundles-server"), ["serve", "--demo", "--port", "0"], {
      cwd: shop,
      env: envIn(home),
      stdio: ["ignore", "pipe", "pipe"]
    })
    baseUrl = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const match = /listening on (http:\/\/\S+)/.exec(output)
        if (match) resolve(match[1]!)
      }
      server!.stdout!.on("data", onData)
      server!.stderr!.on("data", onData)
      server!.once("exit", (code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)))
    })
  })

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once("exit", resolve))
      server.kill("SIGTERM")
      await exited
    }
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  it("ships manifests with a name, version, binary or built exports, engines, licence and README", () => {
    const lib = path.join(prefix, "lib/node_modules/@databundle")
    const serverPkg = assertPublished(path.join(lib, "server"), "@databundle/server")
    assert.deepStrictEqual(serverPkg.bin, { "bundles-server": "./dist/bin.mjs" })
    assert.deepStrictEqual(Object.keys(serverPkg.dependencies), ["@electric-sql/pglite"])
    // The data directory's template travels beside the binary, so a first start needs no initdb.
    assert.isTrue(fs.existsSync(path.join(lib, "server/dist/pgdata.tar.gz")))
    const cliPkg = assertPublished(path.join(lib, "cli"), "@databundle/cli")
    assert.deepStrictEqual(cliPkg.bin, { bundles: "./dist/bundles.mjs" })
    assert.isUndefined(cliPkg.dependencies)

    const client = path.join(app, "node_modules/@databundle/client")
    const clientPkg = assertPublished(client, "@databundle/client")
    assert.deepStrictEqual(clientPkg.exports["."], { types: "./dist/index.d.ts", default: "./dist/index.js" })
    assert.deepStrictEqual(clientPkg.bundleDependencies, ["@databundle/contract"])
    // effect is the app's own copy, not a second one.
    assert.hasAllKeys(clientPkg.peerDependencies, ["effect", "@effect/platform"])
    assert.isFalse(fs.existsSync(path.join(client, "node_modules/effect")))
    assert.isTrue(fs.existsSync(path.join(app, "node_modules/effect/package.json")))
    const contract = assertPublished(path.join(client, "node_modules/@databundle/contract"), "@databundle/contract")
    assert.deepStrictEqual(contract.exports["."], { types: "./dist/index.d.ts", default: "./dist/index.js" })
  })

  it("the server serves the demo, and its admin commands work, from the installed binary", async () => {
    assert.include(output, "Demo account \"Demo Reseller\" created")
    const health = await fetch(new URL("/healthz", baseUrl))
    assert.strictEqual(health.status, 200)
    // The dashboard's files came with it.
    const page = await fetch(new URL("/", baseUrl))
    assert.strictEqual(page.status, 200)
    assert.include(await page.text(), "<!doctype html>")
    const { stdout } = await sh(
      bin("bundles-server"),
      ["admin", "accounts", "list", "--json", "--url", baseUrl],
      shop,
      envIn(home)
    )
    assert.deepStrictEqual(JSON.parse(stdout).accounts.map((a: any) => a.name), ["Demo Reseller"])
  })

  it("the CLI logs in, reads the balance and buys a bundle whose id it just read", async () => {
    const env = envIn(home)
    const help = await sh(bin("bundles"), ["--help"], tmp, env)
    assert.include(help.stdout, "buy")
    const key = fs.readFileSync(path.join(shop, ".bundles/demo-api-key"), "utf8").trim()
    await sh(bin("bundles"), ["login", "--api-key", key, "--base-url", `${baseUrl}/api/v1`], tmp, env)
    const before = JSON.parse((await sh(bin("bundles"), ["balance", "--json"], tmp, env)).stdout)
    assert.strictEqual(before.balance.main, 500)
    const listed = JSON.parse((await sh(bin("bundles"), ["bundles", "mtn", "--json"], tmp, env)).stdout)
    const bundle = listed.bundles.find((b: any) => b.is_active)
    const bought = JSON.parse(
      (await sh(bin("bundles"), ["buy", String(bundle.id), "0241234567", "--json"], tmp, env)).stdout
    )
    assert.strictEqual(bought.order.status, "successful")
    const after = JSON.parse((await sh(bin("bundles"), ["balance", "--json"], tmp, env)).stdout)
    assert.strictEqual(Math.round((before.balance.main - after.balance.main) * 100), Math.round(bundle.price * 100))

    // The third of three commands: the first order's line the server's banner printed, run as printed.
    const printed = /^\s+(bundles buy \S+ \S+ --api-key \S+ --base-url \S+)$/m.exec(output)
    assert.isNotNull(printed, output)
    const first = await sh(bin("bundles"), [...printed![1]!.split(" ").slice(1), "--json"], tmp, envIn(home))
    assert.strictEqual(JSON.parse(first.stdout).order.status, "successful")
  })

  it("the client makes typed calls from ESM JavaScript against the server", async () => {
    const key = fs.readFileSync(path.join(shop, ".bundles/demo-api-key"), "utf8").trim()
    fs.writeFileSync(
      path.join(app, "buy.mjs"),
      `import { createClient, formatGhs } from "@databundle/client"
const client = createClient({ apiKey: process.env.KEY, baseUrl: process.env.BASE_URL })
const networks = await client.networks()
const bundles = await client.bundles(networks[0].id)
const placed = await client.orders.create({ bundleId: bundles[0].id, phoneNumber: "0241234567", reference: "release-test" })
const balance = await client.balance()
console.log(JSON.stringify({
  resolved: import.meta.resolve("@databundle/client"),
  status: placed.order.status,
  paid: String(placed.order.amountPaid),
  main: formatGhs(balance.main),
  isBigint: typeof balance.main === "bigint"
}))
`
    )
    const { stdout } = await sh(
      process.execPath,
      ["buy.mjs"],
      app,
      envIn(home, { KEY: key, BASE_URL: `${baseUrl}/api/v1` })
    )
    const result = JSON.parse(stdout)
    assert.strictEqual(result.resolved, `file://${fs.realpathSync(app)}/node_modules/@databundle/client/dist/index.js`)
    assert.strictEqual(result.status, "successful")
    assert.isTrue(result.isBigint)
    assert.match(result.main, /^GHS \d+\.\d\d$/)
  })

  it("every TypeScript snippet of docs/client.md compiles under `tsc --init`'s defaults", async () => {
    const docs = fs.readFileSync(new URL("../../docs/client.md", import.meta.url), "utf8")
    const snippets = [...docs.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
    assert.isAtLeast(snippets.length, 4)
    const dir = path.join(app, "snippets")
    fs.mkdirSync(dir)
    snippets.forEach((code, i) => fs.writeFileSync(path.join(dir, `snippet${i + 1}.ts`), code))
    await sh(process.execPath, [tsc, "--init"], dir, envIn(home))
    // The one change a Node app makes to the defaults: Node's types (`process`), from @types/node.
    const typesNode = JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8"))
      .devDependencies["@types/node"]
    await install([`@types/node@${typesNode}`], app, envIn(home))
    const config = fs.readFileSync(path.join(dir, "tsconfig.json"), "utf8")
    assert.include(config, "\"types\": []")
    fs.writeFileSync(path.join(dir, "tsconfig.json"), config.replace("\"types\": []", "\"types\": [\"node\"]"))
    const checked = await exec(process.execPath, [tsc, "--noEmit", "-p", "."], { cwd: dir, env: envIn(home) })
      .then(() => "", (error: any) => `${error.stdout}${error.stderr}`)
    assert.strictEqual(checked, "")
  })

  it("the client type-checks under strict TypeScript with moduleResolution node16 and bundler", async () => {
    fs.writeFileSync(
      path.join(app, "consumer.ts"),
      `import { createClient, formatGhs, InsufficientBalanceError, type Order } from "@databundle/client"

const client = createClient({ apiKey: "key", baseUrl: "https://api.example.com/api/v1" })
export const main: Promise<string> = client.balance().then((balance) => formatGhs(balance.main))
export const orderNumber = (order: Order): string => order.orderNumber
export const shortBy = (error: unknown): bigint =>
  error instanceof InsufficientBalanceError ? error.required - error.balance : 0n
// @ts-expect-error a bundle id is a number
export const wrongId = client.orders.create({ bundleId: "1", phoneNumber: "0241234567" })
`
    )
    const resolutions = {
      node16: { module: "Node16", moduleResolution: "Node16" },
      bundler: { module: "ESNext", moduleResolution: "Bundler" }
    }
    await Promise.all(
      Object.entries(resolutions).map(async ([name, options]) => {
        fs.writeFileSync(
          path.join(app, `tsconfig.${name}.json`),
          JSON.stringify({
            compilerOptions: {
              target: "ES2022",
              lib: ["ES2022", "DOM"],
              strict: true,
              exactOptionalPropertyTypes: true,
              noEmit: true,
              types: [],
              ...options
            },
            files: ["consumer.ts"]
          })
        )
        // The workspace's compiler, but everything it resolves is under the app.
        const { stdout } = await sh(
          process.execPath,
          [tsc, "-p", `tsconfig.${name}.json`, "--listFiles"],
          app,
          envIn(home)
        )
        const client = stdout.split("\n").filter((f) => f.includes("/node_modules/@databundle/client/dist/"))
        assert.isAbove(client.length, 0, name)
        // Only TypeScript's own lib files come from outside the app.
        const outside = stdout.split("\n").filter((f) =>
          f.includes("node_modules") && !f.startsWith(fs.realpathSync(app)) &&
          !f.startsWith(path.dirname(path.dirname(tsc)))
        )
        assert.deepStrictEqual(outside, [], name)
      })
    )
  })
})
