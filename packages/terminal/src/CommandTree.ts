/**
 * A command line's tree as plain data: every command with its description, options (name,
 * alias, value placeholder, choices, default, repeatable) and arguments, read once from an
 * @effect/cli `Command`. Both the help text and the shell completion scripts are written from
 * it, so they list exactly what the parser accepts. @effect/cli 0.77 exposes no public walk of
 * its descriptors, so this reads their documented shape (`_tag` and fields) and nothing else.
 * On the start-up path of both binaries: no imports beyond types.
 */
import type { Command, HelpDoc } from "@effect/cli"

/** What an option's or argument's value is, for completion: a word from a list, a file, or free text. */
export type ValueKind =
  | { readonly _tag: "Choice"; readonly choices: ReadonlyArray<string> }
  | { readonly _tag: "File" }
  | { readonly _tag: "Text" }

/** One option of a command. */
export interface OptionSpec {
  /** `--status`. */
  readonly name: string
  /** `-y`. */
  readonly aliases: ReadonlyArray<string>
  readonly description: string
  /** None for a flag; otherwise what follows the option (`STATUS`, `N`, `FILE`). */
  readonly placeholder: string | undefined
  readonly value: ValueKind | undefined
  /** The value used when the option is not given, when there is one worth printing. */
  readonly fallback: string | undefined
  /** Must be given. */
  readonly required: boolean
  /** May be given more than once. */
  readonly repeated: boolean
}

/** One positional argument of a command. */
export interface ArgSpec {
  /** `ORDER_NUMBER`. */
  readonly name: string
  readonly description: string
  readonly value: ValueKind
  readonly optional: boolean
  /** Takes several words (`PHONE...`). */
  readonly variadic: boolean
}

/** One command: a leaf that runs, or a group of subcommands (or both). */
export interface CommandSpec {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionSpec>
  readonly args: ReadonlyArray<ArgSpec>
  readonly children: ReadonlyArray<CommandSpec>
}

// The descriptor shapes read here (`@effect/cli/internal/{commandDescriptor,options,args,primitive}`).
type Node = { readonly _tag: string; readonly [field: string]: any }

/** The text of a help document, on one line. */
export const docText = (doc: HelpDoc.HelpDoc | Node): string => {
  const parts: Array<string> = []
  const span = (node: Node): void => {
    if (node._tag === "Sequence") {
      span(node.left)
      span(node.right)
    } else if (typeof node.value === "string") parts.push(node.value)
  }
  const walk = (node: Node): void => {
    switch (node._tag) {
      case "Sequence":
        walk(node.left)
        parts.push(" ")
        walk(node.right)
        return
      case "Paragraph":
      case "Header":
        return span(node.value)
      case "Enumeration":
        for (const element of node.elements as ReadonlyArray<Node>) {
          walk(element)
          parts.push(" ")
        }
        return
      case "DescriptionList":
        for (const [term, description] of node.definitions as ReadonlyArray<[Node, Node]>) {
          span(term)
          parts.push(" ")
          walk(description)
          parts.push(" ")
        }
        return
      default:
        return
    }
  }
  walk(doc as Node)
  return parts.join("").replace(/\s+/g, " ").trim()
}

const valueKind = (primitive: Node): ValueKind =>
  primitive._tag === "Choice"
    ? { _tag: "Choice", choices: (primitive.alternatives as ReadonlyArray<[string, unknown]>).map(([name]) => name) }
    : primitive._tag === "Path"
    ? { _tag: "File" }
    : { _tag: "Text" }

const placeholderOf = (primitive: Node, name: string): string => {
  switch (primitive._tag) {
    case "Integer":
    case "Float":
      return name === "timeout" ? "SECONDS" : "N"
    case "Path":
      return "FILE"
    case "Redacted":
    case "Secret":
      return name.endsWith("key") ? "KEY" : name.toUpperCase()
    default:
      return /url$/.test(name)
        ? "URL"
        : /key$/.test(name)
        ? "KEY"
        : name === "from" || name === "to"
        ? "DATE"
        : name.toUpperCase().replace(/-/g, "_")
  }
}

/** A fallback worth printing: a plain value, not an absent `Option` nor a flag's `false`. */
const printable = (fallback: unknown): string | undefined =>
  typeof fallback === "number" || typeof fallback === "string" ? String(fallback) : undefined

const optionsOf = (root: Node): Array<OptionSpec> => {
  const found: Array<OptionSpec> = []
  const walk = (node: Node, context: { optional: boolean; fallback: string | undefined; repeated: boolean }) => {
    switch (node._tag) {
      case "Single": {
        const primitive = node.primitiveType as Node
        const flag = primitive._tag === "Bool"
        found.push({
          name: `--${node.name}`,
          aliases: (node.aliases as ReadonlyArray<string>).map((alias) =>
            alias.length === 1 ? `-${alias}` : `--${alias}`
          ),
          description: docText(node.description),
          placeholder: flag ? undefined : placeholderOf(primitive, node.name),
          value: flag ? undefined : valueKind(primitive),
          fallback: context.fallback,
          required: !flag && !context.optional,
          repeated: context.repeated
        })
        return
      }
      case "Both":
      case "OrElse":
        walk(node.left, context)
        walk(node.right, context)
        return
      case "Map":
      case "WithFallback":
        return walk(node.options, context)
      case "WithDefault":
        return walk(node.options, { ...context, optional: true, fallback: printable(node.fallback) })
      case "Variadic":
        return walk(node.argumentOption, { ...context, repeated: true })
      case "KeyValueMap":
        return walk(node.argumentOption, { ...context, repeated: true })
      default:
        return
    }
  }
  walk(root, { optional: false, fallback: undefined, repeated: false })
  return found
}

const argsOf = (root: Node): Array<ArgSpec> => {
  const found: Array<ArgSpec> = []
  const walk = (node: Node, context: { optional: boolean; variadic: boolean }) => {
    switch (node._tag) {
      case "Single":
        found.push({
          name: node.pseudoName?._tag === "Some" ? node.pseudoName.value : node.name,
          description: docText(node.description),
          value: valueKind(node.primitiveType),
          optional: context.optional,
          variadic: context.variadic
        })
        return
      case "Both":
        walk(node.left, context)
        walk(node.right, context)
        return
      case "Map":
      case "WithFallbackConfig":
        return walk(node.args, context)
      case "WithDefault":
        return walk(node.args, { ...context, optional: true })
      case "Variadic":
        return walk(node.args, { ...context, variadic: true })
      default:
        return
    }
  }
  walk(root, { optional: false, variadic: false })
  return found
}

const specOf = (node: Node): CommandSpec => {
  switch (node._tag) {
    case "Map":
      return specOf(node.command)
    case "Subcommands": {
      const parent = specOf(node.parent)
      return { ...parent, children: (node.children as ReadonlyArray<Node>).map(specOf) }
    }
    case "Standard":
    case "GetUserInput":
      return {
        name: (node.name as string).trim(),
        description: docText(node.description),
        options: node._tag === "Standard" ? optionsOf(node.options) : [],
        args: node._tag === "Standard" ? argsOf(node.args) : [],
        children: []
      }
    default:
      throw new Error(`unknown command descriptor ${node._tag}`)
  }
}

/** The tree of a command and its subcommands. */
export const of = (command: Command.Command<any, any, any, any>): CommandSpec =>
  specOf((command as unknown as { readonly descriptor: Node }).descriptor)

/** The options that take a value, by every name they answer to. */
export const valueOptions = (spec: CommandSpec): Set<string> =>
  new Set(spec.options.flatMap((option) => option.value === undefined ? [] : [option.name, ...option.aliases]))

/**
 * The command the words name (`["orders", "list", "--status", "pending"]` names `orders list`),
 * the path to it and the words left: subcommand names are followed while they match, an
 * option's value skipped.
 */
export const find = (
  root: CommandSpec,
  words: ReadonlyArray<string>
): { readonly spec: CommandSpec; readonly path: ReadonlyArray<string>; readonly rest: ReadonlyArray<string> } => {
  let spec = root
  const path: Array<string> = []
  const rest: Array<string> = []
  let takesValue = valueOptions(spec)
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word === "--") break
    if (word.startsWith("-")) {
      if (takesValue.has(word)) i++
      continue
    }
    const child = rest.length === 0 ? spec.children.find((c) => c.name === word) : undefined
    if (child === undefined) {
      rest.push(word)
      continue
    }
    spec = child
    path.push(child.name)
    takesValue = valueOptions(spec)
  }
  return { spec, path, rest }
}

/** Every command of the tree with its path, the root first. */
export const walk = (
  root: CommandSpec
): Array<{ readonly path: ReadonlyArray<string>; readonly spec: CommandSpec }> => {
  const all: Array<{ path: ReadonlyArray<string>; spec: CommandSpec }> = []
  const visit = (spec: CommandSpec, path: ReadonlyArray<string>) => {
    all.push({ path, spec })
    for (const child of spec.children) visit(child, [...path, child.name])
  }
  visit(root, [])
  return all
}
