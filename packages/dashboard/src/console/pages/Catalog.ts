/**
 * The catalogue: every network and bundle with its prices per group, each activated or
 * deactivated on its own; the catalogue file downloaded; and a file imported only after its
 * preview (the server's dry run) has shown what it would create and update.
 */
import { ApiFailure } from "../../Api.js"
import type { Page } from "../../App.js"
import { ghs, h, replace } from "../../Dom.js"
import { download } from "../../Download.js"
import { api, type Bundle, type CatalogFile, type ImportResult, type Network } from "../Endpoints.js"
import { actionButton, table } from "../Ui.js"

const toggle = (what: string, active: boolean, run: (active: boolean) => Promise<unknown>) => {
  let now = active
  const control = actionButton(now ? "Deactivate" : "Activate", {
    accessibleName: `${now ? "Deactivate" : "Activate"} ${what}`,
    kind: "secondary",
    pending: "Saving…",
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

const networkSection = (network: Network, groups: ReadonlyArray<string>): Node =>
  h(
    "section",
    { class: "card", "aria-label": network.name },
    h(
      "h2",
      null,
      `${network.name} `,
      h(
        "span",
        { class: `status status-${network.active ? "successful" : "failed"}` },
        network.active ? "active" : "inactive"
      )
    ),
    toggle(network.name, network.active, (active) =>
      api.updateNetwork({ path: { network_id: network.id }, payload: { active } })),
    table(
      `${network.name} bundles and prices (GH₵)`,
      [
        "Bundle",
        "Key",
        ["Base", true],
        ...groups.map((g) =>
          [g, true] as const
        ),
        "State",
        ""
      ],
      network.bundles.map((b: Bundle) => [
        `${b.size} ${b.name}`,
        h("code", null, b.key),
        ghs(b.price),
        ...groups.map((g) => (b.prices[g] === undefined ? "—" : ghs(b.prices[g]!))),
        b.active ? "active" : "inactive",
        toggle(
          `${network.name} ${b.size}`,
          b.active,
          (active) => api.updateBundle({ path: { bundle_id: b.id }, payload: { active } })
        )
      ]),
      { empty: "No bundles." }
    )
  )

const summary = (result: ImportResult, dry: boolean): Node => {
  const counts = (["price_groups", "networks", "bundles"] as const).map((kind) =>
    `${kind.replace("_", " ")}: ${result[kind].created} ${dry ? "to create" : "created"}, ${result[kind].updated} ${
      dry ? "to update" : "updated"
    }, ${result[kind].unchanged} unchanged`
  )
  const changes = result.changes ?? []
  return h(
    "div",
    { "data-testid": dry ? "import-preview" : "import-result" },
    h("ul", null, counts.map((c) => h("li", null, c))),
    changes.length === 0
      ? h("p", { class: "muted" }, dry ? "The file changes nothing." : "Nothing changed.")
      : table(
        dry ? "What the import would change" : "What the import changed",
        ["Kind", "Action", "Key"],
        changes.map((c) => [c.kind.replace("_", " "), c.action, h("code", null, c.key)])
      )
  )
}

/** The import: read a file, preview it, apply exactly the previewed file. */
const importer = (reloadList: () => void): Node => {
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
      const result = await api.importCatalog({ payload: file! })
      replace(out, h("p", { class: "form-message ok" }, "Imported."), summary(result, false))
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
        const result = await api.previewImport({ payload: parsed as CatalogFile })
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
      const { success: _, ...catalog } = await api.exportCatalog()
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
  render: async () => {
    const list = h("div")
    // The list failing to load leaves the import usable: it is how a catalogue is repaired.
    const load = () =>
      api.networks().then(({ networks }) => {
        const groups = [...new Set(networks.flatMap((n) => n.bundles.flatMap((b) => Object.keys(b.prices))))].sort()
        replace(
          list,
          networks.length === 0
            ? h("p", { class: "muted" }, "No networks yet: import a catalogue file.")
            : networks.map((n) => networkSection(n, groups))
        )
      }, (error: unknown) => {
        replace(
          list,
          h("p", { class: "form-message", role: "alert" }, error instanceof Error ? error.message : String(error))
        )
      })
    await load()
    return h("div", null, h("h1", null, "Catalogue"), importer(() => void load()), list)
  }
}
