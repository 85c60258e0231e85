/**
 * HTTPS served by the binary itself: every answer carries HSTS, and a renewed certificate is
 * taken up without a restart, on SIGHUP (which no longer stops the server) and when its file
 * changes; a broken pair is refused and the old certificate kept, with a log line each time.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as https from "node:https"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Processes from "./Processes.js"

const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url))

/** The fingerprint of a PEM certificate. */
const fingerprintOf = (pem: string) => new crypto.X509Certificate(pem).fingerprint256

/** One GET over a new connection: status, HSTS header and the certificate the server showed. */
const get = (url: string) =>
  Effect.async<{ status: number; hsts: string | undefined; fingerprint: string }, Error>((resume) => {
    const request = https.get(`${url}/healthz`, { rejectUnauthorized: false, agent: false }, (response) => {
      const certificate = (response.socket as import("node:tls").TLSSocket).getPeerX509Certificate()
      response.resume()
      response.on("end", () =>
        resume(Effect.succeed({
          status: response.statusCode!,
          hsts: response.headers["strict-transport-security"],
          fingerprint: certificate!.fingerprint256
        })))
    })
    request.on("error", (error) => resume(Effect.fail(error)))
  })

/** Polls until the server shows `fingerprint` (the file watch looks every 5 s). */
const waitFor = (url: string, fingerprint: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 150; i++) {
      if ((yield* get(url)).fingerprint === fingerprint) return true
      yield* Effect.sleep("100 millis")
    }
    return false
  })

describe("HTTPS by the server itself", () => {
  it.scopedLive(
    "HSTS on every answer; the certificate reloaded on SIGHUP and when its file changes",
    () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bundles-tls-reload-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const cert = path.join(dir, "cert.pem")
        const key = path.join(dir, "key.pem")
        const first = fs.readFileSync(fixture("tls-cert.pem"), "utf8")
        const second = fs.readFileSync(fixture("tls-cert-2.pem"), "utf8")
        fs.writeFileSync(cert, first)
        fs.copyFileSync(fixture("tls-key.pem"), key)
        const server = yield* Processes.start({
          BUNDLES_DATA_DIR: path.join(dir, "data"),
          BUNDLES_ADMIN_TOKEN: "adm_tls_reload_test_token_0123456789",
          TLS_CERT: cert,
          TLS_KEY: key
        })
        const answer = yield* get(server.url)
        assert.strictEqual(answer.status, 200)
        assert.strictEqual(answer.hsts, "max-age=31536000")
        assert.strictEqual(answer.fingerprint, fingerprintOf(first))

        // SIGHUP: the second pair, written key first so the pair is whole when the signal comes.
        fs.copyFileSync(fixture("tls-key-2.pem"), key)
        fs.writeFileSync(cert, second)
        server.child.kill("SIGHUP")
        assert.isTrue(yield* waitFor(server.url, fingerprintOf(second)))
        assert.include(server.output(), "\"certificate reloaded\"")

        // A broken pair (the first certificate with the second key) is refused; the second stays.
        fs.writeFileSync(cert, first)
        server.child.kill("SIGHUP")
        yield* Effect.sleep("500 millis")
        assert.include(server.output(), "\"certificate reload failed\"")
        assert.strictEqual((yield* get(server.url)).fingerprint, fingerprintOf(second))

        // The file watch: the first pair again, with no signal.
        fs.copyFileSync(fixture("tls-key.pem"), key)
        fs.writeFileSync(cert, first)
        const now = new Date(Date.now() + 2_000)
        fs.utimesSync(cert, now, now)
        assert.isTrue(yield* waitFor(server.url, fingerprintOf(first)))
        assert.include(server.output(), "\"trigger\":\"file changed\"")
        assert.strictEqual(server.child.exitCode, null)
      }),
    60_000
  )
})
