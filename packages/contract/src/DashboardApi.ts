/**
 * The web dashboard's API, mounted at `/dashboard/v1`: what the account holders' browser app
 * calls. Signed-in requests carry the session cookie (`DashboardAuth`) and, when they change
 * anything (POST, PUT, PATCH, DELETE), the CSRF token in `x-csrf-token`. The forms that come
 * before a session (register, verify, sign in, reset) are anonymous and limited per address.
 * An API key is never accepted here, and the session cookie never anywhere else.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { WebhookUrl } from "./Account.js"
import { BadRequest, Conflict, Forbidden, Succeeded, Unauthorized, withRequestErrors } from "./ApiError.js"
import { ApiKeyId, ApiKeyNotFound, NamedApiKey } from "./ApiKey.js"
import * as Attention from "./Attention.js"
import { Bundle, BundleUnavailable } from "./Bundle.js"
import { EarningsResponse } from "./Commission.js"
import { Delivery, DeliveryNotFound, ListDeliveriesParams, TestEventPayload } from "./DeliveryLog.js"
import { CarriesSecret, RateLimitScopes } from "./EndpointPolicy.js"
import { IdempotencyKey } from "./Idempotency.js"
import { IdempotencyHeaders } from "./Idempotency.js"
import { IntegerText } from "./Identifier.js"
import { DemoMail, DemoMailboxParams } from "./Mail.js"
import { modeOrLive } from "./Mode.js"
import { Cedis } from "./Money.js"
import { Network, NetworkId, NetworkNotFound } from "./Network.js"
import { ListOrdersParams, Order, OrderNotFound, PlaceOrderPayload, Reference } from "./Order.js"
import { envelope, pageFields } from "./Page.js"
import {
  CreatePaymentPayload,
  ListPaymentsParams,
  Payment,
  PaymentMethodInfo,
  PaymentNotFound,
  SubmitCodePayload
} from "./Payment.js"
import { MobileNumber, OrderWarning } from "./Phone.js"
import { DashboardAuth } from "./Session.js"
import * as Statement from "./Statement.js"
import { text } from "./Text.js"
import {
  AccountSuspended,
  AccountView,
  ChangePasswordPayload,
  EmailNotVerified,
  EmailPayload,
  RegisterPayload,
  ResetPasswordPayload,
  SignInPayload,
  UserView,
  VerifyEmailPayload
} from "./User.js"
import { Balance, InsufficientBalance, TransferPayload, TransferResponse } from "./Wallet.js"

/** The path prefix of the dashboard API. */
export const DASHBOARD_PREFIX = "/dashboard/v1"

/** Something on the home page that needs the holder's attention (`Attention.AttentionItem`). */
export const AttentionItem = Attention.AttentionItem

/** A ledger entry with the payment it came from (`Statement.StatementEntry`). */
export const DashboardLedgerEntry = Statement.StatementEntry

/**
 * Which side of the account a request acts on: `live` (the default) or `test`, the account's
 * test data (its test wallet of play money and test orders, which only the simulator fulfils),
 * as a test API key does. Home, the orders (placing, listing, reading) and the ledger take it;
 * funding, keys and webhooks are the account's own in either mode.
 */
const dashboardMode = modeOrLive(
  "`test` acts on the account's test wallet and test orders; `live` (the default) on the real ones"
)

/** The query of an endpoint that acts on one side of the account. */
export const ModeParams = Schema.Struct({ mode: dashboardMode }).annotations({ parseOptions: { errors: "all" } })

/** Query parameters of GET /ledger (`Statement.StatementParams`, and the mode). */
export const LedgerParams = Schema.Struct({ ...Statement.StatementParams.fields, mode: dashboardMode }).annotations({
  parseOptions: { errors: "all" }
})

/** Query parameters of GET /orders: the public API's, and the mode. */
export const DashboardOrdersParams = Schema.Struct({ ...ListOrdersParams.fields, mode: dashboardMode }).annotations({
  parseOptions: { errors: "all" }
})

/** An API key with its name (`ApiKey.NamedApiKey`). */
export const DashboardApiKey = NamedApiKey

/** A plain acknowledgement: `{ success: true, message }`. */
export const Done = Schema.Struct({ success: Succeeded, message: Schema.String })

/** 200 of sign-in and of GET /session: who is signed in, and the CSRF token to send back. */
export const SessionResponse = Schema.Struct({
  success: Succeeded,
  user: UserView,
  account: AccountView,
  csrf_token: Schema.String.annotations({
    description: "Send it in the x-csrf-token header on every POST, PUT, PATCH and DELETE of this session"
  }),
  expires_at: Schema.Date
})

/** 200 of GET /home. */
export const HomeResponse = Schema.Struct({
  success: Succeeded,
  balance: Balance,
  recent_orders: Schema.Array(Order).annotations({ description: "The five newest orders" }),
  attention: Schema.Array(AttentionItem)
})

/** 200 of GET /networks. */
export const NetworksResponse = Schema.Struct({ success: Succeeded, networks: Schema.Array(Network) })

/** 200 of GET /networks/{network_id}/bundles: priced for the signed-in account. */
export const BundlesResponse = Schema.Struct({
  success: Succeeded,
  network: Schema.String,
  bundles: Schema.Array(Bundle)
})

/**
 * The body of POST /orders from the dashboard: as the public API's, but `reference` is
 * required, so a double click or a reload that repeats the request never buys twice (the
 * page makes one reference per purchase, and per row of a bulk file, before sending), and the
 * number must be a mobile one, as the client reads numbers (a fixed line cannot take data).
 * `mode: "test"` buys with the test wallet (a test order).
 */
export const DashboardOrderPayload = Schema.Struct({
  ...PlaceOrderPayload.fields,
  phone_number: MobileNumber,
  reference: Reference,
  mode: dashboardMode
}).annotations({ identifier: "DashboardOrderPayload", parseOptions: { errors: "all" } })

/** 200 of POST /orders (also a replay, then with `Idempotent-Replayed: true`). */
export const PlacedResponse = Schema.Struct({
  success: Succeeded,
  message: Schema.String,
  order: Order,
  wallet_balance: Cedis,
  replayed: Schema.Boolean.annotations({ description: "True when this reference had already bought the order" }),
  warnings: Schema.Array(OrderWarning).annotations({
    description: "What the number's prefix says against the bundle's network; empty when nothing"
  })
})

/** 200 of GET /orders/{order_number}. */
export const OrderResponse = Schema.Struct({ success: Succeeded, order: Order })

/** 200 of GET /orders. */
export const OrdersPage = envelope("orders", Order)

/** 200 of GET /ledger. */
export const LedgerPage = Schema.Struct({
  success: Succeeded,
  balance: Balance,
  ...pageFields("entries", Schema.Array(DashboardLedgerEntry))
})

/** The headers of POST /payments: the `Idempotency-Key` is required. */
export const PaymentHeaders = Schema.Struct({
  "idempotency-key": IdempotencyKey.annotations({
    description: "One per payment attempt, made by the page before sending: a repeat returns the same payment"
  })
})

/** 200 of GET /payments/methods. */
export const PaymentMethodsResponse = Schema.Struct({ success: Succeeded, methods: Schema.Array(PaymentMethodInfo) })

/** 201 of POST /payments (200 and `Idempotent-Replayed: true` for a repeat), and 200 of GET /payments/{n}. */
export const PaymentResponse = Schema.Struct({ success: Succeeded, payment: Payment })

/** 200 of GET /payments. */
export const PaymentsPage = envelope("payments", Payment)

/** The body of POST /keys. */
export const CreateKeyPayload = Schema.Struct({
  name: text(64),
  mode: modeOrLive("`test` for a key on the test wallet and simulator, `live` (the default) for real orders")
}).annotations({ parseOptions: { errors: "all" } })

/** 201 of POST /keys: the only time the key itself is shown. */
export const KeyCreated = Schema.Struct({
  success: Succeeded,
  key: DashboardApiKey,
  api_key: Schema.String.annotations({ description: "The key itself, shown only in this response" })
})

/** 200 of GET /keys. */
export const KeysResponse = Schema.Struct({ success: Succeeded, keys: Schema.Array(DashboardApiKey) })

/** 200 of DELETE /keys/{key_id}. */
export const KeyRevoked = Schema.Struct({ success: Succeeded, key: DashboardApiKey })

/** The webhook settings of the account (the secret itself only through reveal and rotate). */
export const WebhookSettings = Schema.Struct({
  success: Succeeded,
  url: Schema.NullOr(Schema.String),
  has_secret: Schema.Boolean
})

/** The body of PUT /webhook: `null` turns deliveries off. */
export const SetWebhookPayload = Schema.Struct({ url: Schema.NullOr(WebhookUrl) }).annotations({
  parseOptions: { errors: "all" }
})

/** 200 of revealing or rotating the webhook secret. */
export const WebhookSecretResponse = Schema.Struct({ success: Succeeded, secret: Schema.String })

/** 200 of GET /webhook/deliveries. */
export const DeliveriesPage = envelope("deliveries", Delivery)

/** 200 of a delivery: GET /webhook/deliveries/{event_id}, POST .../resend, POST /webhook/test. */
export const DeliveryResponse = Schema.Struct({ success: Succeeded, delivery: Delivery })

/** 200 of GET /demo/mailbox: the newest emails to the address, newest first. */
export const DemoMailboxResponse = Schema.Struct({ success: Succeeded, emails: Schema.Array(DemoMail) })

/** Registration, email verification, sign-in and password reset: the anonymous forms. */
export class AccessGroup extends HttpApiGroup.make("dashboardAccess")
  .add(
    HttpApiEndpoint.post("register", "/register")
      .setPayload(RegisterPayload)
      .addSuccess(Done, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Creates the user and the account (default price group, empty wallets) and emails a verification " +
          "link. An address already registered gets an email saying so instead; the answer is the same."
      )
  )
  .add(
    HttpApiEndpoint.post("verifyEmail", "/email/verify")
      .setPayload(VerifyEmailPayload)
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Verify the address with the token of the emailed link (a 422 on token when bad)")
  )
  .add(
    HttpApiEndpoint.post("resendVerification", "/email/resend")
      .setPayload(EmailPayload)
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Email a new verification link; the same answer whether or not the address is known")
  )
  .add(
    HttpApiEndpoint.post("signIn", "/session")
      .setPayload(SignInPayload)
      .addSuccess(SessionResponse)
      .addError(Unauthorized)
      .addError(EmailNotVerified)
      .addError(AccountSuspended)
      .annotate(CarriesSecret, true)
      .annotate(OpenApi.Summary, "Sign in: sets the session cookie and returns the CSRF token")
  )
  .add(
    HttpApiEndpoint.post("forgotPassword", "/password/forgot")
      .setPayload(EmailPayload)
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Email a password reset link; the same answer whether or not the address is known")
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/password/reset")
      .setPayload(ResetPasswordPayload)
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Set a new password with the token of the emailed link; ends every session")
  )
  .annotate(RateLimitScopes, ["dashboard", "access"])
{}

/**
 * The demo mailbox: with `serve --demo` on a loopback address and no SMTP server, the email the
 * server just sent to an address (its verification or reset link), so a newcomer needs no
 * terminal. Anywhere else it does not exist: a 404, as an unknown path.
 */
export class DemoGroup extends HttpApiGroup.make("dashboardDemo")
  .add(
    HttpApiEndpoint.get("mailbox", "/demo/mailbox")
      .setUrlParams(DemoMailboxParams)
      .addSuccess(DemoMailboxResponse)
      .annotate(CarriesSecret, true)
      .annotate(
        OpenApi.Description,
        "Only under `serve --demo` bound to loopback without SMTP (404 otherwise): the emails sent to the address " +
          "in the last hour, newest first, with their links."
      )
  )
{}

/** The signed-in session: who, sign out, change the password. */
export class SessionGroup extends HttpApiGroup.make("dashboardSession")
  .add(
    HttpApiEndpoint.get("current", "/session")
      .addSuccess(SessionResponse)
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.del("signOut", "/session")
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Sign out: ends the session and clears the cookie")
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/password")
      .setPayload(ChangePasswordPayload)
      .addSuccess(Done)
      .annotate(OpenApi.Summary, "Change the password (422 on current_password when wrong); ends the other sessions")
  )
  .middleware(DashboardAuth)
{}

/** The home page. */
export class HomeGroup extends HttpApiGroup.make("dashboardHome")
  .add(HttpApiEndpoint.get("home", "/home").setUrlParams(ModeParams).addSuccess(HomeResponse))
  .middleware(DashboardAuth)
{}

/** Networks and bundles, priced for the account. */
export class CatalogGroup extends HttpApiGroup.make("dashboardCatalog")
  .add(HttpApiEndpoint.get("networks", "/networks").addSuccess(NetworksResponse))
  .add(
    HttpApiEndpoint.get("bundles", "/networks/:network_id/bundles")
      .setPath(Schema.Struct({ network_id: IntegerText.pipe(Schema.compose(NetworkId)) }))
      .addSuccess(BundlesResponse)
      .addError(NetworkNotFound)
  )
  .middleware(DashboardAuth)
{}

/** Buying, and the orders. */
export class OrdersGroup extends HttpApiGroup.make("dashboardOrders")
  .add(
    HttpApiEndpoint.post("place", "/orders")
      .setPayload(DashboardOrderPayload)
      .addSuccess(PlacedResponse)
      .addError(InsufficientBalance)
      .addError(BundleUnavailable)
      .annotate(RateLimitScopes, ["dashboard", "orders"])
      .annotate(OpenApi.Summary, "Buy a bundle, paid from the main wallet; a repeated reference buys nothing")
  )
  .add(
    HttpApiEndpoint.get("list", "/orders")
      .setUrlParams(DashboardOrdersParams)
      .addSuccess(OrdersPage)
  )
  .add(
    HttpApiEndpoint.get("get", "/orders/:order_number")
      .setPath(Schema.Struct({ order_number: Schema.String }))
      .setUrlParams(ModeParams)
      .addSuccess(OrderResponse)
      .addError(OrderNotFound)
  )
  .middleware(DashboardAuth)
{}

/** The wallet's ledger. */
export class WalletGroup extends HttpApiGroup.make("dashboardWallet")
  .add(
    HttpApiEndpoint.get("ledger", "/ledger")
      .setUrlParams(LedgerParams)
      .addSuccess(LedgerPage)
      .annotate(OpenApi.Summary, "The balances and the ledger, newest first")
  )
  .add(
    HttpApiEndpoint.post("transfer", "/wallet/transfers")
      .setPayload(TransferPayload)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(TransferResponse)
      .addError(InsufficientBalance)
      .annotate(OpenApi.Summary, "Move referral or agent earnings to the main wallet (live wallets)")
  )
  .add(
    HttpApiEndpoint.get("earnings", "/earnings")
      .addSuccess(EarningsResponse)
      .annotate(OpenApi.Summary, "The referral code, the accounts referred, the sub-accounts and what each earned")
  )
  .middleware(DashboardAuth)
{}

/** Funding the wallet. */
export class PaymentsGroup extends HttpApiGroup.make("dashboardPayments")
  .add(HttpApiEndpoint.get("methods", "/payments/methods").addSuccess(PaymentMethodsResponse))
  .add(
    HttpApiEndpoint.post("create", "/payments")
      .setPayload(CreatePaymentPayload)
      .setHeaders(PaymentHeaders)
      .addSuccess(PaymentResponse, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Starts a payment. Mobile money sends a prompt to payer_number; a manual transfer waits for the " +
          "operator. The same Idempotency-Key returns the same payment (200, Idempotent-Replayed: true); " +
          "with another body, a 422."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/payments")
      .setUrlParams(ListPaymentsParams)
      .addSuccess(PaymentsPage)
  )
  .add(
    HttpApiEndpoint.get("get", "/payments/:payment_number")
      .setPath(Schema.Struct({ payment_number: Schema.String }))
      .addSuccess(PaymentResponse)
      .addError(PaymentNotFound)
  )
  .add(
    HttpApiEndpoint.post("submitCode", "/payments/:payment_number/otp")
      .setPath(Schema.Struct({ payment_number: Schema.String }))
      .setPayload(SubmitCodePayload)
      .addSuccess(PaymentResponse)
      .addError(PaymentNotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Send the one-time code the payer received, for a payment with awaiting_code")
      .annotate(
        OpenApi.Description,
        "A wrong code is a 422 with the gateway's message on `otp` and the payment still awaits a code; " +
          "a payment that awaits no code (settled, or never asked) is a 409. The payment is credited once, " +
          "whatever repeats or callbacks race it."
      )
  )
  .middleware(DashboardAuth)
{}

/** API keys: the profile's section. */
export class KeysGroup extends HttpApiGroup.make("dashboardKeys")
  .add(HttpApiEndpoint.get("list", "/keys").addSuccess(KeysResponse))
  .add(
    HttpApiEndpoint.post("create", "/keys")
      .setPayload(CreateKeyPayload)
      .addSuccess(KeyCreated, { status: 201 })
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.del("revoke", "/keys/:key_id")
      .setPath(Schema.Struct({ key_id: IntegerText.pipe(Schema.compose(ApiKeyId)) }))
      .addSuccess(KeyRevoked)
      .addError(ApiKeyNotFound)
  )
  .middleware(DashboardAuth)
{}

/** The webhook: URL, secret, test event, delivery log and resend. */
export class WebhooksGroup extends HttpApiGroup.make("dashboardWebhooks")
  .add(HttpApiEndpoint.get("settings", "/webhook").addSuccess(WebhookSettings))
  .add(
    HttpApiEndpoint.put("setUrl", "/webhook")
      .setPayload(SetWebhookPayload)
      .addSuccess(WebhookSettings)
      .annotate(OpenApi.Summary, "Set the URL (a secret is made with the first one), or null to stop deliveries")
  )
  .add(
    HttpApiEndpoint.post("revealSecret", "/webhook/secret")
      .addSuccess(WebhookSecretResponse)
      .annotate(CarriesSecret, true)
      .annotate(OpenApi.Summary, "Show the signing secret (a POST, so it needs the CSRF token and is never cached)")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhook/secret/rotate")
      .addSuccess(WebhookSecretResponse)
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.post("sendTest", "/webhook/test")
      .setPayload(TestEventPayload)
      .addSuccess(DeliveryResponse, { status: 202 })
      .annotate(
        OpenApi.Summary,
        "Queue a test event of a type (marked test: true, describing nothing real) to the URL; 422 without a URL"
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhook/deliveries")
      .setUrlParams(ListDeliveriesParams)
      .addSuccess(DeliveriesPage)
  )
  .add(
    HttpApiEndpoint.get("delivery", "/webhook/deliveries/:event_id")
      .setPath(Schema.Struct({ event_id: Schema.String }))
      .addSuccess(DeliveryResponse)
      .addError(DeliveryNotFound)
  )
  .add(
    HttpApiEndpoint.post("resend", "/webhook/deliveries/:event_id/resend")
      .setPath(Schema.Struct({ event_id: Schema.String }))
      .addSuccess(DeliveryResponse, { status: 202 })
      .addError(DeliveryNotFound)
      .addError(Conflict)
      .annotate(
        OpenApi.Summary,
        "Deliver the event again now to the current URL (the same event id); 409 while an attempt is in flight"
      )
  )
  .middleware(DashboardAuth)
{}

/** The dashboard API. */
export class DashboardApi extends HttpApi.make("dashboard")
  .add(AccessGroup)
  .add(SessionGroup)
  .add(HomeGroup)
  .add(CatalogGroup)
  .add(OrdersGroup)
  .add(WalletGroup)
  .add(PaymentsGroup)
  .add(KeysGroup)
  .add(WebhooksGroup)
  .add(DemoGroup)
  .addError(BadRequest)
  .addError(Unauthorized)
  .addError(Forbidden)
  .pipe(withRequestErrors)
  .prefix(DASHBOARD_PREFIX)
  .annotate(RateLimitScopes, ["dashboard"])
  .annotate(OpenApi.Title, "Data Bundle Dashboard API")
  .annotate(OpenApi.Version, "1")
{}
