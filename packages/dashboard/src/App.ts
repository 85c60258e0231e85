/**
 * The app shell: the landmarks (skip link, header with navigation, main), the router over
 * the History API, and the signed-in state. On each page change the new page's heading
 * takes the focus and the title changes, so a screen reader announces where it landed.
 */
import { ApiFailure } from "./Api.js"
import { h, replace } from "./Dom.js"
import { type PageName, pathOf, route } from "./Paths.js"

/** What a page is given. */
export interface Context {
  readonly params: Record<string, string>
  readonly query: URLSearchParams
  readonly app: App
}

/** A page of the dashboard. */
export interface Page {
  readonly title: string
  /** Shown without a session (sign-in, registration, email links). */
  readonly public?: boolean
  readonly render: (context: Context) => Node | Promise<Node>
}

/** The shell's state and actions, given to every page. */
export interface App {
  /** Whether a session is open (as far as the page knows). */
  readonly signedIn: () => boolean
  readonly setSignedIn: (signedIn: boolean, name?: string) => void
  /** Goes to a page (pushes a history entry unless `replace`). */
  readonly go: (path: string, options?: { readonly replace?: boolean }) => void
}

const NAV: ReadonlyArray<readonly [PageName, string]> = [
  ["home", "Home"],
  ["buy", "Buy"],
  ["bulk", "Bulk"],
  ["orders", "Orders"],
  ["wallet", "Wallet"],
  ["fund", "Fund"],
  ["keys", "API keys"],
  ["webhooks", "Webhooks"]
]

/** Starts the app in `root` with its pages; `signOut` ends the session on the server. */
export const start = (
  root: HTMLElement,
  pages: Record<PageName, Page>,
  options: { readonly signedIn: boolean; readonly name?: string; readonly signOut: () => Promise<void> }
): App => {
  let signedIn = options.signedIn
  let userName = options.name ?? ""
  const main = h("main", { id: "main", tabindex: "-1" })
  const header = h("header", { class: "top" })
  let renderCount = 0

  const renderHeader = (current: string) => {
    const brand = h("a", { href: "/", class: "brand" }, "Data bundles")
    if (!signedIn) {
      replace(header, brand, h("nav", { "aria-label": "Account" }, h("a", { href: pathOf("signIn") }, "Sign in")))
      return
    }
    const signOut = h("button", { type: "button", class: "link" }, "Sign out")
    signOut.addEventListener("click", () => {
      signOut.disabled = true
      options.signOut().finally(() => {
        app.setSignedIn(false)
        app.go(pathOf("signIn"))
      })
    })
    replace(
      header,
      brand,
      h("span", { class: "muted-on-brand" }, userName),
      signOut,
      h(
        "nav",
        { class: "main", "aria-label": "Main" },
        h(
          "ul",
          null,
          NAV.map(([page, label]) => {
            const href = pathOf(page)
            return h("li", null, h("a", { href, "aria-current": href === current ? "page" : undefined }, label))
          })
        )
      )
    )
  }

  const render = async () => {
    const mine = ++renderCount
    const path = location.pathname
    const found = route(path)
    if (found === undefined) {
      renderHeader(path)
      document.title = "Not found · Data bundles"
      replace(main, h("h1", { tabindex: "-1" }, "Page not found"), h("p", null, h("a", { href: "/" }, "Go home")))
      return
    }
    const page = pages[found.page]
    if (!page.public && !signedIn) {
      const back = path + location.search
      return app.go(`${pathOf("signIn")}?next=${encodeURIComponent(back)}`, { replace: true })
    }
    if (page.public && signedIn && (found.page === "signIn" || found.page === "register")) {
      return app.go(pathOf("home"), { replace: true })
    }
    renderHeader(path)
    document.title = `${page.title} · Data bundles`
    main.setAttribute("aria-busy", "true")
    let content: Node
    try {
      content = await page.render({ params: found.params, query: new URLSearchParams(location.search), app })
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) return
      content = h(
        "div",
        null,
        h("h1", { tabindex: "-1" }, page.title),
        h("p", { class: "form-message", role: "alert" }, error instanceof Error ? error.message : String(error))
      )
    }
    if (mine !== renderCount) return
    main.removeAttribute("aria-busy")
    replace(main, content)
    const heading = main.querySelector("h1")
    heading?.setAttribute("tabindex", "-1")
    heading?.focus()
  }

  const app: App = {
    signedIn: () => signedIn,
    setSignedIn: (value, name) => {
      signedIn = value
      if (name !== undefined) userName = name
    },
    go: (path, opts) => {
      if (opts?.replace) history.replaceState(null, "", path)
      else history.pushState(null, "", path)
      void render()
    }
  }

  // Same-origin links to pages stay in the app; anything else is left to the browser.
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return
    const link = (event.target as Element).closest("a")
    if (!link || link.target || link.hasAttribute("download") || link.getAttribute("href")?.startsWith("#")) return
    const url = new URL(link.href, location.href)
    if (url.origin !== location.origin || route(url.pathname) === undefined) return
    event.preventDefault()
    app.go(url.pathname + url.search)
  })
  addEventListener("popstate", () => void render())

  replace(root, h("a", { href: "#main", class: "skip" }, "Skip to content"), header, main)
  void render()
  return app
}
