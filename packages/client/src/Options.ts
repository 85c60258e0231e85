/**
 * The options both faces take, and the checks they pass before any request is made: above
 * all, an API key never goes out over plain HTTP except to this machine.
 */
import { RESELLER_PREFIX } from "@databundle/contract/ResellerApi"
import { Data, Either, Redacted } from "effect"
import { DEFAULT_RETRY, NO_RETRY, type RetryPolicy } from "./Retry.js"
import { USER_AGENT } from "./Version.js"

/** How the client retries; every field is optional and falls back to the default shown. */
export interface RetryOptions {
  /** Attempts per call, the first included (default 3); 1 means never retry. */
  readonly maxAttempts?: number | undefined
  /** Most milliseconds one call may spend waiting between attempts (default 60000). */
  readonly maxWait?: number | undefined
  /** Wait for `Retry-After` and retry when rate limited (429); any request, as a 429 did nothing (default true). */
  readonly onRateLimit?: boolean | undefined
  /** Retry network failures, timeouts and 5xx, only for reads and orders with a reference (default true). */
  readonly onTransient?: boolean | undefined
  /** First back-off in milliseconds after a transient failure, doubling per attempt with jitter (default 250). */
  readonly backoff?: number | undefined
}

/** Options of `createClient` and `BundlesClient.layer`. */
export interface ClientOptions {
  /** The account's API key, sent as `x-api-key`. */
  readonly apiKey: string | Redacted.Redacted<string>
  /** `https://host` or `https://host/api/v1`; plain `http:` only for loopback hosts. */
  readonly baseUrl: string | URL
  /** Milliseconds one attempt may take, response body included (default 30000). */
  readonly timeout?: number | undefined
  /** Retry settings, or `false` for a single attempt per call. */
  readonly retry?: RetryOptions | false | undefined
  /** Give every order placed without a `reference` a random one, so retrying it is safe (default true). */
  readonly autoReference?: boolean | undefined
  /** Your own product token, sent before the client's in the User-Agent (`my-shop/2.1`). */
  readonly userAgent?: string | undefined
  /** The `fetch` to use (default `globalThis.fetch`). */
  readonly fetch?: typeof globalThis.fetch | undefined
}

/** The options after their checks, with every default filled in. */
export interface ResolvedOptions {
  readonly apiKey: Redacted.Redacted<string>
  /** The base URL without the API's `/api/v1` prefix (the contract's paths carry it) and without a trailing `/`. */
  readonly origin: string
  readonly timeoutMillis: number
  readonly retry: RetryPolicy
  readonly autoReference: boolean
  readonly userAgent: string
  readonly fetch: typeof globalThis.fetch | undefined
}

/** The options cannot be used: a missing key, a malformed or non-HTTPS base URL, an out-of-range number. */
export class ClientOptionsError extends Data.TaggedError("ClientOptionsError")<{ readonly message: string }> {}

/** Per-attempt timeout when none is given. */
export const DEFAULT_TIMEOUT_MILLIS = 30_000

/** True for `localhost` (and `*.localhost`), 127.0.0.0/8 and ::1, the hosts plain HTTP may reach. */
export const isLoopback = (hostname: string): boolean => {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1")
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host)
}

const fail = (message: string) => Either.left(new ClientOptionsError({ message }))

const wholeNumber = (value: number | undefined, name: string, min: number, max: number) =>
  value === undefined || (Number.isInteger(value) && value >= min && value <= max)
    ? undefined
    : `${name} must be a whole number from ${min} to ${max}`

const resolveRetry = (retry: ClientOptions["retry"]): Either.Either<RetryPolicy, ClientOptionsError> => {
  if (retry === false) return Either.right(NO_RETRY)
  if (retry === undefined) return Either.right(DEFAULT_RETRY)
  const problem = wholeNumber(retry.maxAttempts, "retry.maxAttempts", 1, 20) ??
    wholeNumber(retry.maxWait, "retry.maxWait", 0, 3_600_000) ??
    wholeNumber(retry.backoff, "retry.backoff", 1, 60_000)
  if (problem !== undefined) return fail(problem)
  return Either.right({
    maxAttempts: retry.maxAttempts ?? DEFAULT_RETRY.maxAttempts,
    maxWaitMillis: retry.maxWait ?? DEFAULT_RETRY.maxWaitMillis,
    onRateLimit: retry.onRateLimit ?? DEFAULT_RETRY.onRateLimit,
    onTransient: retry.onTransient ?? DEFAULT_RETRY.onTransient,
    backoffMillis: retry.backoff ?? DEFAULT_RETRY.backoffMillis
  })
}

/** Checks the options and fills in the defaults. */
export const resolveOptions = (options: ClientOptions): Either.Either<ResolvedOptions, ClientOptionsError> => {
  const apiKey = Redacted.isRedacted(options.apiKey) ? options.apiKey : Redacted.make(options.apiKey)
  const key = Redacted.value(apiKey)
  if (typeof key !== "string" || key.trim().length === 0) return fail("apiKey is required")
  let url: URL
  try {
    url = new URL(options.baseUrl)
  } catch {
    return fail(`baseUrl ${JSON.stringify(String(options.baseUrl))} is not a URL`)
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) {
    return fail(
      `baseUrl must use https: (plain http: is allowed only for localhost, 127.0.0.0/8 and ::1), ` +
        `so the API key never travels in clear text; got ${url.protocol}//${url.host}`
    )
  }
  if (url.username !== "" || url.password !== "") return fail("baseUrl must not carry a user name or password")
  if (url.search !== "" || url.hash !== "") return fail("baseUrl must not have a query or a fragment")
  // The contract's paths start with /api/v1, so a base URL given as in the spec loses that suffix.
  let path = url.pathname.replace(/\/+$/, "")
  if (path.endsWith(RESELLER_PREFIX)) path = path.slice(0, -RESELLER_PREFIX.length)
  const problem = wholeNumber(options.timeout, "timeout", 1, 600_000)
  if (problem !== undefined) return fail(problem)
  if (options.userAgent !== undefined && !/^[\x21-\x7e][\x20-\x7e]*$/.test(options.userAgent)) {
    return fail("userAgent must be printable ASCII")
  }
  return Either.map(resolveRetry(options.retry), (retry) => ({
    apiKey,
    origin: `${url.origin}${path}`,
    timeoutMillis: options.timeout ?? DEFAULT_TIMEOUT_MILLIS,
    retry,
    autoReference: options.autoReference ?? true,
    userAgent: options.userAgent === undefined ? USER_AGENT : `${options.userAgent} ${USER_AGENT}`,
    fetch: options.fetch
  }))
}
