/**
 * Reading Prometheus's text exposition format in tests: the samples, and one of them by name and labels.
 */

/** One sample of an exposition: its metric name, labels and value. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** Reads Prometheus's text format (the lines that are samples). */
export const parseExposition = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").filter((line) => line.length > 0 && !line.startsWith("#")).map((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a sample: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? "").matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = value!
    }
    return { name: match[1]!, labels, value: Number(match[3]) }
  })

/** The value of the one sample of `name` whose labels include `labels`; 0 when there is none. */
export const sample = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}): number => {
  const found = samples.filter((s) =>
    s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value)
  )
  if (found.length > 1) throw new Error(`several samples of ${name} ${JSON.stringify(labels)}`)
  return found[0]?.value ?? 0
}
