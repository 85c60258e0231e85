/**
 * The client's version, sent in the User-Agent. A constant rather than a read of package.json,
 * so that the default entry needs no file system or JSON import on any runtime; a test keeps
 * it equal to the package's version.
 */

/** The version of `@databundle/client`. */
export const VERSION = "0.1.0"

/** The product token this client sends as its User-Agent. */
export const USER_AGENT = `databundle-client/${VERSION}`
