/**
 * The contract of the data bundle reseller system: both HttpApi definitions, their schemas and typed errors.
 */

/** Accounts, price groups and the authenticated account. */
export * as Account from "./Account.js"
/** The operator's admin API. */
export * as AdminApi from "./AdminApi.js"
/** The error envelope shared by both APIs. */
export * as ApiError from "./ApiError.js"
/** API keys and the `x-api-key` middleware. */
export * as ApiKey from "./ApiKey.js"
/** Bundles. */
export * as Bundle from "./Bundle.js"
/** The catalogue file format. */
export * as Catalog from "./Catalog.js"
/** Identifiers' range. */
export * as Identifier from "./Identifier.js"
/** The ledger and its audit. */
export * as Ledger from "./Ledger.js"
/** Money: cedis on the wire, pesewas inside. */
export * as Money from "./Money.js"
/** Networks. */
export * as Network from "./Network.js"
/** Orders. */
export * as Order from "./Order.js"
/** Ghana phone numbers. */
export * as Phone from "./Phone.js"
/** Rate limit scopes and quotas. */
export * as RateLimit from "./RateLimit.js"
/** The public reseller API. */
export * as ResellerApi from "./ResellerApi.js"
/** Free text from requests. */
export * as Text from "./Text.js"
/** Wallets and balances. */
export * as Wallet from "./Wallet.js"
