/**
 * The verification snippets of docs/webhooks.md, taken from the document as it is written and
 * run in their own languages (Node, Python, and PHP when `php` is installed) against a real
 * delivery from the server: each accepts it, and refuses it with the body altered, with another
 * secret, and with an old timestamp.
 */
import { targets } from "@databundle/core/testing"
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { adminClient, newAccount, resellerClient, serverLayer } from "./Harness.js"

const doc = fs.readFileSync(new URL("../../../docs/webhooks.md", import.meta.url), "utf8")

/** The first fenced block of `language` under the heading `heading`. */
const snippet = (heading: string, language: string): string => {
  const section = doc.slice(doc.indexOf(heading))
  const match = new RegExp("```" + language + "\\n([\\s\\S]*?)```").exec(section)
  if (match === null) throw new Error(`no ${language} block under ${heading}`)
  return match[1]!
}

interface Case {
  readonly secret: string
  readonly headers: Record<string, string>
  readonly body: string
}

/** The cases each snippet is run on, with the answer it must give. */
const cases = (delivery: Case): ReadonlyArray<[string, Case, boolean]> => [
  ["the delivery as sent", delivery, true],
  ["the body altered", { ...delivery, body: delivery.body.replace("\"test\":true", "\"test\":false") }, false],
  ["another secret", { ...delivery, secret: "whsec_" + "Zz99".repeat(10) }, false],
  ["a timestamp ten minutes old", {
    ...delivery,
    headers: { ...delivery.headers, "webhook-timestamp": String(Math.floor(Date.now() / 1000) - 600) }
  }, false]
]

const hasPhp = spawnSync("php", ["--version"]).status === 0

describe("the verification snippets of docs/webhooks.md", () => {
  layer(serverLayer(targets[0]!), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.scoped("accept a real delivery and refuse altered ones, in Node, Python and PHP", () =>
      Effect.gen(function*() {
        const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = []
        const receiver = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const server = http.createServer((request, response) => {
              let body = ""
              request.setEncoding("utf8")
              request.on("data", (chunk: string) => body += chunk)
              request.on("end", () => {
                received.push({ headers: request.headers, body })
                response.writeHead(204).end()
              })
            })
            await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
            return server
          }),
          (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
        )
        const account = yield* newAccount(0n)
        const admin = yield* adminClient
        yield* admin.accounts.update({
          path: { account_id: account.id },
          payload: { webhook_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }
        })
        const client = yield* resellerClient(account.key)
        yield* client.events.trigger({ payload: { type: "wallet.funded" } })
        const deadline = Date.now() + 20_000
        while (received.length === 0 && Date.now() < deadline) yield* Effect.sleep("25 millis")
        assert.lengthOf(received, 1)
        const { secret } = (yield* client.webhooks.settings()).webhook
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(received[0]!.headers)) headers[name] = String(value)
        const delivery: Case = { secret, headers, body: received[0]!.body }

        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-docs-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const node = path.join(dir, "verify.mjs")
        fs.writeFileSync(node, snippet("### Node", "js"))
        const python = snippet("### Python", "python") +
          "\nimport json, sys\nc = json.load(sys.stdin)\n" +
          "print('true' if verify_webhook(c['secret'], c['headers'], c['body'].encode()) else 'false')\n"
        const php = snippet("### PHP", "php") +
          "\n$c = json_decode(file_get_contents('php://stdin'), true);\n" +
          "echo verify_webhook($c['secret'], $c['headers'], $c['body']) ? 'true' : 'false';\n"
        fs.writeFileSync(path.join(dir, "verify.php"), php)

        const run = (command: string, args: ReadonlyArray<string>, input: Case) =>
          execFileSync(command, args, { input: JSON.stringify(input), encoding: "utf8" }).trim()
        const runners: Array<[string, (input: Case) => string]> = [
          ["node", (input) =>
            run(process.execPath, [
              "--input-type=module",
              "-e",
              `import { verifyWebhook } from ${JSON.stringify(pathToFileURL(node).href)}\n` +
              "let text = ''; process.stdin.on('data', (d) => text += d).on('end', () => {\n" +
              "  const c = JSON.parse(text)\n" +
              "  console.log(String(verifyWebhook(c.secret, c.headers, Buffer.from(c.body))))\n" +
              "})"
            ], input)],
          ["python3", (input) => run("python3", ["-c", python], input)]
        ]
        if (hasPhp) runners.push(["php", (input) => run("php", [path.join(dir, "verify.php")], input)])
        for (const [language, verify] of runners) {
          for (const [what, input, expected] of cases(delivery)) {
            assert.strictEqual(verify(input), String(expected), `${language}: ${what}`)
          }
        }
      }))
  })
})
