/**
 * The domain of the data bundle reseller system, as Effect services on SQL.
 */

/** Accounts (operator side). */
export * as Accounts from "./Accounts.js"
/** API keys and request authentication. */
export * as ApiKeys from "./ApiKeys.js"
/** Networks, bundles, price groups, prices. */
export * as Catalog from "./Catalog.js"
/** The agent and referral programmes' commissions, and transfers of earnings to main. */
export * as Commissions from "./Commissions.js"
/** The dashboard's read models and webhook settings. */
export * as Dashboard from "./Dashboard.js"
/** Shared SQL helpers. */
export * as Database from "./Database.js"
/** The fulfilment port and its simulator. */
export * as Fulfillment from "./Fulfillment.js"
/** Idempotency keys of admin requests that move money. */
export * as Idempotency from "./Idempotency.js"
/** Browsers a user or operator signed in with before. */
export * as KnownBrowsers from "./KnownBrowsers.js"
/** Email to dashboard users: the outbox and the transport port. */
export * as Mailer from "./Mailer.js"
/** The database schema. */
export * as Migrations from "./Migrations.js"
/** The operator action log. */
export * as OperatorActions from "./OperatorActions.js"
/** Console operators: passwords and sessions. */
export * as Operators from "./Operators.js"
/** Orders and their state machine. */
export * as Orders from "./Orders.js"
/** A number's network, from its prefix. */
export * as PhoneNumbers from "./PhoneNumbers.js"
/** Password attempts counted before they are judged. */
export * as PasswordAttempts from "./PasswordAttempts.js"
/** Password hashing (scrypt). */
export * as Passwords from "./Passwords.js"
/** The payment port and its simulator. */
export * as PaymentProvider from "./PaymentProvider.js"
/** Payments that fund a wallet. */
export * as Payments from "./Payments.js"
/** Hot statements: marked to be prepared once per connection, built once. */
export * as Prepared from "./Prepared.js"
/** Rate limits. */
export * as RateLimiter from "./RateLimiter.js"
/** Dashboard sessions. */
export * as Sessions from "./Sessions.js"
/** The console's figures for its charts. */
export * as Stats from "./Stats.js"
/** Tunables. */
export * as Settings from "./Settings.js"
/** Caches whose answers expire, readable synchronously. */
export * as TimedCache from "./TimedCache.js"
/** Random identifiers and secrets. */
export * as Tokens from "./Tokens.js"
/** Credentials in URLs kept out of logs, errors and traces. */
export * as UrlCredentials from "./UrlCredentials.js"
/** Dashboard users: registration, verification, sign-in, passwords. */
export * as Users from "./Users.js"
/** Wallets and the ledger. */
export * as Wallet from "./Wallet.js"
/** Webhook delivery. */
export * as WebhookDelivery from "./WebhookDelivery.js"
/** The webhook outbox and the account's view of it. */
export * as Webhooks from "./Webhooks.js"
