/**
 * The operator's console pages by path, all under `/console`: the console's router matches
 * them, and the build adds them to `dist/pages.json` so the server answers them with the app.
 * Data only.
 */
import { matchPath } from "../Paths.js"

/** A console page's path template; `:name` is one path segment. */
export const CONSOLE_PAGES = {
  overview: "/console",
  signIn: "/console/sign-in",
  money: "/console/money",
  orders: "/console/orders",
  accounts: "/console/accounts",
  account: "/console/accounts/:id",
  catalog: "/console/catalog",
  webhooks: "/console/webhooks",
  actions: "/console/actions",
  operators: "/console/operators"
} as const

/** A console page's name. */
export type ConsolePageName = keyof typeof CONSOLE_PAGES

/** The console page a path is, with its parameters. */
export const consoleRoute = (
  path: string
): { readonly page: ConsolePageName; readonly params: Record<string, string> } | undefined => {
  for (const [page, template] of Object.entries(CONSOLE_PAGES)) {
    const params = matchPath(template, path)
    if (params !== undefined) return { page: page as ConsolePageName, params }
  }
  return undefined
}

/** A console page's path with its parameters filled in. */
export const consolePath = (page: ConsolePageName, params: Record<string, string> = {}): string =>
  CONSOLE_PAGES[page].replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ""))
