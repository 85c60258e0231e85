/**
 * `bundles-server service print-unit`: a systemd unit that runs this installed binary as a
 * service. It starts the binary itself with Node (never through pnpm or npm, whose wrapper
 * does not pass SIGTERM on: the server would be left running when systemd stops it), in
 * production mode, its settings and secrets in an environment file only root reads, its data
 * directory the only place it may write, and SIGTERM to stop it (it finishes the requests in
 * flight first).
 */
import { Command, Options } from "@effect/cli"
import { Console } from "effect"
import { fileURLToPath } from "node:url"

/** What a unit is made from. */
export interface UnitOptions {
  readonly node: string
  readonly bin: string
  readonly user: string
  readonly dataDir: string
  readonly envFile: string
}

/** The unit's text. */
export const unit = ({ bin, dataDir, envFile, node, user }: UnitOptions): string => {
  // systemd makes /var/lib/NAME itself (StateDirectory=); another place must exist and be writable.
  const state = /^\/var\/lib\/([A-Za-z0-9._-]+)$/.exec(dataDir)
  return [
    "[Unit]",
    "Description=Data bundle reseller server (bundles-server)",
    "Documentation=https://github.com/databundle/databundle/blob/main/docs/install.md",
    "Wants=network-online.target",
    "After=network-online.target",
    "",
    "[Service]",
    "Type=simple",
    `User=${user}`,
    `Group=${user}`,
    `WorkingDirectory=${dataDir}`,
    "Environment=BUNDLES_ENV=production",
    `Environment=BUNDLES_DATA_DIR=${dataDir}`,
    "Environment=HOST=127.0.0.1",
    "Environment=PORT=8080",
    "Environment=NODE_ENV=production",
    `EnvironmentFile=${envFile}`,
    `ExecStart=${node} ${bin} serve`,
    // With TLS_CERT/TLS_KEY, SIGHUP reads the certificate again (`systemctl reload bundles`).
    "ExecReload=/bin/kill -HUP $MAINPID",
    "KillSignal=SIGTERM",
    "TimeoutStopSec=30",
    "Restart=on-failure",
    "RestartSec=2",
    "LimitNOFILE=65536",
    "UMask=0077",
    ...(state === null ? [`ReadWritePaths=${dataDir}`] : [`StateDirectory=${state[1]}`, "StateDirectoryMode=0700"]),
    "NoNewPrivileges=yes",
    "ProtectSystem=strict",
    "ProtectHome=yes",
    "PrivateTmp=yes",
    "PrivateDevices=yes",
    "ProtectKernelTunables=yes",
    "ProtectKernelModules=yes",
    "ProtectControlGroups=yes",
    "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
    "RestrictSUIDSGID=yes",
    "RestrictRealtime=yes",
    "LockPersonality=yes",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    ""
  ].join("\n")
}

const printUnit = Command.make("print-unit", {
  user: Options.text("user").pipe(
    Options.withDescription("The system user it runs as"),
    Options.withDefault("bundles")
  ),
  dataDir: Options.text("data-dir").pipe(
    Options.withDescription("Its BUNDLES_DATA_DIR"),
    Options.withDefault("/var/lib/bundles")
  ),
  envFile: Options.text("env-file").pipe(
    Options.withDescription("The file of its settings and secrets (KEY=value lines, readable by root only)"),
    Options.withDefault("/etc/bundles/bundles.env")
  )
}, (options) =>
  // This binary and this Node, by their absolute paths: what `npm install -g` installed.
  Console.log(unit({ ...options, node: process.execPath, bin: fileURLToPath(import.meta.url) }))).pipe(
    Command.withDescription("Print a systemd unit that runs this binary as a service")
  )

/** `bundles-server service`. */
export const command = Command.make("service").pipe(
  Command.withDescription("Run the server as a service"),
  Command.withSubcommands([printUnit])
)
