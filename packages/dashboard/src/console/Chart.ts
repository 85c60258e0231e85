/**
 * Charts as inline SVG made here, not a chart library: bars (stacked by series) over a
 * sequence, and horizontal bars by label. Colours come from attributes (the CSP allows no
 * inline style); each chart is an image with a text summary for screen readers, and its
 * figures are in a table under "Show the figures", so nothing is told by colour alone.
 */
import { h } from "../Dom.js"

const SVG = "http://www.w3.org/2000/svg"

const svg = (tag: string, attrs: Record<string, string | number>, ...children: ReadonlyArray<Element>) => {
  const element = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value))
  for (const child of children) element.appendChild(child)
  return element
}

/** One series of a chart. */
export interface Series {
  readonly name: string
  readonly color: string
}

/** The colours of the statuses (the same meaning as the pages' status words). */
export const STATUS_COLORS = { successful: "#106b21", pending: "#b77900", failed: "#b42318" } as const

const legend = (series: ReadonlyArray<Series>) =>
  h(
    "ul",
    { class: "legend" },
    series.map((s) =>
      h(
        "li",
        null,
        svg(
          "svg",
          { width: 12, height: 12, "aria-hidden": "true" },
          svg("rect", { width: 12, height: 12, fill: s.color })
        ),
        " ",
        s.name
      )
    )
  )

const figures = (
  caption: string,
  labels: ReadonlyArray<string>,
  series: ReadonlyArray<Series>,
  values: ReadonlyArray<ReadonlyArray<number>>,
  format: (n: number) => string
) =>
  h(
    "details",
    null,
    h("summary", null, "Show the figures"),
    h(
      "div",
      { role: "region", "aria-label": `${caption}: the figures` },
      h(
        "table",
        { class: "figures" },
        h("caption", { class: "muted" }, caption),
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            h("th", { scope: "col" }, ""),
            series.map((s) => h("th", { scope: "col", class: "num" }, s.name))
          )
        ),
        h(
          "tbody",
          null,
          labels.map((label, i) =>
            h(
              "tr",
              null,
              h("th", { scope: "row" }, label),
              series.map((_, j) => h("td", { class: "num" }, format(values[i]![j]!)))
            )
          )
        )
      )
    )
  )

const niceMax = (max: number): number => {
  if (max <= 0) return 1
  const step = 10 ** Math.floor(Math.log10(max))
  return Math.ceil(max / step) * step
}

/**
 * Vertical bars, one per label, each stacked from its series' values; `tick` says which
 * labels are written under the axis (every nth on long ranges).
 */
export const barChart = (options: {
  readonly title: string
  readonly labels: ReadonlyArray<string>
  readonly series: ReadonlyArray<Series>
  readonly values: ReadonlyArray<ReadonlyArray<number>>
  readonly format?: (n: number) => string
  readonly summary: string
}): Node => {
  const format = options.format ?? String
  // A phone-sized drawing: scaled up on a desktop, its text stays readable on a phone.
  const width = 400
  const height = 200
  const left = 40
  const bottom = 24
  const top = 8
  const n = Math.max(options.labels.length, 1)
  const max = niceMax(Math.max(0, ...options.values.map((row) => row.reduce((a, b) => a + b, 0))))
  const plot = height - top - bottom
  const slot = (width - left) / n
  const barWidth = Math.max(1, slot * 0.7)
  const every = Math.ceil(n / 8)
  const parts: Array<Element> = []
  for (const fraction of [0, 0.5, 1]) {
    const y = top + plot * (1 - fraction)
    parts.push(svg("line", { x1: left, x2: width, y1: y, y2: y, stroke: "#d0d7de" }))
    const text = svg("text", { x: left - 4, y: y + 4, "text-anchor": "end", "font-size": 11, fill: "#57606a" })
    text.textContent = format(max * fraction)
    parts.push(text)
  }
  options.labels.forEach((label, i) => {
    const x = left + slot * i + (slot - barWidth) / 2
    let y = top + plot
    options.series.forEach((s, j) => {
      const value = options.values[i]![j]!
      if (value <= 0) return
      const barHeight = (value / max) * plot
      y -= barHeight
      const rect = svg("rect", { x, y, width: barWidth, height: barHeight, fill: s.color })
      rect.appendChild(svg("title", {})).textContent = `${label}: ${s.name} ${format(value)}`
      parts.push(rect)
    })
    if (i % every === 0) {
      const text = svg("text", {
        x: x + barWidth / 2,
        y: height - 6,
        "text-anchor": "middle",
        "font-size": 11,
        fill: "#57606a"
      })
      text.textContent = label
      parts.push(text)
    }
  })
  return h(
    "figure",
    { class: "chart card" },
    h("figcaption", null, options.title),
    svg(
      "svg",
      { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `${options.title}: ${options.summary}` },
      ...parts
    ),
    options.series.length > 1 ? legend(options.series) : null,
    figures(options.title, options.labels, options.series, options.values, format)
  )
}

/** Horizontal bars, one per label (a network, an age bucket). */
export const hbarChart = (options: {
  readonly title: string
  readonly labels: ReadonlyArray<string>
  readonly values: ReadonlyArray<number>
  readonly color: string
  readonly format?: (n: number) => string
  readonly summary: string
}): Node => {
  const format = options.format ?? String
  const width = 400
  const row = 28
  const left = 110
  const right = 100
  const height = Math.max(row, options.labels.length * row)
  const max = Math.max(0, ...options.values) || 1
  const parts: Array<Element> = []
  options.labels.forEach((label, i) => {
    const y = i * row
    const value = options.values[i]!
    const barWidth = (value / max) * (width - left - right)
    const name = svg("text", {
      x: left - 6,
      y: y + row / 2 + 4,
      "text-anchor": "end",
      "font-size": 12,
      fill: "#1b1f24"
    })
    name.textContent = label.length > 16 ? `${label.slice(0, 15)}…` : label
    parts.push(name)
    parts.push(
      svg("rect", {
        x: left,
        y: y + 5,
        width: Math.max(value > 0 ? 2 : 0, barWidth),
        height: row - 10,
        fill: options.color
      })
    )
    const figure = svg("text", { x: left + barWidth + 6, y: y + row / 2 + 4, "font-size": 12, fill: "#1b1f24" })
    figure.textContent = format(value)
    parts.push(figure)
  })
  return h(
    "figure",
    { class: "chart card" },
    h("figcaption", null, options.title),
    options.labels.length === 0
      ? h("p", { class: "muted" }, "Nothing yet.")
      : svg("svg", {
        viewBox: `0 0 ${width} ${height}`,
        role: "img",
        "aria-label": `${options.title}: ${options.summary}`
      }, ...parts),
    figures(
      options.title,
      options.labels,
      [{ name: options.title, color: options.color }],
      options.values.map((v) => [v]),
      format
    )
  )
}
