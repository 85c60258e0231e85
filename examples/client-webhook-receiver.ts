/**
 * A webhook receiver on node:http that checks every delivery's signature with
 * `verifyWebhook` from `@databundle/client` before trusting it.
 *
 *   BUNDLES_WEBHOOK_SECRET=... PORT=4000 pnpm --filter @databundle/examples client:webhook
 *
 * Point the account at it (the operator's CLI prints the account's webhook secret). A receiver
 * on this machine is a private address: the server delivers to it under `serve --demo` or with
 * `BUNDLES_WEBHOOK_ALLOW_PRIVATE=1`, never otherwise.
 *   pnpm -s bundles-server admin accounts update ID --webhook-url http://127.0.0.1:4000/webhooks
 *   pnpm -s bundles-server admin accounts show ID
 *
 * Deliveries are at least once, so events are deduplicated by id. A delivery that fails the
 * check gets 400 and is never acted on.
 */
import {
  formatGhs,
  verifyWebhook,
  WEBHOOK_SIGNATURE_HEADER,
  type WebhookEvent,
  WebhookSignatureError
} from "@databundle/client"
import * as http from "node:http"

/** What the receiver needs. */
export interface ReceiverOptions {
  /** The account's webhook secret. */
  readonly secret: string
  /** Called once per event id, after its signature checked out. */
  readonly onEvent: (event: WebhookEvent) => void | Promise<void>
  /** Told about every refused delivery (default the console). */
  readonly onRefused?: ((reason: string) => void) | undefined
}

/** Most bytes of a delivery body read; events are small. */
const MAX_BODY = 256 * 1024

/** Builds the receiver: POST /webhooks, signature first, then the event once. */
export const makeReceiver = (options: ReceiverOptions): http.Server => {
  const seen = new Set<string>()
  const refused = options.onRefused ?? ((reason) => console.warn(`refused a delivery: ${reason}`))
  return http.createServer(async (request, response) => {
    if (request.method !== "POST" || request.url !== "/webhooks") {
      response.writeHead(404).end()
      return
    }
    // The raw bytes, exactly as sent: the signature covers them, not a re-serialised object.
    const chunks: Array<Buffer> = []
    let size = 0
    for await (const chunk of request) {
      size += (chunk as Buffer).length
      if (size > MAX_BODY) {
        response.writeHead(413).end()
        return
      }
      chunks.push(chunk as Buffer)
    }
    const body = Buffer.concat(chunks)
    let event: WebhookEvent
    try {
      event = await verifyWebhook({
        body: new Uint8Array(body),
        signature: request.headers[WEBHOOK_SIGNATURE_HEADER] as string | undefined,
        secret: options.secret
      })
    } catch (error) {
      if (error instanceof WebhookSignatureError) {
        refused(error.reason)
        response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: error.reason }))
      } else {
        console.error("could not check a delivery:", error)
        response.writeHead(500).end()
      }
      return
    }
    try {
      if (!seen.has(event.id)) {
        await options.onEvent(event)
        seen.add(event.id)
      }
      response.writeHead(204).end()
    } catch (error) {
      // A non-2xx answer makes the server deliver the event again later.
      console.error(`handling ${event.type} ${event.id} failed:`, error)
      response.writeHead(500).end()
    }
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.BUNDLES_WEBHOOK_SECRET
  if (secret === undefined || secret === "") {
    console.error("usage: BUNDLES_WEBHOOK_SECRET=... [PORT=4000] client-webhook-receiver.ts")
    process.exit(2)
  }
  const port = Number(process.env.PORT ?? 4000)
  const server = makeReceiver({
    secret,
    onEvent: (event) => {
      // The union is told apart by `type`; amounts are pesewas.
      const what = event.type === "order.successful" || event.type === "order.failed"
        ? `${event.data.order_number} ${event.data.bundle} to ${event.data.phone_number}`
        : `${formatGhs(event.data.amount)} (${event.data.reason}), balance ${formatGhs(event.data.balance)}`
      console.log(`${event.created_at.toISOString()} ${event.type} ${event.id} ${what}`)
    }
  })
  server.listen(port, "127.0.0.1", () => console.log(`webhook receiver on http://127.0.0.1:${port}/webhooks`))
  const stop = () => server.close(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
}
