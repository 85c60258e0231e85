/**
 * Examples printed at the end of each command's `--help`, by command path: data only.
 */
import type { Examples } from "@databundle/terminal/Help"

/** The examples of `bundles-server`. */
export const examples: Examples = {
  "": [
    "bundles-server serve --demo",
    "bundles-server admin accounts create --name \"Kofi Data\"",
    "bundles-server admin wallet fund --account 1 --amount 100"
  ],
  serve: ["bundles-server serve", "bundles-server serve --port 9000 --host 0.0.0.0", "bundles-server serve --demo"],
  migrate: ["DATABASE_URL=postgres://bundles@db/bundles bundles-server migrate"],
  backup: [
    "bundles-server backup bundles-backup.tgz",
    "systemctl stop bundles && bundles-server backup /var/backups/bundles.tgz; systemctl start bundles"
  ],
  "service print-unit": [
    "bundles-server service print-unit | sudo tee /etc/systemd/system/bundles.service",
    "bundles-server service print-unit --user shop --data-dir /srv/bundles"
  ],
  restore: ["BUNDLES_DATA_DIR=/var/lib/bundles-restored bundles-server restore /var/backups/bundles.tgz"],
  "admin catalog import": [
    "bundles-server admin catalog import catalog.json --dry-run",
    "bundles-server admin catalog import catalog.json"
  ],
  "admin catalog export": ["bundles-server admin catalog export > catalog.json"],
  "admin accounts create": [
    "bundles-server admin accounts create --name \"Kofi Data\"",
    "bundles-server admin accounts create --name \"Ama Agents\" --price-group agent --json"
  ],
  "admin accounts list": ["bundles-server admin accounts list --status suspended"],
  "admin accounts show": ["bundles-server admin accounts show 1"],
  "admin accounts update": [
    "bundles-server admin accounts update 1 --status suspended",
    "bundles-server admin accounts update 1 --webhook-url https://shop.example.com/hooks/bundles",
    "bundles-server admin accounts update 1 --limit orders=120 --limit all=default",
    "bundles-server admin accounts update 7 --agent 3 --referred-by none"
  ],
  "admin keys create": [
    "bundles-server admin keys create --account 1",
    "bundles-server admin keys create --account 1 --mode test"
  ],
  "admin keys revoke": ["bundles-server admin keys revoke --account 1 --key 3"],
  "admin wallet fund": [
    "bundles-server admin wallet fund --account 1 --amount 250",
    "bundles-server admin wallet fund --account 1 --amount 10.50 --note \"MoMo 0241234567\"",
    "bundles-server admin wallet fund --account 1 --amount 1000 --mode test"
  ],
  "admin wallet adjust": ["bundles-server admin wallet adjust --account 1 --amount -5 --note \"duplicate funding\""],
  "admin wallet ledger": [
    "bundles-server admin wallet ledger --account 1 --wallet main",
    "bundles-server admin wallet ledger --account 1 --mode test"
  ],
  "admin audit": ["bundles-server admin audit --json"],
  "admin orders list": [
    "bundles-server admin orders list --status pending",
    "bundles-server admin orders list --status pending --older-than 30 --oldest-first",
    "bundles-server admin orders list --phone 0241234567",
    "bundles-server admin orders list --reference INV-1042 --account 1",
    "bundles-server admin orders list --account 1 --mode test"
  ],
  "admin orders show": ["bundles-server admin orders show ORD-20261101-7F3A9C"],
  "admin orders resolve": [
    "bundles-server admin orders resolve ORD-20261101-7F3A9C --status successful",
    "bundles-server admin orders resolve ORD-20261101-7F3A9C --status failed --note \"MTN ticket 88121\""
  ],
  "admin catalog sync": [
    "bundles-server admin catalog sync --markup 8% --dry-run",
    "bundles-server admin catalog sync --upstream wholesaler --markup 8% --price-group agent=5%"
  ],
  "admin upstreams": ["bundles-server admin upstreams", "bundles-server admin upstreams --json"],
  "admin payments list": [
    "bundles-server admin payments list --status pending --method manual_transfer",
    "bundles-server admin payments list --account 1 --json",
    "bundles-server admin payments list --reversed"
  ],
  "admin payments show": ["bundles-server admin payments show PAY-7F3A9C2K8Q1M"],
  "admin payments approve": ["bundles-server admin payments approve PAY-7F3A9C2K8Q1M"],
  "admin payments decline": [
    "bundles-server admin payments decline PAY-7F3A9C2K8Q1M --reason \"No transfer arrived\""
  ],
  "admin emails": ["bundles-server admin emails", "bundles-server admin emails --to kofi@example.com"],
  "admin emails requeue": ["bundles-server admin emails requeue 42"],
  "admin operators list": ["bundles-server admin operators list", "bundles-server admin operators list --json"],
  "admin operators create": [
    "bundles-server admin operators create --email efua@example.com --name \"Efua Owusu\" --role owner",
    "bundles-server admin operators create --email k@example.com --name Kofi --password-stdin < pw.txt"
  ],
  "admin operators set-role": [
    "bundles-server admin operators set-role 2 owner",
    "bundles-server admin operators set-role 2 operator"
  ],
  "admin operators disable": ["bundles-server admin operators disable 2"],
  "admin operators reset-password": [
    "bundles-server admin operators reset-password efua@example.com",
    "bundles-server admin operators reset-password k@example.com --password-stdin < pw.txt"
  ],
  "admin actions": [
    "bundles-server admin actions",
    "bundles-server admin actions --actor operator:2 --action wallet.fund",
    "bundles-server admin actions --target-kind order --target-id ORD-7F3A9C2K8Q1M --json"
  ],
  "admin commissions show": ["bundles-server admin commissions show", "bundles-server admin commissions show --json"],
  "admin commissions set": [
    "bundles-server admin commissions set --referral 2",
    "bundles-server admin commissions set --referral 0"
  ]
}
