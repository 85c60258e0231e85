/**
 * Every endpoint the console calls: the admin API's (which takes the operator's session
 * cookie) and the console API's (signing in and out), typed from the contract's schemas in
 * their wire form through type-only imports, each name checked against the contract's types.
 * The client is the console's own, with the console's session state (`makeClient`), over the
 * routes the build read from `AdminApi` and `ConsoleApi` (`CONSOLE_ROUTES`).
 */
import type * as Acc from "@databundle/contract/Account"
import type * as A from "@databundle/contract/AdminApi"
import type * as Cat from "@databundle/contract/Catalog"
import type * as C from "@databundle/contract/ConsoleApi"
import type * as Op from "@databundle/contract/Operator"
import type * as O from "@databundle/contract/Order"
import type * as U from "@databundle/contract/User"
import type * as W from "@databundle/contract/Wallet"
import type { HttpApi, HttpApiGroup } from "@effect/platform"
import { type CallOptions, makeClient, type Routes } from "../Api.js"

/** The routes, as JSON text the build inlines (see build.mjs). */
declare const CONSOLE_ROUTES: string

type Names<Api> = Api extends HttpApi.HttpApi<any, infer G, any, any> ? {
    [Group in G as HttpApiGroup.HttpApiGroup.Name<Group>]: `${HttpApiGroup.HttpApiGroup.Name<
      Group
    >}.${HttpApiGroup.HttpApiGroup.Endpoints<Group>["name"]}`
  }[HttpApiGroup.HttpApiGroup.Name<G>]
  : never
/** `group.endpoint` of every endpoint of the two contracts. */
type EndpointName = Names<typeof A.AdminApi> | Names<typeof C.ConsoleApi>

type Wire<S extends { readonly Encoded: unknown }> = S["Encoded"]
type Payload<S extends { readonly Encoded: unknown }> = { readonly payload: Wire<S> }
type Query = { readonly query: Record<string, string | number | undefined> }
type Account = { readonly path: { readonly account_id: number } }
type IdempotencyKey = { readonly headers: { readonly "idempotency-key": string } }

/** The console's client: its own CSRF token and sign-out handling. */
export const client = makeClient(JSON.parse(CONSOLE_ROUTES) as Routes, { signIn: "consoleAccess.signIn" })

const endpoint =
  <In extends CallOptions, Out>(name: EndpointName) => (options?: In & Pick<CallOptions, "signal">): Promise<Out> =>
    client.call<Out>(name, options)

/** Wire types the pages read. */
export type Session = Wire<typeof C.ConsoleSessionResponse>
export type AccountsPage = Wire<typeof A.AccountsPage>
export type AccountSummary = AccountsPage["accounts"][number]
export type AccountDetail = Wire<typeof A.AccountResponse>
export type Payment = Wire<typeof A.AdminPaymentResponse>["payment"]
export type Order = Wire<typeof A.AdminOrderResponse>["order"]
export type OrdersPage = Wire<typeof A.AdminOrdersPage>
export type LedgerPage = Wire<typeof A.LedgerPage>
export type Audit = Wire<typeof A.AuditResponse>
export type ImportResult = Wire<typeof A.ImportResponse>
export type CatalogFile = Wire<typeof Cat.CatalogFile>
export type Network = Wire<typeof A.AdminNetworksResponse>["networks"][number]
export type Bundle = Network["bundles"][number]
export type Stats = Wire<typeof A.StatsResponse>
export type EndpointHealth = Wire<typeof A.WebhooksHealthResponse>["endpoints"][number]
export type Delivery = Wire<typeof A.AdminDeliveryResponse>["delivery"]
export type Action = Wire<typeof A.ActionsPage>["actions"][number]
export type ActionsPage = Wire<typeof A.ActionsPage>

/** The calls. */
export const api = {
  signIn: endpoint<{ readonly payload: { readonly email: string; readonly password: string } }, Session>(
    "consoleAccess.signIn"
  ),
  session: endpoint<{}, Session>("consoleSession.current"),
  signOut: endpoint<{}, Wire<typeof C.Done>>("consoleSession.signOut"),
  changePassword: endpoint<Payload<typeof U.ChangePasswordPayload>, Wire<typeof C.Done>>(
    "consoleSession.changePassword"
  ),
  accounts: endpoint<Query, AccountsPage>("accounts.list"),
  account: endpoint<Account, AccountDetail>("accounts.show"),
  updateAccount: endpoint<Account & Payload<typeof Acc.UpdateAccountPayload>, AccountDetail>(
    "accounts.update"
  ),
  ledger: endpoint<Account & Query, LedgerPage>("wallets.ledger"),
  fund: endpoint<Account & IdempotencyKey & Payload<typeof W.FundWalletPayload>, Wire<typeof A.WalletMovement>>(
    "wallets.fund"
  ),
  adjust: endpoint<Account & IdempotencyKey & Payload<typeof W.AdjustWalletPayload>, Wire<typeof A.WalletMovement>>(
    "wallets.adjust"
  ),
  audit: endpoint<{}, Audit>("wallets.audit"),
  payments: endpoint<Query, Wire<typeof A.AdminPaymentsPage>>("paymentsAdmin.list"),
  approve: endpoint<{ readonly path: { readonly payment_number: string } }, Wire<typeof A.AdminPaymentResponse>>(
    "paymentsAdmin.approve"
  ),
  decline: endpoint<
    { readonly path: { readonly payment_number: string }; readonly payload: { readonly reason: string } },
    Wire<typeof A.AdminPaymentResponse>
  >("paymentsAdmin.decline"),
  orders: endpoint<Query, OrdersPage>("ordersAdmin.list"),
  order: endpoint<{ readonly path: { readonly order_number: string } }, Wire<typeof A.AdminOrderResponse>>(
    "ordersAdmin.get"
  ),
  resolve: endpoint<
    { readonly path: { readonly order_number: string } } & Payload<typeof O.ResolveOrderPayload> & IdempotencyKey,
    Wire<typeof A.AdminOrderResponse>
  >("ordersAdmin.resolve"),
  networks: endpoint<{}, Wire<typeof A.AdminNetworksResponse>>("catalogAdmin.networks"),
  priceGroups: endpoint<{}, Wire<typeof A.PriceGroupsResponse>>("catalogAdmin.priceGroups"),
  updateNetwork: endpoint<
    { readonly path: { readonly network_id: number }; readonly payload: { readonly active: boolean } },
    Wire<typeof A.AdminNetworkResponse>
  >("catalogAdmin.updateNetwork"),
  updateBundle: endpoint<
    { readonly path: { readonly bundle_id: number } } & Payload<typeof Cat.UpdateBundlePayload>,
    Wire<typeof A.AdminBundleResponse>
  >("catalogAdmin.updateBundle"),
  exportCatalog: endpoint<{}, Wire<typeof A.CatalogExport>>("catalogFile.export"),
  previewImport: endpoint<{ readonly payload: CatalogFile }, ImportResult>("catalogFile.preview"),
  importCatalog: endpoint<{ readonly payload: CatalogFile }, ImportResult>("catalogFile.import"),
  stats: endpoint<Query, Stats>("stats.get"),
  webhooks: endpoint<{}, Wire<typeof A.WebhooksHealthResponse>>("webhooksAdmin.health"),
  deliveries: endpoint<Account & Query, Wire<typeof A.AdminDeliveriesPage>>("webhooksAdmin.deliveries"),
  resend: endpoint<
    { readonly path: { readonly account_id: number; readonly event_id: string } },
    Wire<typeof A.AdminDeliveryResponse>
  >("webhooksAdmin.resend"),
  actions: endpoint<Query, ActionsPage>("actions.list"),
  operators: endpoint<{}, Wire<typeof A.OperatorsResponse>>("operators.list"),
  createOperator: endpoint<Payload<typeof Op.CreateOperatorPayload>, Wire<typeof A.OperatorResponse>>(
    "operators.create"
  ),
  updateOperator: endpoint<
    { readonly path: { readonly operator_id: number } } & Payload<typeof Op.UpdateOperatorPayload>,
    Wire<typeof A.OperatorResponse>
  >("operators.update"),
  disableOperator: endpoint<{ readonly path: { readonly operator_id: number } }, Wire<typeof A.OperatorResponse>>(
    "operators.disable"
  )
}
