/**
 * The types of the events an account receives, as plain values: `Webhook.ts` builds its
 * schemas on them; a command line checks its options with them at start-up without loading
 * `Schema`.
 */
export const EVENT_TYPES = ["order.successful", "order.failed", "wallet.funded", "wallet.debited"] as const
