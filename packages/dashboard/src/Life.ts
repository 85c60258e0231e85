/**
 * A page's lifetime: it starts when the page is shown and ends when the visitor leaves it
 * (another page, the same page again, a sign-out). Ending it aborts the page's requests
 * (every call takes its `signal`) and its waits (`sleep`), so nothing the page started keeps
 * polling, counting down or buying once it is gone.
 */

/** What a left page's requests and waits end with; the shell and forms say nothing of it. */
export class PageLeft extends Error {
  constructor() {
    super("The page was left")
  }
}

/** A page's lifetime, as the page sees it. */
export interface Life {
  /** Aborted when the page is left: give it to every request. */
  readonly signal: AbortSignal
  /** Waits `millis`; rejects with `PageLeft` as soon as the page is left. */
  readonly sleep: (millis: number) => Promise<void>
  /** Runs `f` every `millis` while the page lives. */
  readonly every: (millis: number, f: () => void) => void
}

/** A new lifetime and the function that ends it. */
export const begin = (): { readonly life: Life; readonly end: () => void } => {
  const controller = new AbortController()
  const { signal } = controller
  const life: Life = {
    signal,
    sleep: (millis) =>
      new Promise((resolve, reject) => {
        if (signal.aborted) return reject(new PageLeft())
        const timer = setTimeout(() => {
          signal.removeEventListener("abort", left)
          resolve()
        }, millis)
        const left = () => {
          clearTimeout(timer)
          reject(new PageLeft())
        }
        signal.addEventListener("abort", left, { once: true })
      }),
    every: (millis, f) => {
      if (signal.aborted) return
      const timer = setInterval(f, millis)
      signal.addEventListener("abort", () => clearInterval(timer), { once: true })
    }
  }
  return { life, end: () => controller.abort() }
}
