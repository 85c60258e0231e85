/**
 * The catalogue: every network and bundle with its prices per group, each activated or
 * deactivated on its own; the catalogue file downloaded; and a file imported only after its
 * preview (the server's dry run) has shown what it would create and update.
 */
import { ApiFailure } from "../../Api.js"
import type { Page } from "../../App.js"
import { h, replace } from "../../Dom.js"
import { download } from "../../Download.js"
import type { Life } from "../../Life.js"
import { list, status } from "../../List.js"
import { count, ghs } from "../../Words.js"
import { api, type Bundle, type CatalogFile, type ImportResult, type Network } from "../Endpoints.js"
import { actionButton } from "../Ui.js"

/**
 * Activates or deactivates a network or a bundle; deactivating asks first (`consequence`: what
 * stops), since it stops sales at once.
 */
const toggle = (what: string, active: boolean, consequence: string, run: (active: boolean) => Promise<unknown>) => {
  let now = active
  const control = actionButton(now ? "Deactivate" : "Activate", {
    accessibleName: `${now ? "Deactivate" : "Activate"} ${what}`,
    kind: "secondary",
    pending: "Saving…",
    confirm: () => (now ? `Deactivate ${what}? ${consequence}` : `Activate ${what}? It is sold again at once.`),
    run: async () => {
      await run(!now)
      now = !now
      control.button.textContent = now ? "Deactivate" : "Activate"
      control.button.setAttribute("aria-label", `${now ? "Deactivate" : "Activate"} ${what}`)
      return now ? "Active." : "Inactive: not sold."
    }
  })
  return control.element
}

const networkSection = (network: Network, groups: ReadonlyArray<string>, life: Life): Node =>
  h(
    "section",
    { class: "card", "aria-label": network.name },
    h("h2", null, `${network.name} `, status(network.active ? "active" : "inactive")),
    toggle(
      network.name,
      network.active,
      `None of its ${count(network.bundles.length, "bundle")} can be bought until it is activated again.`,
      (active) => api.updateNetwork({ path: { network_id: network.id }, payload: { active }, signal: life.signal })
    ),
    // Folded on a phone (a long list per network); open on a wide screen.
    h(
      "details",
      { open: matchMedia("(min-width: 720px)").matches },
      h("summary", null, `${count(network.bundles.length, "bundle")} and their prices`),
      list({
        caption: `${network.name} bundles and prices`,
        empty: "No bundles.",
        rows: network.bundles,
        columns: [
          {
            label: "Bundle",
            place: "title",
            cell: (b: Bundle) => (b.name.includes(b.size) ? b.name : `${b.name} (${b.size})`)
          },
          { label: "State", place: "badge", cell: (b) => status(b.active ? "active" : "inactive") },
          { label: "Key", place: "line", cell: (b) => h("code", null, b.key) },
          { label: "Base price", place: "amount", numeric: true, cell: (b) => ghs(b.price) },
          ...groups.map((g) => ({
            label: `${g} price`,
            numeric: true,
            cell: (b: Bundle) => (b.prices[g] === undefined ? "base" : ghs(b.prices[g]!))
          })),
          {
            label: "Action",
            place: "action",
            cell: (b) =>
              toggle(
                `${network.name} ${b.size}`,
                b.active,
                "It cannot be bought until it is activated again.",
                (active) => api.updateBundle({ path: { bundle_id: b.id }, payload: { active }, signal: life.signal })
              )
          }
        ]
      })
    )
  )

const summary = (result: ImportResult, dry: boolean): Node => {
  const counts = (["price_groups", "networks", "bundles"] as const).map((kind) => {
    const [one, many] = kind === "price_groups" ? ["price group", "price groups"] : [kind.slice(0, -1), kind]
    const c = result[kind]
    return `${count(c.created, one, many)} ${dry ? "to create" : "created"}, ${c.updated} ${
      dry ? "to update" : "updated"
    }, ${c.unchanged} unchanged`
  })
  const changes = result.changes ?? []
  const changed = (["price_groups", "networks", "bundles"] as const).some((k) =>
    result[k].created + result[k].updated > 0
  )
  return h(
    "div",
    { "data-testid": dry ? "import-preview" : "import-result" },
    h(
      "p",
      { class: changed ? "form-message ok" : "muted", role: "status" },
      changed
        ? dry ? "The file would make these changes:" : "Imported: the catalogue changed as follows."
        : dry
        ? "The file changes nothing."
        : "Imported: nothing changed."
    ),
    h("ul", null, counts.map((c) => h("li", null, c))),
    changes.length === 0 ? null : list({
      caption: dry ? "What the import would change" : "What the import changed",
      empty: "",
      rows: changes,
      columns: [
        { label: "Key", place: "title", cell: (c) => h("code", null, c.key) },
        { label: "Action", place: "badge", cell: (c) => c.action },
        { label: "Kind", place: "line", cell: (c) => c.kind.replace("_", " ") }
      ]
    })
  )
}

/** The import: read a file, preview it, apply exactly the previewed file. */
const importer = (reloadList: () => void, life: Life): Node => {
  const input = h("input", {
    type: "file",
    id: "catalog-file",
    accept: ".json,application/json",
    "aria-describedby": "catalog-file-error"
  })
  const error = h("p", { id: "catalog-file-error", class: "field-error" })
  const out = h("div", { role: "status", "aria-live": "polite" })
  let file: CatalogFile | undefined
  const apply = actionButton("Apply the import", {
    pending: "Importing…",
    once: true,
    run: async () => {
      const result = await api.importCatalog({ payload: file!, signal: life.signal })
      replace(out, summary(result, false))
      reloadList()
      return "Imported."
    }
  })
  apply.button.disabled = true
  const preview = actionButton("Preview the changes", {
    kind: "secondary",
    pending: "Checking the file…",
    run: async () => {
      error.textContent = ""
      input.removeAttribute("aria-invalid")
      apply.button.disabled = true
      file = undefined
      const chosen = input.files?.[0]
      try {
        if (chosen === undefined) throw new Error("Choose a catalogue file (JSON) first.")
        let parsed: unknown
        try {
          parsed = JSON.parse(await chosen.text())
        } catch {
          throw new Error("This file is not JSON: export the catalogue below to see the format.")
        }
        const result = await api.previewImport({ payload: parsed as CatalogFile, signal: life.signal })
        file = parsed as CatalogFile
        replace(out, summary(result, true))
        apply.button.disabled = false
        return "Preview ready: apply it to make these changes."
      } catch (e) {
        input.setAttribute("aria-invalid", "true")
        if (e instanceof ApiFailure && e.errors) {
          error.textContent = Object.entries(e.errors).map(([path, messages]) => `${path}: ${messages.join(" ")}`).join(
            "; "
          )
        } else {
          error.textContent = e instanceof Error ? e.message : String(e)
        }
        replace(out)
        throw e
      }
    }
  })
  input.addEventListener("change", () => {
    apply.button.disabled = true
    file = undefined
    replace(out)
  })
  const exporter = actionButton("Download the catalogue", {
    kind: "secondary",
    pending: "Preparing…",
    run: async () => {
      const { success: _, ...catalog } = await api.exportCatalog({ signal: life.signal })
      download("catalogue.json", JSON.stringify(catalog, null, 2), "application/json")
      return "Downloaded."
    }
  })
  return h(
    "section",
    { "aria-label": "Import a catalogue file" },
    h("h2", null, "Import a catalogue file"),
    h(
      "p",
      { class: "muted" },
      "Networks are matched by slug and bundles by key; importing the same file twice changes nothing."
    ),
    h("div", { class: "field" }, h("label", { for: "catalog-file" }, "Catalogue file"), input, error),
    h("div", { class: "actions" }, preview.element, apply.element),
    out,
    h("p", null, exporter.element)
  )
}

export const catalog: Page = {
  title: "Catalogue",
  render: async ({ life }) => {
    const box = h("div")
    // The list failing to load leaves the import usable: it is how a catalogue is repaired.
    const load = () =>
      Promise.all([api.networks({ signal: life.signal }), api.priceGroups({ signal: life.signal })]).then(
        ([{ networks }, { price_groups }]) => {
          replace(
            box,
            networks.length === 0
              ? h("p", { class: "muted" }, "No networks yet: import a catalogue file.")
              : networks.map((n) => networkSection(n, price_groups, life))
          )
        },
        (error: unknown) => {
          replace(
            box,
            h("p", { class: "form-message", role: "alert" }, error instanceof Error ? error.message : String(error))
          )
        }
      )
    await load()
    return h("div", null, h("h1", null, "Catalogue"), importer(() => void load(), life), box)
  }
}
