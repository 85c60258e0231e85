/**
 * What the command tree reads of @effect/cli's descriptors, pinned: one command built with
 * every kind of option, argument and command node the tree knows, and the spec it must read
 * from them. @effect/cli offers no public walk of its descriptors, so an upgrade that changes
 * them (a node renamed, a field moved) fails here rather than dropping options from the help
 * and the completion scripts; a node of a kind the tree does not know is refused.
 */
import { Args, Command, HelpDoc, Options } from "@effect/cli"
import * as Span from "@effect/cli/HelpDoc/Span"
import { assert, describe, it } from "@effect/vitest"
import { Config, Effect } from "effect"
import * as CommandTree from "../src/CommandTree.js"

const noop = () => Effect.void

const list = Command.make("list", {
  yes: Options.boolean("yes").pipe(Options.withAlias("y"), Options.withDescription("Skip the question")),
  status: Options.choice("status", ["pending", "failed"] as const).pipe(
    Options.withDescription("Only these"),
    Options.optional
  ),
  page: Options.integer("page").pipe(Options.withDefault(1)),
  timeout: Options.float("timeout").pipe(Options.withPseudoName("SECONDS"), Options.map((s) => s * 1000)),
  input: Options.file("input"),
  apiKey: Options.redacted("api-key"),
  limit: Options.keyValueMap("limit"),
  tag: Options.text("tag").pipe(Options.repeated),
  either: Options.text("left").pipe(Options.orElse(Options.text("right"))),
  region: Options.text("region").pipe(Options.withFallbackConfig(Config.string("REGION"))),
  order: Args.text({ name: "ORDER_NUMBER" }).pipe(Args.withDescription("The order")),
  sheet: Args.file({ name: "FILE.csv" }).pipe(Args.optional),
  count: Args.integer().pipe(Args.withFallbackConfig(Config.integer("COUNT"))),
  phones: Args.text({ name: "PHONE" }).pipe(Args.atLeast(1))
}, noop).pipe(Command.withDescription(HelpDoc.p("List them")))

const ask = Command.prompt("ask", { _tag: "Prompt" } as never, noop)

const root = Command.make("tool").pipe(
  Command.withDescription("The tool"),
  Command.withSubcommands([list, ask])
)

const option = (
  name: string,
  fields: Partial<CommandTree.OptionSpec> & Pick<CommandTree.OptionSpec, "placeholder" | "value">
): CommandTree.OptionSpec => ({
  name,
  aliases: [],
  description: "",
  fallback: undefined,
  required: true,
  repeated: false,
  ...fields
})

const text = { _tag: "Text" } as const

describe("CommandTree", () => {
  it("reads every kind of option, argument and command of @effect/cli 0.77", () => {
    const spec = CommandTree.of(root)
    assert.strictEqual(spec.name, "tool")
    assert.strictEqual(spec.description, "The tool")
    assert.deepStrictEqual(spec.children.map((child) => child.name), ["list", "ask"])
    const [leaf, prompt] = spec.children
    assert.strictEqual(leaf!.description, "List them")
    assert.deepStrictEqual(leaf!.options, [
      option("--yes", {
        aliases: ["-y"],
        description: "Skip the question",
        placeholder: undefined,
        value: undefined,
        required: false
      }),
      option("--status", {
        description: "Only these",
        placeholder: "STATUS",
        value: { _tag: "Choice", choices: ["pending", "failed"] },
        required: false
      }),
      option("--page", { placeholder: "N", value: text, fallback: "1", required: false }),
      option("--timeout", { placeholder: "SECONDS", value: text }),
      option("--input", { placeholder: "FILE", value: { _tag: "File" } }),
      option("--api-key", { placeholder: "API_KEY", value: text }),
      option("--limit", { placeholder: "LIMIT", value: text, repeated: true }),
      option("--tag", { placeholder: "TAG", value: text, repeated: true }),
      option("--left", { placeholder: "LEFT", value: text }),
      option("--right", { placeholder: "RIGHT", value: text }),
      option("--region", { placeholder: "REGION", value: text })
    ])
    assert.deepStrictEqual(leaf!.args, [
      { name: "ORDER_NUMBER", description: "The order", value: text, optional: false, variadic: false },
      { name: "FILE.csv", description: "", value: { _tag: "File" }, optional: true, variadic: false },
      { name: "<integer>", description: "", value: text, optional: false, variadic: false },
      { name: "PHONE", description: "", value: text, optional: false, variadic: true }
    ])
    assert.deepStrictEqual(prompt, { name: "ask", description: "", options: [], args: [], children: [] })
  })

  it("refuses a descriptor of a kind it does not know", () => {
    const strange = {
      descriptor: {
        _tag: "Standard",
        name: "odd",
        description: HelpDoc.empty,
        options: { _tag: "Renamed" },
        args: { _tag: "Empty" }
      }
    } as unknown as Command.Command<"odd", never, never, unknown>
    assert.throws(() => CommandTree.of(strange), /option of an unknown kind: Renamed/)
  })

  it("reads a help document's text, styled spans included", () => {
    const doc = HelpDoc.sequence(
      HelpDoc.h1("Title"),
      HelpDoc.p(Span.spans([Span.strong("bold"), Span.text(" and "), Span.uri("u")]))
    )
    assert.strictEqual(CommandTree.docText(doc), "Title bold and u")
  })
})
