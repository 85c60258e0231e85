/**
 * The operator's admin API, mounted at `/admin/v1`: accounts, API keys, wallet funding and
 * adjustments, the catalogue, stuck orders, the ledger audit, operators, the action log, the
 * console's figures and webhook health. It is guarded by the admin bearer token or by a
 * signed-in operator's session cookie (`bundles_operator`); with the cookie, every POST, PUT,
 * PATCH and DELETE must carry the session's CSRF token in `x-csrf-token` (else a 403).
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AccountFields,
  AccountId,
  AccountNotFound,
  AccountStatus,
  AccountSummary,
  CreateAccountPayload,
  UpdateAccountPayload
} from "./Account.js"
import { BadRequest, Conflict, Forbidden, Succeeded, Unauthorized, withRequestErrors } from "./ApiError.js"
import { AccountDetail, ApiKeyId, ApiKeyNotFound, ApiKeyView, NewApiKey } from "./ApiKey.js"
import { BundleId, BundleNotFound } from "./Bundle.js"
import {
  AdminBundle,
  AdminNetwork,
  CatalogFile,
  ImportSummary,
  UpdateBundlePayload,
  UpdateNetworkPayload
} from "./Catalog.js"
import { CommissionsResponse as CommissionsResponseSchema, SetCommissionsPayload } from "./Commission.js"
import { Delivery, DeliveryNotFound, ListDeliveriesParams } from "./DeliveryLog.js"
import { BodyLimit, CarriesSecret, OwnersOnly, RateLimitScopes } from "./EndpointPolicy.js"
import { IdempotencyHeaders } from "./Idempotency.js"
import { integerParam, IntegerText } from "./Identifier.js"
import { AuditReport, LedgerEntry } from "./Ledger.js"
import { ListMailParams, MailId, MailNotFound, OutboxMail } from "./Mail.js"
import { modeOrLive } from "./Mode.js"
import { NetworkId, NetworkNotFound } from "./Network.js"
import {
  CreateOperatorPayload,
  OPERATOR_COOKIE,
  OperatorId,
  OperatorNotFound,
  OperatorSummary,
  ResetOperatorPasswordPayload,
  UpdateOperatorPayload
} from "./Operator.js"
import { ListActionsParams, OperatorAction } from "./OperatorAction.js"
import { AdminOrder, OrderNotFound, OrderStatus, Reference, ResolveOrderPayload } from "./Order.js"
import { ADMIN_LISTS, ADMIN_PAYMENTS, envelope, params } from "./Page.js"
import { AdminPayment, DeclinePaymentPayload, ListPaymentsParams, PaymentNotFound } from "./Payment.js"
import { PhoneNumber } from "./Phone.js"
import { StatsFields, StatsParams } from "./Stats.js"
import { text } from "./Text.js"
import { CatalogSyncPayload, CatalogSyncResponse, UpstreamsResponse } from "./Upstream.js"
import { AdjustWalletPayload, Balance, FundWalletPayload, InsufficientBalance, WalletKind } from "./Wallet.js"
import { EndpointHealth } from "./WebhookDelivery.js"

/** The path prefix of the admin API. */
export const ADMIN_PREFIX = "/admin/v1"

/**
 * Authenticates an admin request by its `Authorization: Bearer <token>` header, or by a
 * signed-in operator's session cookie (with `x-csrf-token` on changes).
 */
export class AdminAuth extends HttpApiMiddleware.Tag<AdminAuth>()("contract/AdminAuth", {
  failure: Unauthorized,
  security: {
    bearer: HttpApiSecurity.bearer,
    operator: HttpApiSecurity.apiKey({ key: OPERATOR_COOKIE, in: "cookie" })
  }
}) {}

/** 201 of POST /accounts. */
export const AccountCreated = Schema.Struct({ success: Succeeded, ...AccountFields })

/** 200 of GET /accounts. */
export const AccountsPage = envelope("accounts", AccountSummary)

/** 200 of GET and PATCH /accounts/{account_id}. */
export const AccountResponse = Schema.Struct({ success: Succeeded, ...AccountDetail.fields })

/** 201 of POST /accounts/{account_id}/keys: the only time the key itself is shown. */
export const ApiKeyCreated = Schema.Struct({ success: Succeeded, ...NewApiKey.fields })

/** 200 of DELETE /accounts/{account_id}/keys/{key_id}. */
export const ApiKeyRevoked = Schema.Struct({ success: Succeeded, key: ApiKeyView })

/** 200 of GET /accounts/{account_id}/ledger. */
export const LedgerPage = envelope("entries", LedgerEntry)

/** 200 of GET /audit. */
export const AuditResponse = Schema.Struct({ success: Succeeded, ...AuditReport.fields })

/** 200 of POST /catalog. */
export const ImportResponse = Schema.Struct({ success: Succeeded, ...ImportSummary.fields })

/** 200 of GET /catalog: the catalogue in the import file's format. */
export const CatalogExport = Schema.Struct({ success: Succeeded, ...CatalogFile.fields })

const AccountPath = Schema.Struct({ account_id: IntegerText.pipe(Schema.compose(AccountId)) })

/** Accounts. */
export class AccountsGroup extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.post("create", "/accounts")
      .setPayload(CreateAccountPayload)
      .addSuccess(AccountCreated, { status: 201 })
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.get("list", "/accounts")
      .setUrlParams(Schema.Struct({
        ...params(ADMIN_LISTS),
        status: Schema.optional(AccountStatus),
        search: Schema.optional(text(100)).annotations({
          description: "Part of the name, the user's email or phone, or the account id itself"
        })
      }))
      .addSuccess(AccountsPage)
  )
  .add(
    HttpApiEndpoint.get("show", "/accounts/:account_id")
      .setPath(AccountPath)
      .addSuccess(AccountResponse)
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.patch("update", "/accounts/:account_id")
      .setPath(AccountPath)
      .setPayload(UpdateAccountPayload)
      .addSuccess(AccountResponse)
      .annotate(CarriesSecret, true)
  )
  .addError(AccountNotFound)
{}

/** 200 of a wallet movement: the new balances and the ledger entry written. */
export const WalletMovement = Schema.Struct({ success: Succeeded, balance: Balance, entry: LedgerEntry })

/** API keys of an account. */
export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/accounts/:account_id/keys")
      .setPath(AccountPath)
      .setUrlParams(Schema.Struct({
        mode: modeOrLive("`test` for a key on the account's test wallet and the simulator; `live` by default")
      }))
      .addSuccess(ApiKeyCreated, { status: 201 })
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.del("revoke", "/accounts/:account_id/keys/:key_id")
      .setPath(Schema.Struct({ ...AccountPath.fields, key_id: IntegerText.pipe(Schema.compose(ApiKeyId)) }))
      .addSuccess(ApiKeyRevoked)
      .addError(ApiKeyNotFound)
  )
  .addError(AccountNotFound)
{}

/** Funding, adjustments and the ledger of an account's wallets. */
export class WalletsGroup extends HttpApiGroup.make("wallets")
  .add(
    HttpApiEndpoint.post("fund", "/accounts/:account_id/wallet/fund")
      .setPath(AccountPath)
      .setPayload(FundWalletPayload)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(WalletMovement)
  )
  .add(
    HttpApiEndpoint.post("adjust", "/accounts/:account_id/wallet/adjust")
      .setPath(AccountPath)
      .setPayload(AdjustWalletPayload)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(WalletMovement)
      .addError(InsufficientBalance)
  )
  .add(
    HttpApiEndpoint.get("ledger", "/accounts/:account_id/ledger")
      .setPath(AccountPath)
      .setUrlParams(Schema.Struct({
        ...params(ADMIN_LISTS),
        wallet: Schema.optional(WalletKind),
        mode: modeOrLive("The live wallets (the default) or the account's test wallets")
      }))
      .addSuccess(LedgerPage)
  )
  .add(
    HttpApiEndpoint.get("audit", "/audit")
      .addSuccess(AuditResponse)
      .annotate(OpenApi.Summary, "Check every wallet against its ledger and every order against its payments")
  )
  .addError(AccountNotFound)
{}

/** The catalogue file: import and export. */
export class CatalogFileGroup extends HttpApiGroup.make("catalogFile")
  .add(
    HttpApiEndpoint.post("import", "/catalog")
      .setPayload(CatalogFile)
      .addSuccess(ImportResponse)
  )
  .add(
    HttpApiEndpoint.post("preview", "/catalog/preview")
      .setPayload(CatalogFile)
      .addSuccess(ImportResponse)
      .annotate(
        OpenApi.Summary,
        "A dry run of an import: what it would create and update (`changes`), changing nothing"
      )
  )
  .add(
    HttpApiEndpoint.get("export", "/catalog")
      .addSuccess(CatalogExport)
  )
{}

/** 200 of GET /orders (admin). */
export const AdminOrdersPage = envelope("orders", AdminOrder)

/** 200 of GET /orders/{order_number} and of resolving it (admin). */
export const AdminOrderResponse = Schema.Struct({ success: Succeeded, order: AdminOrder })

/** Orders of every account, and settling a stuck one. */
export class OrdersAdminGroup extends HttpApiGroup.make("ordersAdmin")
  .add(
    HttpApiEndpoint.get("list", "/orders")
      .setUrlParams(Schema.Struct({
        ...params(ADMIN_LISTS),
        status: Schema.optional(OrderStatus),
        account_id: Schema.optional(IntegerText.pipe(Schema.compose(AccountId))),
        phone_number: Schema.optional(PhoneNumber).annotations({
          description: "Only orders for this number (either form: 024..., 23324...)"
        }),
        reference: Schema.optional(Reference).annotations({ description: "Only the order with this reference" }),
        older_than: Schema.optional(integerParam(1, 525_600)).annotations({
          description: "Only orders placed more than this many minutes ago (stuck pending orders)"
        }),
        sort: Schema.optional(
          Schema.Literal("newest", "oldest").annotations({ message: () => "must be newest or oldest" })
        )
          .annotations({ description: "newest first (default), or oldest first: the pending queue's order" }),
        mode: modeOrLive("Orders of live keys (the default) or of test keys")
      }))
      .addSuccess(AdminOrdersPage)
  )
  .add(
    HttpApiEndpoint.get("get", "/orders/:order_number")
      .setPath(Schema.Struct({ order_number: Schema.String }))
      .addSuccess(AdminOrderResponse)
      .addError(OrderNotFound)
  )
  .add(
    HttpApiEndpoint.post("resolve", "/orders/:order_number/resolve")
      .setPath(Schema.Struct({ order_number: Schema.String }))
      .setPayload(ResolveOrderPayload)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(AdminOrderResponse)
      .addError(OrderNotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Settle a pending order; failing it refunds the main wallet")
  )
{}

/** The upstreams fulfilment buys from, and the catalogue sync from them. */
export class UpstreamsGroup extends HttpApiGroup.make("upstreams")
  .add(
    HttpApiEndpoint.get("list", "/upstreams")
      .addSuccess(UpstreamsResponse)
      .annotate(OpenApi.Summary, "The configured upstreams with their balances")
  )
  .add(
    HttpApiEndpoint.post("catalogSync", "/upstreams/catalog-sync")
      .setPayload(CatalogSyncPayload)
      .addSuccess(CatalogSyncResponse)
      .annotate(OpenApi.Summary, "Create, price and deactivate our bundles from the upstreams' catalogues")
  )
{}

/** 200 of GET /payments (admin). */
export const AdminPaymentsPage = envelope("payments", AdminPayment)

/** 200 of GET /payments/{payment_number}, and of approving or declining it (admin). */
export const AdminPaymentResponse = Schema.Struct({ success: Succeeded, payment: AdminPayment })

const PaymentPath = Schema.Struct({ payment_number: Schema.String })

/** Payments of every account; approving or declining a manual transfer. */
export class PaymentsAdminGroup extends HttpApiGroup.make("paymentsAdmin")
  .add(
    HttpApiEndpoint.get("list", "/payments")
      .setUrlParams(Schema.Struct({
        ...ListPaymentsParams.fields,
        per_page: params(ADMIN_PAYMENTS).per_page,
        account_id: Schema.optional(IntegerText.pipe(Schema.compose(AccountId))),
        reversed: Schema.optional(Schema.Literal("true")).annotations({
          description: "Only payments the gateway reversed after the wallet was credited (for the operator to settle)"
        })
      }))
      .addSuccess(AdminPaymentsPage)
  )
  .add(
    HttpApiEndpoint.get("get", "/payments/:payment_number")
      .setPath(PaymentPath)
      .addSuccess(AdminPaymentResponse)
      .addError(PaymentNotFound)
  )
  .add(
    HttpApiEndpoint.post("approve", "/payments/:payment_number/approve")
      .setPath(PaymentPath)
      .addSuccess(AdminPaymentResponse)
      .addError(PaymentNotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Approve a pending manual transfer: credits the main wallet once")
  )
  .add(
    HttpApiEndpoint.post("decline", "/payments/:payment_number/decline")
      .setPath(PaymentPath)
      .setPayload(DeclinePaymentPayload)
      .addSuccess(AdminPaymentResponse)
      .addError(PaymentNotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Decline a pending manual transfer")
  )
{}

/** 200 of GET /emails. */
export const MailPage = envelope("emails", OutboxMail)

/** 200 of requeueing an email. */
export const MailResponse = Schema.Struct({ success: Succeeded, email: OutboxMail })

/** The email outbox: what the server sent to dashboard users, newest first. */
export class MailAdminGroup extends HttpApiGroup.make("mailAdmin")
  .add(
    HttpApiEndpoint.get("list", "/emails")
      .setUrlParams(ListMailParams)
      .addSuccess(MailPage)
      .annotate(CarriesSecret, true)
  )
  .add(
    HttpApiEndpoint.post("requeue", "/emails/:email_id/requeue")
      .setPath(Schema.Struct({ email_id: IntegerText.pipe(Schema.compose(MailId)) }))
      .addSuccess(MailResponse)
      .addError(MailNotFound)
      .addError(Conflict)
      .annotate(CarriesSecret, true)
      .annotate(OpenApi.Summary, "Queue a failed email again, for a full round of attempts (409 unless failed)")
  )
{}

/** 200 of GET /operators. */
export const OperatorsResponse = Schema.Struct({ success: Succeeded, operators: Schema.Array(OperatorSummary) })

/** 201 of POST /operators and 200 of disabling one. */
export const OperatorResponse = Schema.Struct({ success: Succeeded, operator: OperatorSummary })

const OperatorPath = Schema.Struct({ operator_id: IntegerText.pipe(Schema.compose(OperatorId)) })

/**
 * The operators who sign in to the console. Every operator sees the list; only the admin
 * token and owners manage operators (`OwnersOnly`: an operator's session gets a 403).
 */
export class OperatorsGroup extends HttpApiGroup.make("operators")
  .add(HttpApiEndpoint.get("list", "/operators").addSuccess(OperatorsResponse))
  .add(
    HttpApiEndpoint.post("create", "/operators")
      .setPayload(CreateOperatorPayload)
      .addSuccess(OperatorResponse, { status: 201 })
      .addError(Conflict)
      .annotate(OwnersOnly, true)
      .annotate(
        OpenApi.Summary,
        "Create an operator (role operator unless owner) who signs in to the console with this password (409: email taken)"
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/operators/:operator_id")
      .setPath(OperatorPath)
      .setPayload(UpdateOperatorPayload)
      .addSuccess(OperatorResponse)
      .addError(OperatorNotFound)
      .annotate(OwnersOnly, true)
      .annotate(OpenApi.Summary, "Set an operator's role: owner or operator")
  )
  .add(
    HttpApiEndpoint.post("disable", "/operators/:operator_id/disable")
      .setPath(OperatorPath)
      .addSuccess(OperatorResponse)
      .addError(OperatorNotFound)
      .addError(Conflict)
      .annotate(OwnersOnly, true)
      .annotate(
        OpenApi.Summary,
        "Disable an operator: ends their sessions, refuses their sign-in (409: an operator's own session cannot)"
      )
  )
  .add(
    HttpApiEndpoint.post("resetPassword", "/operators/:operator_id/password")
      .setPath(OperatorPath)
      .setPayload(ResetOperatorPasswordPayload)
      .addSuccess(OperatorResponse)
      .addError(OperatorNotFound)
      .annotate(OwnersOnly, true)
      .annotate(OpenApi.Summary, "Set an operator's password (they forgot it): ends every session of theirs")
  )
{}

/** 200 of GET /actions. */
export const ActionsPage = envelope("actions", OperatorAction)

/** The action log: every change made through this API, newest first. */
export class ActionsGroup extends HttpApiGroup.make("actions")
  .add(
    HttpApiEndpoint.get("list", "/actions")
      .setUrlParams(ListActionsParams)
      .addSuccess(ActionsPage)
  )
{}

/** 200 of GET /stats. */
export const StatsResponse = Schema.Struct({ success: Succeeded, ...StatsFields })

/** The console's figures for its charts. */
export class StatsGroup extends HttpApiGroup.make("stats")
  .add(
    HttpApiEndpoint.get("get", "/stats")
      .setUrlParams(StatsParams)
      .addSuccess(StatsResponse)
      .annotate(OpenApi.Summary, "Daily totals, orders per hour by status, sales per network, pending orders by age")
  )
{}

/** 200 of GET /webhooks. */
export const WebhooksHealthResponse = Schema.Struct({ success: Succeeded, endpoints: Schema.Array(EndpointHealth) })

/** 200 of GET /accounts/{account_id}/webhook/deliveries. */
export const AdminDeliveriesPage = envelope("deliveries", Delivery)

/** 202 of resending a delivery. */
export const AdminDeliveryResponse = Schema.Struct({ success: Succeeded, delivery: Delivery })

/** Webhook health of every account, and an account's delivery log with resend. */
export class WebhooksAdminGroup extends HttpApiGroup.make("webhooksAdmin")
  .add(
    HttpApiEndpoint.get("health", "/webhooks")
      .addSuccess(WebhooksHealthResponse)
      .annotate(OpenApi.Summary, "Every account with a webhook URL or events: backlog, failing, abandoned")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/accounts/:account_id/webhook/deliveries")
      .setPath(AccountPath)
      .setUrlParams(ListDeliveriesParams)
      .addSuccess(AdminDeliveriesPage)
      .addError(AccountNotFound)
  )
  .add(
    HttpApiEndpoint.post("resend", "/accounts/:account_id/webhook/deliveries/:event_id/resend")
      .setPath(Schema.Struct({ ...AccountPath.fields, event_id: Schema.String }))
      .addSuccess(AdminDeliveryResponse, { status: 202 })
      .addError(AccountNotFound)
      .addError(DeliveryNotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Deliver the event again now (same id); 409 while an attempt is in flight")
  )
{}

/** 200 of GET /networks. */
export const AdminNetworksResponse = Schema.Struct({ success: Succeeded, networks: Schema.Array(AdminNetwork) })

/** 200 of PATCH /networks/{network_id}. */
export const AdminNetworkResponse = Schema.Struct({ success: Succeeded, network: AdminNetwork })

/** 200 of PATCH /bundles/{bundle_id}. */
export const AdminBundleResponse = Schema.Struct({ success: Succeeded, bundle: AdminBundle })

/** 200 of GET /price-groups: every price group by name, in name order. */
export const PriceGroupsResponse = Schema.Struct({ success: Succeeded, price_groups: Schema.Array(Schema.String) })

/** The catalogue one network or bundle at a time. */
export class CatalogAdminGroup extends HttpApiGroup.make("catalogAdmin")
  .add(
    HttpApiEndpoint.get("networks", "/networks")
      .addSuccess(AdminNetworksResponse)
      .annotate(OpenApi.Summary, "Every network with every bundle and its prices per group, active or not")
  )
  .add(
    HttpApiEndpoint.get("priceGroups", "/price-groups")
      .addSuccess(PriceGroupsResponse)
      .annotate(OpenApi.Summary, "Every price group an account can be put in (they are made by catalogue imports)")
  )
  .add(
    HttpApiEndpoint.patch("updateNetwork", "/networks/:network_id")
      .setPath(Schema.Struct({ network_id: IntegerText.pipe(Schema.compose(NetworkId)) }))
      .setPayload(UpdateNetworkPayload)
      .addSuccess(AdminNetworkResponse)
      .addError(NetworkNotFound)
  )
  .add(
    HttpApiEndpoint.patch("updateBundle", "/bundles/:bundle_id")
      .setPath(Schema.Struct({ bundle_id: IntegerText.pipe(Schema.compose(BundleId)) }))
      .setPayload(UpdateBundlePayload)
      .addSuccess(AdminBundleResponse)
      .addError(BundleNotFound)
      .annotate(OpenApi.Summary, "Activate or deactivate a bundle, or change its base price and group prices")
  )
{}

/** 200 of GET and PUT /commissions. */
export const CommissionsResponse = CommissionsResponseSchema

/** The operator's commission settings: the referral rate (agents earn their price difference, set by price groups). */
export class CommissionsGroup extends HttpApiGroup.make("commissions")
  .add(
    HttpApiEndpoint.get("show", "/commissions")
      .addSuccess(CommissionsResponseSchema)
      .annotate(OpenApi.Summary, "The referral rate")
  )
  .add(
    HttpApiEndpoint.put("set", "/commissions")
      .setPayload(SetCommissionsPayload)
      .addSuccess(CommissionsResponseSchema)
      .annotate(OpenApi.Summary, "Set the referral rate (percent of amount_paid; 0 turns the programme off)")
  )
{}

/** The operator's admin API. */
export class AdminApi extends HttpApi.make("admin")
  .add(AccountsGroup)
  .add(ApiKeysGroup)
  .add(WalletsGroup)
  .add(CatalogFileGroup)
  .add(OrdersAdminGroup)
  .add(UpstreamsGroup)
  .add(PaymentsAdminGroup)
  .add(MailAdminGroup)
  .add(OperatorsGroup)
  .add(ActionsGroup)
  .add(StatsGroup)
  .add(WebhooksAdminGroup)
  .add(CatalogAdminGroup)
  .add(CommissionsGroup)
  .middleware(AdminAuth)
  .addError(BadRequest)
  .addError(Forbidden)
  .pipe(withRequestErrors)
  .prefix(ADMIN_PREFIX)
  // Catalogue imports are large. The operator's own credentials are never rate limited; a
  // request without them (anonymous, or refused) counts per client address, as the public API's do.
  .annotate(BodyLimit, 1024 * 1024)
  .annotate(RateLimitScopes, ["all"])
  .annotate(OpenApi.Title, "Data Bundle Reseller Admin API")
  .annotate(OpenApi.Version, "1")
{}
