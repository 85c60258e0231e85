/**
 * Credentials written into a URL (`https://user:password@host/...`) never reach a log, an error
 * or a trace: a request is sent to the URL without them, with the credentials as the Basic
 * `Authorization` header they stand for, and any text written down has them hidden.
 */

/** The URL without its user and password, and the `Authorization` header they stand for (if any). */
export const split = (url: string): { readonly url: string; readonly authorization?: string } => {
  if (!URL.canParse(url)) return { url }
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "") return { url }
  const user = decodeURIComponent(parsed.username)
  const password = decodeURIComponent(parsed.password)
  parsed.username = ""
  parsed.password = ""
  return { url: parsed.toString(), authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` }
}

/** `text` with the user and password of every URL in it hidden (`https://***@host/...`). */
export const hide = (text: string): string => text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1***@")
