/**
 * The operator's console: its own chunk, loaded by the app's entry only under /console, with
 * its own stylesheet, its own client (the admin and console APIs, the operator's session and
 * CSRF token) and its own shell. The account holder's session is never asked for here, nor
 * the operator's there: the two sessions are separate cookies the server keeps apart.
 */
import { ApiFailure } from "../Api.js"
import { start } from "../App.js"
import { api, client } from "./Endpoints.js"
import { setMe } from "./Me.js"
import { CONSOLE_SHELL, pages } from "./Pages.js"
import { consolePath } from "./Paths.js"

declare const CONSOLE_STYLESHEET: string

/** Adds the console's stylesheet and resolves once it applies (or failed: the page still works). */
const stylesheet = () =>
  new Promise<void>((resolve) => {
    const link = document.createElement("link")
    link.rel = "stylesheet"
    link.href = CONSOLE_STYLESHEET
    link.addEventListener("load", () => resolve())
    link.addEventListener("error", () => resolve())
    document.head.appendChild(link)
  })

/** Starts the console. */
export const boot = async (): Promise<void> => {
  const [session] = await Promise.all([
    api.session().catch((error: unknown) => {
      if (!(error instanceof ApiFailure) || error.status !== 401) console.error(error)
      return undefined
    }),
    stylesheet()
  ])
  client.setCsrfToken(session?.csrf_token)
  setMe(session?.operator)
  const app = start(document.getElementById("app")!, pages, {
    shell: CONSOLE_SHELL,
    signedIn: session !== undefined,
    ...(session ? { name: session.operator.name } : {}),
    signOut: async () => {
      await api.signOut().catch(() => undefined)
      client.setCsrfToken(undefined)
    }
  })
  client.whenSignedOut((failure) => {
    if (!app.signedIn()) return
    app.setSignedIn(false)
    app.notice(failure.message)
    app.go(`${consolePath("signIn")}?next=${encodeURIComponent(location.pathname + location.search)}`, {
      replace: true
    })
  })
}
