/**
 * The contract of the data bundle reseller system: both HttpApi definitions, their schemas and typed errors.
 */

/** Accounts, price groups and the authenticated account. */
export * as Account from "./Account.js"
/** The operator's admin API. */
export * as AdminApi from "./AdminApi.js"
/** The operator console's sign-in API. */
export * as ConsoleApi from "./ConsoleApi.js"
/** The error envelope shared by both APIs. */
export * as ApiError from "./ApiError.js"
/** API keys and the `x-api-key` middleware. */
export * as ApiKey from "./ApiKey.js"
/** What needs an account holder's attention. */
export * as Attention from "./Attention.js"
/** Bundles. */
export * as Bundle from "./Bundle.js"
/** The catalogue file format. */
export * as Catalog from "./Catalog.js"
/** The web dashboard's API. */
export * as DashboardApi from "./DashboardApi.js"
/** The webhook delivery log. */
export * as DeliveryLog from "./DeliveryLog.js"
/** What the server applies to each endpoint before its handler: rate-limit scopes, body limit, secrecy. */
export * as EndpointPolicy from "./EndpointPolicy.js"
/** `Idempotency-Key` of admin requests that move money. */
export * as Idempotency from "./Idempotency.js"
/** The account's event feed. */
export * as Event from "./Event.js"
/** The mark of endpoints beyond the specification. */
export * as Extension from "./Extension.js"
/** Identifiers' range. */
export * as Identifier from "./Identifier.js"
/** The rules of JSON request bodies. */
export * as JsonBody from "./JsonBody.js"
/** The ledger and its audit. */
export * as Ledger from "./Ledger.js"
/** Commissions of the agent and referral programmes, and the referral rate. */
export * as Commission from "./Commission.js"
/** Email to dashboard users, and the outbox. */
export * as Mail from "./Mail.js"
/** Test and live modes. */
export * as Mode from "./Mode.js"
/** Money: cedis on the wire, pesewas inside. */
export * as Money from "./Money.js"
/** Networks. */
export * as Network from "./Network.js"
/** Orders. */
export * as Order from "./Order.js"
/** The terms of an order as plain values (statuses, the reference rule, page sizes). */
export * as OrderTerms from "./OrderTerms.js"
/** Operators: the console's users, their session cookie and middleware. */
export * as Operator from "./Operator.js"
/** The operator action log. */
export * as OperatorAction from "./OperatorAction.js"
/** Paging of admin lists. */
export * as Page from "./Page.js"
/** Payments that fund a wallet. */
export * as Payment from "./Payment.js"
/** Ghana phone numbers. */
export * as Phone from "./Phone.js"
/** Which Ghana operator a number's prefix belongs to: the one table the server and the client read. */
export * as PhonePrefixes from "./PhonePrefixes.js"
/** Rate limit scopes and quotas. */
export * as RateLimit from "./RateLimit.js"
/** The public reseller API. */
export * as ResellerApi from "./ResellerApi.js"
/** Dashboard sessions: the cookie, the CSRF header, the middleware. */
export * as Session from "./Session.js"
/** The account holder's statement: the ledger with its payments. */
export * as Statement from "./Statement.js"
/** The console's figures for its charts. */
export * as Stats from "./Stats.js"
/** Free text from requests. */
export * as Text from "./Text.js"
/** Upstreams and the catalogue sync. */
export * as Upstream from "./Upstream.js"
/** Dashboard users: registration, sign-in and password payloads. */
export * as User from "./User.js"
/** The 422's wording. */
export * as Validation from "./Validation.js"
/** Wallets and balances. */
export * as Wallet from "./Wallet.js"
/** Webhook events, the headers of a delivery and its signature. */
export * as Webhook from "./Webhook.js"
/** Deliveries of webhook events and the account's webhook settings. */
export * as WebhookDelivery from "./WebhookDelivery.js"
