/** Offering a text the page made (a CSV export, a catalogue file) as a file download. */

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
