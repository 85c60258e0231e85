/**
 * Examples printed at the end of each command's `--help`, by command path. On the start-up
 * path (help is printed without loading a command's module): data only.
 */
import type { Examples } from "@databundle/terminal/Help"

/** The examples of `bundles`. */
export const examples: Examples = {
  "": [
    "bundles login",
    "bundles networks",
    "bundles bundles mtn",
    "bundles buy 12 024 123 4567",
    "bundles orders list --status pending"
  ],
  login: ["bundles login --base-url https://bundles.example.com", "echo \"$BUNDLES_API_KEY\" | bundles login"],
  balance: ["bundles balance", "bundles balance --json"],
  networks: ["bundles networks"],
  bundles: ["bundles bundles mtn", "bundles bundles 1 --json"],
  buy: [
    "bundles buy 12 024 123 4567",
    "bundles buy 12 +233241234567 --reference INV-1042 --yes",
    "bundles buy 12 0241234567 --json --yes"
  ],
  "orders list": [
    "bundles orders list --status pending",
    "bundles orders list --phone \"024 123 4567\"",
    "bundles orders list --reference INV-1042",
    "bundles orders list --from 2026-11-01 --to 2026-11-30 --all --json"
  ],
  "orders get": ["bundles orders get ORD-20261101-7F3A9C"],
  "orders watch": ["bundles orders watch ORD-20261101-7F3A9C", "bundles orders watch ORD-20261101-7F3A9C --timeout 60"],
  bulk: [
    "bundles bulk november.csv --dry-run",
    "bundles bulk november.csv --yes",
    "bundles bulk orders.csv --batch 2026-11 --results out.csv"
  ],
  "wallet transactions": [
    "bundles wallet transactions",
    "bundles wallet transactions --reason refund --from 2026-11-01 --to 2026-11-30 --json"
  ],
  "wallet transfer": [
    "bundles wallet transfer --from agent 25",
    "bundles wallet transfer --from referral 3.50 --idempotency-key payday-2026-11 --json"
  ],
  "events list": ["bundles events list", "bundles events list --since 120 --json"],
  "events trigger": ["bundles events trigger order.successful"],
  "webhooks listen": [
    "bundles webhooks listen --forward-to http://localhost:3000/hook",
    "bundles webhooks listen --forward-to http://localhost:3000/hook --type order.failed --json"
  ],
  "webhooks deliveries": ["bundles webhooks deliveries", "bundles webhooks deliveries --state abandoned"],
  "webhooks resend": ["bundles webhooks resend evt_3kq9x2"]
}
