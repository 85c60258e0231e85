/**
 * The references of a bulk file's rows, made exactly as the CLI's `bundles bulk` makes them
 * (`b:<batch slug>:` and the first 32 hex digits of SHA-256 of the batch name, the bundle id,
 * the number in its `0XXXXXXXXX` form and the occurrence of that pair in the file), here with
 * Web Crypto: a file bought from the dashboard and from the CLI under one batch name maps to
 * the same references, so neither buys a row the other bought.
 */

/** The batch name as it appears in references. */
export const batchSlug = (batch: string): string =>
  batch.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "").slice(0, 24).replace(/-+$/, "") || "batch"

/** What every derived reference of a batch starts with, so one filtered listing finds them all. */
export const batchPrefix = (batch: string): string => `b:${batchSlug(batch)}:`

/** The reference of a row without its own. */
export const deriveReference = async (
  batch: string,
  bundleId: number,
  phone: string,
  occurrence: number
): Promise<string> => {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${batch}\n${bundleId}\n${phone}\n${occurrence}`)
  )
  let hex = ""
  for (const byte of new Uint8Array(digest)) hex += byte.toString(16).padStart(2, "0")
  return `${batchPrefix(batch)}${hex.slice(0, 32)}`
}
