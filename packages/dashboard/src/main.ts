/**
 * The dashboard's entry: under /console, loads the operator's console (a chunk of its own,
 * so the account holder's pages never carry it); anywhere else, learns whether a session is
 * open, then starts the shell with every page, the balance in its bar and the test-mode
 * switch in its menu.
 */
import { ApiFailure, setCsrfToken, whenSignedOut } from "./Api.js"
import { type App, DASHBOARD_SHELL, type Page, start } from "./App.js"
import { api } from "./Endpoints.js"
import { register, resetPassword, signIn, verifyEmail } from "./pages/Access.js"
import { bulk } from "./pages/Bulk.js"
import { buy } from "./pages/Buy.js"
import { fund } from "./pages/Fund.js"
import { home } from "./pages/Home.js"
import { keys } from "./pages/Keys.js"
import { order, orders } from "./pages/Orders.js"
import { wallet } from "./pages/Wallet.js"
import { webhooks } from "./pages/Webhooks.js"
import { type PageName, pathOf, route } from "./Paths.js"
import { balanceChip, modeSwitch, showBalance, side, testBanner, testing } from "./TestMode.js"

const pages: Record<PageName, Page> = {
  home,
  signIn,
  register,
  verifyEmail,
  resetPassword,
  fund,
  keys,
  buy,
  bulk,
  orders,
  order,
  wallet,
  webhooks
}

/**
 * An emailed link may name its page in the fragment (`/#/verify-email?token=…`), so that no
 * part of it but `/` reaches a server: it becomes that page with the token still in the
 * fragment (`/verify-email#token=…`), never in a path or query.
 */
const fromFragmentLink = () => {
  if (!location.hash.startsWith("#/")) return
  const inner = new URL(location.hash.slice(1), location.origin)
  if (route(inner.pathname) === undefined) return
  const rest = inner.searchParams.toString()
  history.replaceState(null, "", `${inner.pathname}${rest === "" ? "" : `#${rest}`}`)
}

/** A referral link (`/?ref=CODE`) opens the registration form with its code filled in. */
const fromReferralLink = () => {
  const code = new URLSearchParams(location.search).get("ref")
  if (location.pathname !== "/" || code === null || !/^[0-9A-Za-z]{4,32}$/.test(code)) return
  history.replaceState(null, "", `${pathOf("register")}?ref=${encodeURIComponent(code)}`)
}

const boot = async () => {
  if (location.pathname === "/console" || location.pathname.startsWith("/console/")) {
    const { boot: console } = await import("./console/Console.js")
    return console()
  }
  fromFragmentLink()
  fromReferralLink()
  let session: Awaited<ReturnType<typeof api.session>> | undefined
  try {
    session = await api.session()
    setCsrfToken(session.csrf_token)
  } catch (error) {
    if (!(error instanceof ApiFailure) || error.status !== 401) console.error(error)
  }
  // The bar's balance: the session's (live), or the test side's once read.
  if (session !== undefined && !testing()) showBalance(session.account.balance.main)
  if (session !== undefined && testing()) {
    api.ledger({ query: { per_page: 1, ...side() } }).then((answer) => showBalance(answer.balance.main), () => {})
  }
  const reload = () => app.reload()
  const app: App = start(document.getElementById("app")!, pages, {
    shell: {
      ...DASHBOARD_SHELL,
      bar: balanceChip,
      menu: () => modeSwitch(reload),
      banner: () => testBanner(reload)
    },
    signedIn: session !== undefined,
    ...(session ? { name: session.user.name } : {}),
    signOut: async () => {
      await api.signOut().catch(() => undefined)
      setCsrfToken(undefined)
    }
  })
  whenSignedOut((failure) => {
    if (!app.signedIn()) return
    app.setSignedIn(false)
    // Why, on the sign-in page: the session ended, or the account was suspended (with what to do).
    app.notice(failure.message)
    app.go(`${pathOf("signIn")}?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true })
  })
}

void boot()
