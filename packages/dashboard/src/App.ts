/**
 * The app shell: a skip link, one compact bar (the app's name, what the app puts beside it,
 * such as the balance, and a menu button), the navigation with "Sign out" in the menu (a
 * panel under the bar on a phone, a row in the bar on a wide screen), and `main`. The router
 * works over the History API; each page lives from its render to the next page change
 * (`Life`: its requests aborted, its waits ended), and on each change the new page's heading
 * takes the focus and the title changes, so a screen reader announces where it landed. The
 * account holder's pages and the operator's console each start one, with their own pages,
 * navigation and sign-in page (`Shell`).
 */
import { ApiFailure } from "./Api.js"
import { type Child, h, replace } from "./Dom.js"
import { begin, type Life, PageLeft } from "./Life.js"
import { type PageName, pathOf, route } from "./Paths.js"

/** What a page is given. */
export interface Context {
  readonly params: Record<string, string>
  readonly query: URLSearchParams
  readonly app: App
  /** The page's lifetime: its requests take `life.signal`, its waits `life.sleep`. */
  readonly life: Life
}

/** A page of the app. */
export interface Page {
  readonly title: string
  /** Shown without a session (sign-in, registration, email links). */
  readonly public?: boolean
  /** Only without a session (sign-in, registration): a signed-in visitor goes home instead. */
  readonly guestOnly?: boolean
  readonly render: (context: Context) => Node | Promise<Node>
}

/** The shell's state and actions, given to every page. */
export interface App {
  /** Whether a session is open (as far as the page knows). */
  readonly signedIn: () => boolean
  readonly setSignedIn: (signedIn: boolean, name?: string) => void
  /** Goes to a page (pushes a history entry unless `replace`). */
  readonly go: (path: string, options?: { readonly replace?: boolean }) => void
  /** Shows the current page again, afresh (after a change that concerns all of it). */
  readonly reload: () => void
  /** A message for the next page to show once (why the visitor was sent to sign in). */
  readonly notice: (message: string) => void
  /** The notice left for this page, taken once. */
  readonly takeNotice: () => string | undefined
}

/** What differs between the account holder's app and the operator's console. */
export interface Shell<P extends string> {
  /** The app's name and where it leads; the documents' title suffix is the name too. */
  readonly brand: string
  readonly home: string
  readonly signIn: string
  readonly nav: ReadonlyArray<readonly [path: string, label: string]>
  /** The page a path is, with its parameters (undefined: not this app's). */
  readonly route: (path: string) => { readonly page: P; readonly params: Record<string, string> } | undefined
  /** What the bar shows beside the name when signed in (the holder's balance). */
  readonly bar?: () => Child
  /** What the menu shows above "Sign out" (the holder's test-mode switch). */
  readonly menu?: () => Child
  /** A row under the bar on every page (the holder's test-mode banner). */
  readonly banner?: () => Child
}

/** The account holder's shell, without what the holder's entry adds (`bar`, `menu`, `banner`); the pages a reseller uses most first. */
export const DASHBOARD_SHELL: Shell<PageName> = {
  brand: "Data bundles",
  home: pathOf("home"),
  signIn: pathOf("signIn"),
  nav: ([
    ["home", "Home"],
    ["buy", "Buy"],
    ["bulk", "Bulk"],
    ["orders", "Orders"],
    ["wallet", "Wallet"],
    ["fund", "Fund"],
    ["keys", "API keys"],
    ["webhooks", "Webhooks"]
  ] as const).map(([page, label]) => [pathOf(page), label] as const),
  route
}

/** Starts the app in `root` with its pages; `signOut` ends the session on the server. */
export const start = <P extends string>(
  root: HTMLElement,
  pages: Record<P, Page>,
  options: {
    readonly shell: Shell<P>
    readonly signedIn: boolean
    readonly name?: string
    readonly signOut: () => Promise<void>
  }
): App => {
  const shell = options.shell
  let signedIn = options.signedIn
  let userName = options.name ?? ""
  let notice: string | undefined
  const main = h("main", { id: "main", tabindex: "-1" })
  const header = h("header", { class: "bar" })
  let renderCount = 0
  let ending: () => void = () => {}

  // An icon on the bar (its name for screen readers), so the name and the balance keep their room.
  const menuButton = h("button", {
    type: "button",
    class: "menu-button",
    "aria-expanded": "false",
    "aria-controls": "menu"
  }, h("span", { class: "visually-hidden" }, "Menu"))
  const setOpen = (open: boolean) => {
    menuButton.setAttribute("aria-expanded", String(open))
    header.classList.toggle("open", open)
  }
  menuButton.addEventListener("click", () => setOpen(menuButton.getAttribute("aria-expanded") !== "true"))
  // Escape closes the menu and gives the focus back to its button.
  header.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && header.classList.contains("open")) {
      setOpen(false)
      menuButton.focus()
    }
  })
  document.addEventListener("click", (event) => {
    if (!header.contains(event.target as Node)) setOpen(false)
  })

  const renderHeader = (current: string) => {
    setOpen(false)
    const brand = h("a", { href: shell.home, class: "brand" }, shell.brand)
    if (!signedIn) {
      replace(header, brand, h("a", { href: shell.signIn, class: "bar-link" }, "Sign in"))
      return
    }
    const signOut = h("button", { type: "button", class: "link" }, "Sign out")
    signOut.addEventListener("click", () => {
      signOut.disabled = true
      options.signOut().finally(() => {
        app.setSignedIn(false)
        app.go(shell.signIn)
      })
    })
    replace(
      header,
      brand,
      shell.bar?.(),
      menuButton,
      h(
        "nav",
        { id: "menu", class: "menu", "aria-label": "Main" },
        h("p", { class: "who" }, userName),
        h(
          "ul",
          null,
          shell.nav.map(([href, label]) =>
            h("li", null, h("a", { href, "aria-current": href === current ? "page" : undefined }, label))
          )
        ),
        shell.menu?.(),
        signOut
      ),
      shell.banner?.()
    )
  }

  const render = async () => {
    const mine = ++renderCount
    // The page being left: its requests and waits end now.
    ending()
    const { end, life } = begin()
    ending = end
    const path = location.pathname
    const found = shell.route(path)
    if (found === undefined) {
      renderHeader(path)
      document.title = `Not found · ${shell.brand}`
      replace(
        main,
        h("h1", { tabindex: "-1" }, "Page not found"),
        h("p", null, h("a", { href: shell.home }, "Go home"))
      )
      return
    }
    const page = pages[found.page]
    if (!page.public && !signedIn) {
      const back = path + location.search
      return app.go(`${shell.signIn}?next=${encodeURIComponent(back)}`, { replace: true })
    }
    if (page.guestOnly && signedIn) {
      return app.go(shell.home, { replace: true })
    }
    renderHeader(path)
    document.title = `${page.title} · ${shell.brand}`
    main.setAttribute("aria-busy", "true")
    let content: Node
    try {
      content = await page.render({ params: found.params, query: new URLSearchParams(location.search), app, life })
    } catch (error) {
      if (error instanceof PageLeft || (error instanceof ApiFailure && error.status === 401)) return
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
    },
    reload: () => void render(),
    notice: (message) => {
      notice = message
    },
    takeNotice: () => {
      const taken = notice
      notice = undefined
      return taken
    }
  }

  // Same-origin links to this app's pages stay in it; anything else (the other app's pages
  // too) is left to the browser.
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return
    const link = (event.target as Element).closest("a")
    if (!link || link.target || link.hasAttribute("download") || link.getAttribute("href")?.startsWith("#")) return
    const url = new URL(link.href, location.href)
    if (url.origin !== location.origin || shell.route(url.pathname) === undefined) return
    event.preventDefault()
    app.go(url.pathname + url.search)
  })
  addEventListener("popstate", () => void render())

  replace(root, h("a", { href: "#main", class: "skip" }, "Skip to content"), header, main)
  void render()
  return app
}
