/**
 * The help of both command lines, written from the command tree rather than by @effect/cli's
 * own layout (which lists every command's options on one line of several hundred columns and
 * adds a sentence of filler to every option): a usage line, one line per option with its
 * value, choices and default, the arguments, the subcommands, and examples. Wrapped to the
 * terminal's width (80 columns on a pipe, never more than 100). On the start-up path.
 */
import type { ArgSpec, CommandSpec, OptionSpec } from "./CommandTree.js"
import * as CommandTree from "./CommandTree.js"

/** Examples of a command line, by command path (`"orders list"`, `""` for the root). */
export type Examples = { readonly [path: string]: ReadonlyArray<string> }

/** The options every command line answers to, whatever the command. */
const BUILT_IN: ReadonlyArray<OptionSpec> = [
  flag("--help", ["-h"], "Print this help"),
  flag("--version", [], "Print the version")
]

const COMPLETIONS: OptionSpec = {
  name: "--completions",
  aliases: [],
  description: "Print the shell completion script (see Completion below)",
  placeholder: "bash|zsh|fish",
  value: { _tag: "Choice", choices: ["bash", "zsh", "fish"] },
  fallback: undefined,
  required: false,
  repeated: false
}

function flag(name: string, aliases: ReadonlyArray<string>, description: string): OptionSpec {
  return {
    name,
    aliases,
    description,
    placeholder: undefined,
    value: undefined,
    fallback: undefined,
    required: false,
    repeated: false
  }
}

/** Splits text into lines of at most `width` characters, at spaces. */
export const wrap = (text: string, width: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line === "") line = word
    else if (line.length + 1 + word.length <= width) line += ` ${word}`
    else {
      lines.push(line)
      line = word
    }
  }
  if (line !== "" || lines.length === 0) lines.push(line)
  return lines
}

/** `term  description` rows, the descriptions aligned and wrapped under themselves. */
const rows = (entries: ReadonlyArray<readonly [string, string]>, width: number): Array<string> => {
  const termWidth = Math.min(Math.max(...entries.map(([term]) => term.length)), 30)
  const descriptionWidth = Math.max(width - termWidth - 4, 30)
  return entries.flatMap(([term, description]) => {
    const lines = wrap(description, descriptionWidth)
    if (term.length > termWidth) {
      return [`  ${term}`, ...lines.map((line) => `  ${" ".repeat(termWidth)}  ${line}`)]
    }
    return lines.map((line, i) => `  ${(i === 0 ? term : "").padEnd(termWidth)}  ${line}`.trimEnd())
  })
}

/** How an option is written: `-y, --yes`, `--status pending|successful|failed`, `--limit SCOPE=N ...`. */
const optionTerm = (option: OptionSpec): string => {
  const value = option.value?._tag === "Choice" && option.value.choices.join("|").length <= 30
    ? option.value.choices.join("|")
    : option.placeholder
  const names = [...option.aliases, option.name].join(", ")
  return `${names}${value === undefined ? "" : ` ${value}`}${option.repeated ? " ..." : ""}`
}

const optionDescription = (option: OptionSpec): string => {
  const parts = [option.description]
  if (option.value?._tag === "Choice" && option.value.choices.join("|").length > 30) {
    parts.push(`One of: ${option.value.choices.join(", ")}.`)
  }
  if (option.fallback !== undefined && !/\bdefault\b/i.test(option.description)) {
    parts.push(`(default ${option.fallback})`)
  }
  if (option.required) parts.push("(required)")
  return parts.join(" ")
}

const argTerm = (arg: ArgSpec) => `${arg.name}${arg.variadic ? "..." : ""}`

const usageLine = (name: string, path: ReadonlyArray<string>, spec: CommandSpec): string => {
  const words = [name, ...path]
  if (spec.children.length > 0) words.push("COMMAND")
  for (const option of spec.options) {
    if (option.required) words.push(optionTerm(option))
  }
  if (spec.options.some((option) => !option.required)) words.push("[options]")
  for (const arg of spec.args) words.push(arg.optional ? `[${argTerm(arg)}]` : argTerm(arg))
  return words.join(" ")
}

/** The leaf commands under `spec`, by their path from it. */
const leaves = (spec: CommandSpec): Array<readonly [string, CommandSpec]> =>
  CommandTree.walk(spec).flatMap(({ path, spec: node }) =>
    path.length > 0 && node.children.length === 0 ? [[path.join(" "), node] as const] : []
  )

/** The options most commands of the tree take (`--json`, ...): listed after a command's own. */
const common = (root: CommandSpec): Set<string> => {
  const all = leaves(root).map(([, node]) => node)
  const counts = new Map<string, number>()
  for (const node of all) for (const option of node.options) counts.set(option.name, (counts.get(option.name) ?? 0) + 1)
  return new Set([...counts].flatMap(([option, count]) => count * 2 > all.length ? [option] : []))
}

/**
 * The help of the command at `path` of a command line named `name`: what it does, its usage,
 * arguments, options (the shared ones included) and examples; for a group, its commands.
 */
export const render = (
  name: string,
  root: CommandSpec,
  path: ReadonlyArray<string>,
  options: {
    readonly width: number | undefined
    readonly examples?: Examples
    readonly version?: string
    /** Headings in bold (on a stream that takes colour). */
    readonly bold?: (text: string) => string
  }
): string => {
  const bold = options.bold ?? ((text: string) => text)
  const width = Math.min(Math.max(options.width ?? 80, 60), 100)
  const spec = path.reduce<CommandSpec>((node, word) => node.children.find((c) => c.name === word) ?? node, root)
  const lines: Array<string> = []
  const title = path.length === 0 && options.version !== undefined ? `${name} ${options.version}` : undefined
  if (title !== undefined) lines.push(title, "")
  lines.push(...wrap(spec.description, width), "")
  lines.push(`${bold("Usage:")} ${usageLine(name, path, spec)}`, "")
  if (spec.children.length > 0) {
    lines.push(bold("Commands:"))
    lines.push(...rows(
      leaves(spec).map(([sub, node]) => {
        const args = node.args.map((arg) => arg.optional ? `[${argTerm(arg)}]` : argTerm(arg))
        return [[sub, ...args].join(" "), node.description] as const
      }),
      width
    ))
    lines.push("")
  }
  if (spec.args.length > 0) {
    lines.push(bold("Arguments:"))
    lines.push(...rows(spec.args.map((arg) => [argTerm(arg), arg.description] as const), width))
    lines.push("")
  }
  const shared = common(root)
  const own = spec.options.filter((option) => !shared.has(option.name))
  const general = [
    ...spec.options.filter((option) => shared.has(option.name)),
    ...BUILT_IN,
    ...(path.length === 0 ? [COMPLETIONS] : [])
  ]
  const optionRows = (list: ReadonlyArray<OptionSpec>) =>
    rows(list.map((option) => [optionTerm(option), optionDescription(option)] as const), width)
  if (own.length > 0) lines.push(bold("Options:"), ...optionRows(own), "")
  lines.push(bold(own.length > 0 ? "Common options:" : "Options:"), ...optionRows(general), "")
  const examples = options.examples?.[path.join(" ")] ?? []
  if (examples.length > 0) {
    lines.push(bold("Examples:"), ...examples.map((example) => `  ${example}`), "")
  }
  if (path.length === 0) {
    lines.push(
      bold("Completion:"),
      ...wrap(
        `bash: add 'source <(${name} --completions bash)' to ~/.bashrc; zsh: '${name} --completions zsh > ` +
          `"\${fpath[1]}/_${name}"'; fish: '${name} --completions fish > ~/.config/fish/completions/${name}.fish'`,
        width - 2
      ).map((line) => `  ${line}`),
      ""
    )
  }
  if (spec.children.length > 0) {
    lines.push(`Run '${[name, ...path].join(" ")} COMMAND --help' for a command's options and examples.`)
  }
  while (lines[lines.length - 1] === "") lines.pop()
  return lines.join("\n")
}
