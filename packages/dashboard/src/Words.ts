/**
 * How both apps say things, decided once: amounts, instants, ages, and counts with their noun
 * in the singular or the plural ("1 payment", "4 orders", "1 webhook endpoint failing").
 */

/** A count with its noun: `count(1, "order")` is "1 order", `count(3, "entry", "entries")` "3 entries". */
export const count = (n: number, singular: string, plural = `${singular}s`): string =>
  `${n.toLocaleString("en-GH")} ${n === 1 ? singular : plural}`

/** A cedi amount as the API sends it (a JSON number of cedis), for display. */
export const ghs = (cedis: number): string =>
  `GH₵ ${cedis.toLocaleString("en-GH", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`

/** An instant, short and local. */
export const when = (iso: string | null | undefined): string => {
  if (!iso) return "—"
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" })
}

/** How long ago an instant was, in the largest whole unit ("3 min", "2 h", "5 d"). */
export const age = (iso: string, now = Date.now()): string => {
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000))
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h`
  return `${Math.floor(seconds / 86400)} d`
}

/** A wait, for a countdown: "45 s", "1 min 05 s". */
export const duration = (millis: number): string => {
  const seconds = Math.max(0, Math.ceil(millis / 1000))
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`
}

/** A word with its first letter in capitals ("pending" → "Pending"). */
export const capital = (word: string): string => `${word.charAt(0).toUpperCase()}${word.slice(1)}`
