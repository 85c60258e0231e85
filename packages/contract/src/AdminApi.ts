/**
 * The operator's admin API, mounted at `/admin/v1` and guarded by a bearer token:
 * accounts, API keys, wallet funding and adjustments, the catalogue, stuck orders, the ledger audit.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AccountId, AccountNotFound, AccountStatus, PriceGroupName } from "./Account.js"
import {
  BadRequest,
  Conflict,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServerError,
  Succeeded,
  Unauthorized,
  ValidationError
} from "./ApiError.js"
import { ApiKeyId, ApiKeyNotFound } from "./ApiKey.js"
import { CatalogFile, ImportSummary } from "./Catalog.js"
import { AuditReport, LedgerEntry } from "./Ledger.js"
import { Cedis, PositiveCedis } from "./Money.js"
import { Order, OrderNotFound, OrderStatus, Pagination } from "./Order.js"
import { RateLimits, RateLimitsPatch } from "./RateLimit.js"
import { text } from "./Text.js"
import { Balance, InsufficientBalance, WalletKind } from "./Wallet.js"

/** The path prefix of the admin API. */
export const ADMIN_PREFIX = "/admin/v1"

/** Authenticates an admin request by its `Authorization: Bearer <token>` header. */
export class AdminAuth extends HttpApiMiddleware.Tag<AdminAuth>()("contract/AdminAuth", {
  failure: Unauthorized,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const Name = text(100)

const Note = text(500, 0)

/** A webhook URL: http(s), at most 2048 characters. */
export const WebhookUrl = text(2048).pipe(
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      return url.protocol === "https:" || url.protocol === "http:"
    } catch {
      return false
    }
  }, { message: () => "must be an http or https URL" })
)

const intParam = (min: number, max: number) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max)).annotations({
    message: () => `must be an integer from ${min} to ${max}`
  })

/** The page size of admin lists when `per_page` is left out. */
export const ADMIN_DEFAULT_PER_PAGE = 50

const pageParams = {
  page: Schema.optional(intParam(1, 1_000_000)),
  per_page: Schema.optional(intParam(1, 100))
}

/** An account's API key, without the key itself. */
export const ApiKeyView = Schema.Struct({
  id: ApiKeyId,
  prefix: Schema.String,
  created_at: Schema.Date,
  last_used_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "ApiKeyView" })

/** The type of `ApiKeyView`. */
export type ApiKeyView = typeof ApiKeyView.Type

const accountFields = {
  id: AccountId,
  name: Schema.String,
  price_group: Schema.NullOr(Schema.String),
  status: AccountStatus,
  created_at: Schema.Date
}

/** An account as a list shows it. */
export const AccountSummary = Schema.Struct({
  ...accountFields,
  balance: Balance,
  webhook_url: Schema.NullOr(Schema.String),
  limits: RateLimits.annotations({ description: "Per-minute overrides; a scope left out uses the server default" })
}).annotations({ identifier: "AccountSummary" })

/** The type of `AccountSummary`. */
export type AccountSummary = typeof AccountSummary.Type

/** An account with everything the operator may need. */
export const AccountDetail = Schema.Struct({
  ...AccountSummary.fields,
  webhook_secret: Schema.NullOr(Schema.String).annotations({ description: "Signs webhook deliveries" }),
  keys: Schema.Array(ApiKeyView)
}).annotations({ identifier: "AccountDetail" })

/** The type of `AccountDetail`. */
export type AccountDetail = typeof AccountDetail.Type

/** The body of POST /accounts. */
export const CreateAccountPayload = Schema.Struct({
  name: Name,
  price_group: Schema.optional(Schema.NullOr(PriceGroupName))
}).annotations({ parseOptions: { errors: "all" } })

/** The body of PATCH /accounts/{account_id}; fields left out are unchanged. */
export const UpdateAccountPayload = Schema.Struct({
  name: Schema.optional(Name),
  price_group: Schema.optional(Schema.NullOr(PriceGroupName)),
  status: Schema.optional(AccountStatus),
  webhook_url: Schema.optional(Schema.NullOr(WebhookUrl)),
  rotate_webhook_secret: Schema.optional(Schema.Boolean),
  limits: Schema.optional(RateLimitsPatch)
}).annotations({ parseOptions: { errors: "all" } })

/** The type of `UpdateAccountPayload`. */
export type UpdateAccountPayload = typeof UpdateAccountPayload.Type

/** 201 of POST /accounts. */
export const AccountCreated = Schema.Struct({ success: Succeeded, ...accountFields })

/** 200 of GET /accounts. */
export const AccountsPage = Schema.Struct({
  success: Succeeded,
  accounts: Schema.Array(AccountSummary),
  pagination: Pagination
})

/** 200 of GET and PATCH /accounts/{account_id}. */
export const AccountResponse = Schema.Struct({ success: Succeeded, ...AccountDetail.fields })

/** 201 of POST /accounts/{account_id}/keys: the only time the key itself is shown. */
export const ApiKeyCreated = Schema.Struct({
  success: Succeeded,
  id: ApiKeyId,
  api_key: Schema.String.annotations({ description: "The key itself, shown only in this response" }),
  prefix: Schema.String
})

/** 200 of DELETE /accounts/{account_id}/keys/{key_id}. */
export const ApiKeyRevoked = Schema.Struct({ success: Succeeded, key: ApiKeyView })

/** 200 of GET /accounts/{account_id}/ledger. */
export const LedgerPage = Schema.Struct({
  success: Succeeded,
  entries: Schema.Array(LedgerEntry),
  pagination: Pagination
})

/** 200 of GET /audit. */
export const AuditResponse = Schema.Struct({ success: Succeeded, ...AuditReport.fields })

/** 200 of POST /catalog. */
export const ImportResponse = Schema.Struct({ success: Succeeded, ...ImportSummary.fields })

/** 200 of GET /catalog: the catalogue in the import file's format. */
export const CatalogExport = Schema.Struct({ success: Succeeded, ...CatalogFile.fields })

const AccountPath = Schema.Struct({ account_id: Schema.NumberFromString.pipe(Schema.compose(AccountId)) })

/** Accounts. */
export class AccountsGroup extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.post("create", "/accounts")
      .setPayload(CreateAccountPayload)
      .addSuccess(AccountCreated, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("list", "/accounts")
      .setUrlParams(Schema.Struct({ ...pageParams, status: Schema.optional(AccountStatus) }))
      .addSuccess(AccountsPage)
  )
  .add(
    HttpApiEndpoint.get("show", "/accounts/:account_id")
      .setPath(AccountPath)
      .addSuccess(AccountResponse)
  )
  .add(
    HttpApiEndpoint.patch("update", "/accounts/:account_id")
      .setPath(AccountPath)
      .setPayload(UpdateAccountPayload)
      .addSuccess(AccountResponse)
  )
  .addError(AccountNotFound)
{}

/** The body of POST /accounts/{account_id}/wallet/fund. */
export const FundWalletPayload = Schema.Struct({
  amount: PositiveCedis,
  wallet: Schema.optional(WalletKind).annotations({ description: "Default main" }),
  note: Schema.optional(Note)
}).annotations({ parseOptions: { errors: "all" } })

/** The body of POST /accounts/{account_id}/wallet/adjust: a signed correction with its reason. */
export const AdjustWalletPayload = Schema.Struct({
  amount: Cedis.pipe(Schema.filter((pesewas) => pesewas !== 0n || "must not be 0")),
  wallet: Schema.optional(WalletKind).annotations({ description: "Default main" }),
  note: text(500).annotations({ message: () => "is required for an adjustment: 1 to 500 characters of text" })
}).annotations({ parseOptions: { errors: "all" } })

/** 200 of a wallet movement: the new balances and the ledger entry written. */
export const WalletMovement = Schema.Struct({ success: Succeeded, balance: Balance, entry: LedgerEntry })

/** API keys of an account. */
export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/accounts/:account_id/keys")
      .setPath(AccountPath)
      .addSuccess(ApiKeyCreated, { status: 201 })
  )
  .add(
    HttpApiEndpoint.del("revoke", "/accounts/:account_id/keys/:key_id")
      .setPath(Schema.Struct({ ...AccountPath.fields, key_id: Schema.NumberFromString.pipe(Schema.compose(ApiKeyId)) }))
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
      .addSuccess(WalletMovement)
  )
  .add(
    HttpApiEndpoint.post("adjust", "/accounts/:account_id/wallet/adjust")
      .setPath(AccountPath)
      .setPayload(AdjustWalletPayload)
      .addSuccess(WalletMovement)
      .addError(InsufficientBalance)
  )
  .add(
    HttpApiEndpoint.get("ledger", "/accounts/:account_id/ledger")
      .setPath(AccountPath)
      .setUrlParams(Schema.Struct({ ...pageParams, wallet: Schema.optional(WalletKind) }))
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
    HttpApiEndpoint.get("export", "/catalog")
      .addSuccess(CatalogExport)
  )
{}

/** An order as the operator sees it: with its account. */
export const AdminOrder = Schema.Struct({ ...Order.fields, account_id: AccountId }).annotations({
  identifier: "AdminOrder"
})

/** The type of `AdminOrder`. */
export type AdminOrder = typeof AdminOrder.Type

/** 200 of GET /orders (admin). */
export const AdminOrdersPage = Schema.Struct({
  success: Succeeded,
  orders: Schema.Array(AdminOrder),
  pagination: Pagination
})

/** 200 of GET /orders/{order_number} and of resolving it (admin). */
export const AdminOrderResponse = Schema.Struct({ success: Succeeded, order: AdminOrder })

/** Orders of every account, and settling a stuck one. */
export class OrdersAdminGroup extends HttpApiGroup.make("ordersAdmin")
  .add(
    HttpApiEndpoint.get("list", "/orders")
      .setUrlParams(Schema.Struct({
        ...pageParams,
        status: Schema.optional(OrderStatus),
        account_id: Schema.optional(Schema.NumberFromString.pipe(Schema.compose(AccountId)))
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
      .setPayload(Schema.Struct({ status: Schema.Literal("successful", "failed") }))
      .addSuccess(AdminOrderResponse)
      .addError(OrderNotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Settle a pending order; failing it refunds the main wallet")
  )
{}

/** The operator's admin API. */
export class AdminApi extends HttpApi.make("admin")
  .add(AccountsGroup)
  .add(ApiKeysGroup)
  .add(WalletsGroup)
  .add(CatalogFileGroup)
  .add(OrdersAdminGroup)
  .middleware(AdminAuth)
  .addError(BadRequest)
  .addError(NotFound)
  .addError(MethodNotAllowed)
  .addError(PayloadTooLarge)
  .addError(ValidationError)
  .addError(RateLimited)
  .addError(ServerError)
  .prefix(ADMIN_PREFIX)
  .annotate(OpenApi.Title, "Data Bundle Reseller Admin API")
  .annotate(OpenApi.Version, "1")
{}
