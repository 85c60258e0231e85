/**
 * `bundles-server admin ...`: the operator's commands, laid out like the reseller's `bundles`:
 * one module per command group under `admin/` (catalog, accounts, keys, wallet, audit,
 * orders, payments, emails, operators, actions, commissions), each leaf one call of the admin API through the client derived from the contract
 * (`AdminClient`), and this small tree. `--json` prints the call's response body; otherwise
 * the output is text for people, printed with the terminal toolkit both command lines share.
 * Every leaf takes `--json`, `--url` and `--token` after the whole command.
 */
import { Command } from "@effect/cli"
import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { accounts } from "./admin/Accounts.js"
import { actions } from "./admin/Actions.js"
import { audit } from "./admin/Audit.js"
import { catalog } from "./admin/Catalog.js"
import { commissions } from "./admin/Commissions.js"
import { emails } from "./admin/Emails.js"
import { keys } from "./admin/Keys.js"
import { operators } from "./admin/Operators.js"
import { orders } from "./admin/Orders.js"
import { payments } from "./admin/Payments.js"
import { upstreams } from "./admin/Upstreams.js"
import { wallet } from "./admin/Wallet.js"
import * as Logging from "./Logging.js"

/**
 * A failed admin command whose message is already on stderr (and, with `--json`, its body on
 * stdout): the binary exits with status 1 without printing it again. The toolkit's, as for `bundles`.
 */
export { CliFailure } from "@databundle/terminal/Failure"

/**
 * `bundles-server admin ...`: the operator's commands. They bring their own HttpClient (Node's
 * http, whose agent closes with the command, and which reaches any port, unlike fetch).
 */
export const command = Command.make("admin").pipe(
  Command.withDescription("Operate a running server through its admin API"),
  Command.withSubcommands([
    catalog,
    accounts,
    keys,
    wallet,
    audit,
    orders,
    upstreams,
    payments,
    emails,
    operators,
    actions,
    commissions
  ]),
  Command.provide(Layer.mergeAll(NodeHttpClient.layer, Logging.toStderr))
)
