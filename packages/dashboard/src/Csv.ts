/** CSV in and out: RFC 4180 quoting, a leading byte-order mark ignored, CRLF or LF. */

/** The rows of a CSV text, each with its 1-based line. */
export const parseCsv = (input: string): Array<{ readonly line: number; readonly cells: Array<string> }> => {
  const text = input.startsWith("\uFEFF") ? input.slice(1) : input
  const rows: Array<{ line: number; cells: Array<string> }> = []
  let line = 1
  let cells: Array<string> = []
  let cell = ""
  let quoted = false
  let start = 1
  const endRow = () => {
    cells.push(cell.trim())
    if (cells.some((c) => c.length > 0)) rows.push({ line: start, cells })
    cells = []
    cell = ""
  }
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (quoted) {
      if (char === "\"" && text[i + 1] === "\"") {
        cell += "\""
        i++
      } else if (char === "\"") quoted = false
      else {
        if (char === "\n") line++
        cell += char
      }
    } else if (char === "\"") quoted = true
    else if (char === ",") {
      cells.push(cell.trim())
      cell = ""
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++
      endRow()
      line++
      start = line
    } else cell += char
  }
  endRow()
  return rows
}

const quote = (value: string | number): string => {
  const text = String(value)
  // A leading = + - @ would be a formula in a spreadsheet: quoted with a ' so it stays text.
  const safe = /^[=+\-@]/.test(text) && !/^-?\d/.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, "\"\"")}"` : safe
}

/** A CSV text of a header and rows. */
export const toCsv = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number>>): string =>
  [header, ...rows].map((row) => row.map(quote).join(",")).join("\r\n") + "\r\n"

/** Offers a text as a file download. */
export const download = (name: string, text: string, type = "text/csv;charset=utf-8"): void => {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const link = document.createElement("a")
  link.href = url
  link.download = name
  document.body.appendChild(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
