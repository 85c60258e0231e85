/**
 * Keys that make a repeated money action harmless: one per attempt, kept in sessionStorage
 * under what the attempt is (the form and its values) until the server has answered, so a
 * double submit, a retry after a lost answer or a reload followed by the same submit sends
 * the same key, and the server returns the first payment or order instead of making another.
 */

const random = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  let hex = ""
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0")
  return hex
}

const slot = (action: string, values: unknown) => `pending:${action}:${JSON.stringify(values)}`

/** The key of this attempt: the one kept from an unanswered earlier attempt with the same values, or a new one. */
export const keyFor = (action: string, values: unknown, prefix = ""): string => {
  const name = slot(action, values)
  const kept = sessionStorage.getItem(name)
  if (kept !== null) return kept
  const key = `${prefix}${random()}`
  sessionStorage.setItem(name, key)
  return key
}

/** Forgets the key once the server answered for good (success, or a refusal that changed nothing). */
export const settled = (action: string, values: unknown): void => {
  sessionStorage.removeItem(slot(action, values))
}
