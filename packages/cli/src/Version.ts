/**
 * The CLI's version, for `--version` and the User-Agent. A constant rather than a read of
 * package.json, so the bundled binary needs no file beside it; a test keeps it equal to the
 * package's version.
 */

/** The version of `@databundle/cli`. */
export const VERSION = "0.1.0"
