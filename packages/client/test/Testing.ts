/**
 * What other packages' tests may use of the client's test set-up: the real server on a test
 * database, and the fault proxy that plays 429s, 5xx and broken connections in front of it.
 */
export * from "./FaultProxy.js"
export * from "./Server.js"
