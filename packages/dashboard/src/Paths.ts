/**
 * The dashboard's pages by path: the router matches them in the browser, and the build writes
 * them to `dist/pages.json` so the server answers exactly these paths with the app (any other
 * path stays a 404). Data only.
 */

/** A page's path template; `:name` is one path segment. */
export const PAGES = {
  home: "/",
  signIn: "/sign-in",
  register: "/register",
  verifyEmail: "/verify-email",
  resetPassword: "/reset-password",
  fund: "/fund",
  keys: "/keys",
  buy: "/buy",
  bulk: "/bulk",
  orders: "/orders",
  order: "/orders/:number",
  wallet: "/wallet",
  webhooks: "/webhooks"
} as const

/** A page's name. */
export type PageName = keyof typeof PAGES

/** The parameters of a template's match, or undefined when `path` is not that page. */
export const matchPath = (template: string, path: string): Record<string, string> | undefined => {
  const want = template.split("/")
  const got = path.split("/")
  if (want.length !== got.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!
    const g = got[i]!
    if (w.startsWith(":")) {
      if (g.length === 0) return undefined
      params[w.slice(1)] = decodeURIComponent(g)
    } else if (w !== g) {
      return undefined
    }
  }
  return params
}

/** The page a path is, with its parameters. */
export const route = (
  path: string
): { readonly page: PageName; readonly params: Record<string, string> } | undefined => {
  for (const [page, template] of Object.entries(PAGES)) {
    const params = matchPath(template, path)
    if (params !== undefined) return { page: page as PageName, params }
  }
  return undefined
}

/** A page's path with its parameters filled in. */
export const pathOf = (page: PageName, params: Record<string, string> = {}): string =>
  PAGES[page].replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ""))
