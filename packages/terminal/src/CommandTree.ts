/**
 * A command line's tree as plain data: every command with its description, options (name,
 * alias, value placeholder, choices, default, repeatable) and arguments, read once from an
 * @effect/cli `Command`. Both the help text and the shell completion scripts are written from
 * it, so they list exactly what the parser accepts. On the start-up path of both binaries: no
 * imports beyond types.
 */
import type { Command, HelpDoc } from "@effect/cli"
import type * as Span from "@effect/cli/HelpDoc/Span"

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

/*
 * @effect/cli (0.77) has no public walk of a command's options and arguments with their
 * descriptions, value kinds and defaults (its `Usage` names options but describes none), so
 * the tree is read from the descriptors themselves: the nodes below and the fields named in
 * them, exactly, and nothing else. Any node of another kind is refused, not skipped, so an
 * @effect/cli that changes them fails at once; `test/CommandTree.test.ts` reads one command
 * of every kind and pins what comes out.
 */

/** `Primitive` (`internal/primitive`): `Bool`, `Choice` (`alternatives`), `Path`, `Integer`, ... */
type PrimitiveNode = { readonly _tag: string; readonly alternatives?: ReadonlyArray<readonly [string, unknown]> }

/** A value that may be absent, as the descriptors hold `pseudoName`. */
type Maybe<A> = { readonly _tag: "Some"; readonly value: A } | { readonly _tag: "None" }

/** `Options` (`internal/options`). */
type OptionsNode =
  | { readonly _tag: "Empty" }
  | {
    readonly _tag: "Single"
    readonly name: string
    readonly aliases: ReadonlyArray<string>
    readonly primitiveType: PrimitiveNode
    readonly description: HelpDoc.HelpDoc
    readonly pseudoName: Maybe<string>
  }
  | { readonly _tag: "Both" | "OrElse"; readonly left: OptionsNode; readonly right: OptionsNode }
  | { readonly _tag: "Map" | "WithFallback"; readonly options: OptionsNode }
  | { readonly _tag: "WithDefault"; readonly options: OptionsNode; readonly fallback: unknown }
  | { readonly _tag: "Variadic" | "KeyValueMap"; readonly argumentOption: OptionsNode }

/** `Args` (`internal/args`). */
type ArgsNode =
  | { readonly _tag: "Empty" }
  | {
    readonly _tag: "Single"
    readonly name: string
    readonly pseudoName: Maybe<string>
    readonly primitiveType: PrimitiveNode
    readonly description: HelpDoc.HelpDoc
  }
  | { readonly _tag: "Both"; readonly left: ArgsNode; readonly right: ArgsNode }
  | { readonly _tag: "Map" | "WithFallbackConfig" | "WithDefault" | "Variadic"; readonly args: ArgsNode }

/** `Command` descriptors (`internal/commandDescriptor`). */
type CommandNode =
  | { readonly _tag: "Map"; readonly command: CommandNode }
  | { readonly _tag: "Subcommands"; readonly parent: CommandNode; readonly children: ReadonlyArray<CommandNode> }
  | {
    readonly _tag: "Standard"
    readonly name: string
    readonly description: HelpDoc.HelpDoc
    readonly options: OptionsNode
    readonly args: ArgsNode
  }
  | { readonly _tag: "GetUserInput"; readonly name: string; readonly description: HelpDoc.HelpDoc }

const unknownNode = (kind: string, node: { readonly _tag: string }): never => {
  throw new Error(`@effect/cli ${kind} of an unknown kind: ${node._tag} (CommandTree reads @effect/cli 0.77's)`)
}

/** The text of a span. */
const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

/** The text of a help document, on one line. */
export const docText = (doc: HelpDoc.HelpDoc): string => {
  const parts: Array<string> = []
  const walk = (node: HelpDoc.HelpDoc): void => {
    switch (node._tag) {
      case "Empty":
        return
      case "Sequence":
        walk(node.left)
        parts.push(" ")
        walk(node.right)
        return
      case "Paragraph":
      case "Header":
        parts.push(spanText(node.value))
        return
      case "Enumeration":
        for (const element of node.elements) {
          walk(element)
          parts.push(" ")
        }
        return
      case "DescriptionList":
        for (const [term, description] of node.definitions) {
          parts.push(spanText(term), " ")
          walk(description)
          parts.push(" ")
        }
        return
    }
  }
  walk(doc)
  return parts.join("").replace(/\s+/g, " ").trim()
}

const valueKind = (primitive: PrimitiveNode): ValueKind =>
  primitive._tag === "Choice"
    ? { _tag: "Choice", choices: primitive.alternatives!.map(([name]) => name) }
    : primitive._tag === "Path"
    ? { _tag: "File" }
    : { _tag: "Text" }

/**
 * What follows an option in the help: its declared name (`Options.withPseudoName`), else what
 * its kind of value says (`N` for a number, `FILE` for a path), else the option's own name.
 */
const placeholderOf = (single: Extract<OptionsNode, { _tag: "Single" }>): string => {
  if (single.pseudoName._tag === "Some") return single.pseudoName.value
  switch (single.primitiveType._tag) {
    case "Integer":
    case "Float":
      return "N"
    case "Path":
      return "FILE"
    default:
      return single.name.toUpperCase().replace(/-/g, "_")
  }
}

/** A fallback worth printing: a plain value, not an absent `Option` nor a flag's `false`. */
const printable = (fallback: unknown): string | undefined =>
  typeof fallback === "number" || typeof fallback === "string" ? String(fallback) : undefined

const optionsOf = (root: OptionsNode): Array<OptionSpec> => {
  const found: Array<OptionSpec> = []
  const walk = (node: OptionsNode, context: { optional: boolean; fallback: string | undefined; repeated: boolean }) => {
    switch (node._tag) {
      case "Empty":
        return
      case "Single": {
        const flag = node.primitiveType._tag === "Bool"
        found.push({
          name: `--${node.name}`,
          aliases: node.aliases.map((alias) => alias.length === 1 ? `-${alias}` : `--${alias}`),
          description: docText(node.description),
          placeholder: flag ? undefined : placeholderOf(node),
          value: flag ? undefined : valueKind(node.primitiveType),
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
      case "KeyValueMap":
        return walk(node.argumentOption, { ...context, repeated: true })
      default:
        return unknownNode("option", node)
    }
  }
  walk(root, { optional: false, fallback: undefined, repeated: false })
  return found
}

const argsOf = (root: ArgsNode): Array<ArgSpec> => {
  const found: Array<ArgSpec> = []
  const walk = (node: ArgsNode, context: { optional: boolean; variadic: boolean }) => {
    switch (node._tag) {
      case "Empty":
        return
      case "Single":
        found.push({
          name: node.pseudoName._tag === "Some" ? node.pseudoName.value : node.name,
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
        return unknownNode("argument", node)
    }
  }
  walk(root, { optional: false, variadic: false })
  return found
}

const specOf = (node: CommandNode): CommandSpec => {
  switch (node._tag) {
    case "Map":
      return specOf(node.command)
    case "Subcommands":
      return { ...specOf(node.parent), children: node.children.map(specOf) }
    case "Standard":
      return {
        name: node.name.trim(),
        description: docText(node.description),
        options: optionsOf(node.options),
        args: argsOf(node.args),
        children: []
      }
    case "GetUserInput":
      return { name: node.name.trim(), description: docText(node.description), options: [], args: [], children: [] }
    default:
      return unknownNode("command", node)
  }
}

/** The tree of a command and its subcommands. */
export const of = (command: Command.Command<any, any, any, any>): CommandSpec =>
  specOf(command.descriptor as unknown as CommandNode)

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
