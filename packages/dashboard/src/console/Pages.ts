/** The console's pages and its shell (brand, navigation, sign-in page). */
import type { Page, Shell } from "../App.js"
import { account, accounts } from "./pages/Accounts.js"
import { actions } from "./pages/Actions.js"
import { catalog } from "./pages/Catalog.js"
import { money } from "./pages/Money.js"
import { operators } from "./pages/Operators.js"
import { orders } from "./pages/Orders.js"
import { overview } from "./pages/Overview.js"
import { signIn } from "./pages/SignIn.js"
import { webhooks } from "./pages/Webhooks.js"
import { type ConsolePageName, consolePath, consoleRoute } from "./Paths.js"

/** Every console page by name. */
export const pages: Record<ConsolePageName, Page> = {
  overview,
  signIn,
  money,
  orders,
  accounts,
  account,
  catalog,
  webhooks,
  actions,
  operators
}

/** The console's shell. */
export const CONSOLE_SHELL: Shell<ConsolePageName> = {
  brand: "Operator console",
  home: consolePath("overview"),
  signIn: consolePath("signIn"),
  nav: ([
    ["overview", "Overview"],
    ["money", "Money"],
    ["orders", "Orders"],
    ["accounts", "Accounts"],
    ["catalog", "Catalogue"],
    ["webhooks", "Webhooks"],
    ["actions", "Action log"],
    ["operators", "Operators"]
  ] as const).map(([page, label]) => [consolePath(page), label] as const),
  route: consoleRoute
}
