/**
 * Real data for the pages' lists, made through the APIs as people make it: a holder who
 * registered in the dashboard (verified by the emailed link), paid in several ways, bought,
 * made keys and a webhook; and operators, created with the admin token.
 */
import { ADMIN_TOKEN, type TestServer } from "@databundle/client/testing"
import * as http from "node:http"

/** A JSON answer, or a thrown error naming the call. */
const json = async (answer: Response, what: string): Promise<any> => {
  const body: any = await answer.json().catch(() => undefined)
  if (!answer.ok) throw new Error(`${what}: ${answer.status} ${JSON.stringify(body)}`)
  return body
}

/** The admin API with the token. */
export const admin = async (server: TestServer, method: string, path: string, body?: unknown): Promise<any> =>
  json(
    await fetch(`${server.origin}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }),
    `${method} ${path}`
  )

/** A signed-in holder, as the dashboard API sees them. */
export interface Holder {
  readonly email: string
  readonly password: string
  readonly accountId: number
  /** A dashboard API call with the session's cookie and CSRF token. */
  readonly call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<any>
}

/** Registers a holder, verifies the address from the emailed link and signs in. */
export const holder = async (server: TestServer, name: string, phone: string): Promise<Holder> => {
  const email = `${name.split(" ")[0]!.toLowerCase()}.${Date.now()}.${Math.floor(Math.random() * 1e6)}@example.com`
  const password = "correct horse battery"
  const anonymous = (path: string, body: unknown) =>
    fetch(`${server.origin}/dashboard/v1${path}`, {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  await json(await anonymous("/register", { name, email, phone, password }), "register")
  const link = await server.emailedLink(email, "verify-email")
  const token = new URL(new URL(link).hash.slice(1), server.origin).searchParams.get("token")
  await json(await anonymous("/email/verify", { token }), "verify")
  const signedIn = await anonymous("/session", { email, password })
  const session = await json(signedIn, "sign in")
  const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!
  const call: Holder["call"] = async (method, path, body, headers = {}) =>
    json(
      await fetch(`${server.origin}/dashboard/v1${path}`, {
        method,
        headers: {
          accept: "application/json",
          cookie,
          "x-csrf-token": session.csrf_token,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }),
      `${method} ${path}`
    )
  return { email, password, accountId: session.account.id, call }
}

let keys = 0
/** A payment by the holder; its Idempotency-Key is new. */
export const pay = (who: Holder, body: Record<string, unknown>) =>
  who.call("POST", "/payments", body, { "idempotency-key": `seed-${Date.now()}-${keys++}` })

/** An order by the holder, on the side named (`mode`), with a new reference. */
export const buy = (who: Holder, bundleId: number, phone: string, mode: "live" | "test" = "live") =>
  who.call("POST", "/orders", { bundle_id: bundleId, phone_number: phone, reference: `seed-${keys++}`, mode })

/** A webhook receiver on this machine that answers `status()` and keeps what it got. */
export const receiver = async (status: () => number = () => 200) => {
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = []
  const server = http.createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      received.push({ headers: request.headers, body })
      response.writeHead(status()).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address() as { port: number }
  return { url: `http://127.0.0.1:${address.port}/hooks`, received, close: () => server.close() }
}

/** Waits until `check` says yes (every 200 ms, 30 s at most). */
export const until = async (check: () => Promise<boolean>, what: string): Promise<void> => {
  for (let i = 0; i < 150; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`waited in vain for ${what}`)
}
