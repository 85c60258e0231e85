/**
 * Every dashboard endpoint the page calls, typed from the contract's schemas (their wire
 * form, `Encoded`: cedis as numbers, instants as ISO strings) through type-only imports.
 * The name of each is checked against the contract's `DashboardApi` type, so renaming or
 * removing an endpoint there fails the type check here.
 */
import type * as C from "@databundle/contract/Commission"
import type * as D from "@databundle/contract/DashboardApi"
import type * as L from "@databundle/contract/DeliveryLog"
import type * as P from "@databundle/contract/Payment"
import type * as U from "@databundle/contract/User"
import type * as W from "@databundle/contract/Wallet"
import type { HttpApi, HttpApiGroup } from "@effect/platform"
import { call, type CallOptions, urlOf } from "./Api.js"

type Groups = typeof D.DashboardApi extends HttpApi.HttpApi<any, infer G, any, any> ? G : never
/** `group.endpoint` of every endpoint of the contract. */
type EndpointName = {
  [G in Groups as HttpApiGroup.HttpApiGroup.Name<G>]: `${HttpApiGroup.HttpApiGroup.Name<
    G
  >}.${HttpApiGroup.HttpApiGroup.Endpoints<G>["name"]}`
}[HttpApiGroup.HttpApiGroup.Name<Groups>]

type Wire<S extends { readonly Encoded: unknown }> = S["Encoded"]

/** What every call may add: the page's lifetime, a look at the answer's headers. */
type Extra = Pick<CallOptions, "signal" | "onHeaders">

const endpoint = <In extends CallOptions, Out>(name: EndpointName) => (options?: In & Extra): Promise<Out> =>
  call<Out>(name, options)

/** Wire types the pages read. */
export type Session = Wire<typeof D.SessionResponse>
export type Home = Wire<typeof D.HomeResponse>
export type Order = Home["recent_orders"][number]
export type OrdersPage = Wire<typeof D.OrdersPage>
export type LedgerPage = Wire<typeof D.LedgerPage>
export type Payment = Wire<typeof D.PaymentResponse>["payment"]
export type Key = Wire<typeof D.DashboardApiKey>
export type Delivery = Wire<typeof D.DeliveryResponse>["delivery"]
export type Bundle = Wire<typeof D.BundlesResponse>["bundles"][number]
export type Network = Wire<typeof D.NetworksResponse>["networks"][number]
export type Earnings = Wire<typeof C.EarningsResponse>

type Payload<S extends { readonly Encoded: unknown }> = { readonly payload: Wire<S> }
/** The side of the account a request acts on (`TestMode.side()`). */
type Side = { readonly mode?: "live" | "test" }
type Done = Wire<typeof D.Done>

/** The calls. */
export const api = {
  register: endpoint<Payload<typeof U.RegisterPayload>, Done>("dashboardAccess.register"),
  verifyEmail: endpoint<Payload<typeof U.VerifyEmailPayload>, Done>("dashboardAccess.verifyEmail"),
  resendVerification: endpoint<Payload<typeof U.EmailPayload>, Done>("dashboardAccess.resendVerification"),
  signIn: endpoint<Payload<typeof U.SignInPayload>, Session>("dashboardAccess.signIn"),
  forgotPassword: endpoint<Payload<typeof U.EmailPayload>, Done>("dashboardAccess.forgotPassword"),
  resetPassword: endpoint<Payload<typeof U.ResetPasswordPayload>, Done>("dashboardAccess.resetPassword"),
  session: endpoint<{}, Session>("dashboardSession.current"),
  signOut: endpoint<{}, Done>("dashboardSession.signOut"),
  changePassword: endpoint<Payload<typeof U.ChangePasswordPayload>, Done>("dashboardSession.changePassword"),
  home: endpoint<{ readonly query?: Side }, Home>("dashboardHome.home"),
  networks: endpoint<{}, Wire<typeof D.NetworksResponse>>("dashboardCatalog.networks"),
  bundles: endpoint<{ readonly path: { readonly network_id: number } }, Wire<typeof D.BundlesResponse>>(
    "dashboardCatalog.bundles"
  ),
  placeOrder: endpoint<Payload<typeof D.DashboardOrderPayload>, Wire<typeof D.PlacedResponse>>(
    "dashboardOrders.place"
  ),
  orders: endpoint<{ readonly query: Record<string, string | number | undefined> }, OrdersPage>(
    "dashboardOrders.list"
  ),
  order: endpoint<
    { readonly path: { readonly order_number: string }; readonly query?: Side },
    Wire<typeof D.OrderResponse>
  >(
    "dashboardOrders.get"
  ),
  ledger: endpoint<{ readonly query: Record<string, string | number | undefined> }, LedgerPage>(
    "dashboardWallet.ledger"
  ),
  transfer: endpoint<
    Payload<typeof W.TransferPayload> & { readonly headers: { readonly "idempotency-key": string } },
    Wire<typeof W.TransferResponse>
  >("dashboardWallet.transfer"),
  earnings: endpoint<{}, Earnings>("dashboardWallet.earnings"),
  paymentMethods: endpoint<{}, Wire<typeof D.PaymentMethodsResponse>>("dashboardPayments.methods"),
  createPayment: endpoint<
    Payload<typeof P.CreatePaymentPayload> & { readonly headers: { readonly "idempotency-key": string } },
    Wire<typeof D.PaymentResponse>
  >("dashboardPayments.create"),
  payments: endpoint<{ readonly query: Record<string, string | number | undefined> }, Wire<typeof D.PaymentsPage>>(
    "dashboardPayments.list"
  ),
  payment: endpoint<{ readonly path: { readonly payment_number: string } }, Wire<typeof D.PaymentResponse>>(
    "dashboardPayments.get"
  ),
  submitPaymentCode: endpoint<
    Payload<typeof P.SubmitCodePayload> & { readonly path: { readonly payment_number: string } },
    Wire<typeof D.PaymentResponse>
  >("dashboardPayments.submitCode"),
  keys: endpoint<{}, Wire<typeof D.KeysResponse>>("dashboardKeys.list"),
  createKey: endpoint<Payload<typeof D.CreateKeyPayload>, Wire<typeof D.KeyCreated>>("dashboardKeys.create"),
  revokeKey: endpoint<{ readonly path: { readonly key_id: number } }, Wire<typeof D.KeyRevoked>>(
    "dashboardKeys.revoke"
  ),
  webhook: endpoint<{}, Wire<typeof D.WebhookSettings>>("dashboardWebhooks.settings"),
  setWebhook: endpoint<Payload<typeof D.SetWebhookPayload>, Wire<typeof D.WebhookSettings>>(
    "dashboardWebhooks.setUrl"
  ),
  revealSecret: endpoint<{}, Wire<typeof D.WebhookSecretResponse>>("dashboardWebhooks.revealSecret"),
  rotateSecret: endpoint<{}, Wire<typeof D.WebhookSecretResponse>>("dashboardWebhooks.rotateSecret"),
  sendTest: endpoint<Payload<typeof L.TestEventPayload>, Wire<typeof D.DeliveryResponse>>(
    "dashboardWebhooks.sendTest"
  ),
  deliveries: endpoint<{ readonly query: Record<string, string | number | undefined> }, Wire<typeof D.DeliveriesPage>>(
    "dashboardWebhooks.deliveries"
  ),
  demoMailbox: endpoint<{ readonly query: { readonly email: string } }, Wire<typeof D.DemoMailboxResponse>>(
    "dashboardDemo.mailbox"
  ),
  resend: endpoint<{ readonly path: { readonly event_id: string } }, Wire<typeof D.DeliveryResponse>>(
    "dashboardWebhooks.resend"
  )
}

/** The URL of a list endpoint with its query (for links). */
export { urlOf }
