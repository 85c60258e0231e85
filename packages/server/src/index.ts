/**
 * The reference server of the data bundle reseller system.
 */

/** The HTTP application: APIs, domain services, workers. */
export * as Http from "./Http.js"
/** The server as a web-standard `Request` → `Response` handler. */
export * as WebHandler from "./WebHandler.js"
/** The database the server runs on. */
export * as Database from "./Database.js"
