/**
 * Mounting the reseller server inside another framework: a Hono app that serves its own
 * pages and hands `/api/v1` and `/admin/v1` to the server's web-standard handler.
 *
 * Run it from the repository root (embedded database in ./.bundles, or DATABASE_URL):
 *   pnpm --filter @databundle/examples hono
 */
import { WebHandler } from "@databundle/server"
import { serve } from "@hono/node-server"
import { Hono } from "hono"

/** Builds the Hono app around a bundles handler. */
export const makeApp = (bundles: { readonly handler: (request: Request) => Promise<Response> }) => {
  const app = new Hono()
  app.get("/", (c) => c.text("My data shop. The reseller API lives under /api/v1."))
  app.all("/api/v1/*", (c) => bundles.handler(c.req.raw))
  app.all("/admin/v1/*", (c) => bundles.handler(c.req.raw))
  return app
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bundles = WebHandler.make()
  const server = serve({ fetch: makeApp(bundles).fetch, port: Number(process.env.PORT ?? 3000), hostname: "127.0.0.1" })
  console.log(`Hono app with the reseller API on http://127.0.0.1:${process.env.PORT ?? 3000}`)
  const stop = () => server.close(() => void bundles.dispose().then(() => process.exit(0)))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
}
