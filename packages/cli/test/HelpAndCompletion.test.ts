/**
 * The help and the shell completion scripts of both command lines, written from their command
 * trees. The help of every command: one line per option, no @effect/cli filler, no line past
 * 100 columns, no `--wizard`, no doubled `admin admin`, every option the parser takes listed
 * with its default, and examples. The completion scripts are loaded by the real shells (bash
 * always; zsh and fish when installed, else the test says why it skips) and asked for
 * completions.
 */
import * as ServerCli from "@databundle/server/Cli"
import { examples as serverExamples } from "@databundle/server/Examples"
import * as CommandLine from "@databundle/terminal/CommandLine"
import * as CommandTree from "@databundle/terminal/CommandTree"
import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ResellerCli from "../src/Cli.js"
import { examples as resellerExamples } from "../src/Examples.js"
import { VERSION } from "../src/Version.js"

const lines = [
  { name: "bundles", tree: { command: ResellerCli.command, version: VERSION, examples: resellerExamples } },
  { name: "bundles-server", tree: { command: ServerCli.command, version: ServerCli.VERSION, examples: serverExamples } }
] as const

const screen = { width: undefined, color: false }

const has = (shell: string) => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0

for (const { name, tree } of lines) {
  const root = CommandTree.of(tree.command)
  const help = (words: ReadonlyArray<string>) =>
    Option.getOrThrowWith(CommandLine.answer(name, tree, words, screen), () => new Error(`no help for ${words}`))

  describe(`${name} --help`, () => {
    it("every command's help: its options one per line with defaults, no filler, no line past 100 columns", () => {
      for (const { path: at, spec } of CommandTree.walk(root)) {
        const text = help([...at, "--help"])
        const where = `${name} ${at.join(" ")}`
        for (const line of text.split("\n")) assert.isAtMost(line.length, 100, `${where}: ${line}`)
        assert.notInclude(text, "This setting is optional", where)
        assert.notInclude(text, "A true or false value", where)
        assert.notInclude(text, "--wizard", where)
        assert.notInclude(text, "admin admin", where)
        assert.include(text, `Usage: ${[name, ...at].join(" ")}`, where)
        for (const option of spec.options) {
          const listed = text.split("\n").filter((line) => new RegExp(`^  (-\\w, )?${option.name}\\b`).test(line))
          assert.strictEqual(listed.length, 1, `${where}: ${option.name} listed once`)
          if (option.fallback !== undefined) assert.include(text, `default ${option.fallback}`, where)
        }
        for (const arg of spec.args) assert.include(text, arg.name, where)
        for (const child of spec.children) assert.include(text, child.name, where)
        if (spec.children.length === 0 && spec.name !== "logout") {
          assert.include(text, "Examples:", `${where} has examples`)
        }
      }
    })

    it("a group named without its command prints its help; the root lists every command by its path", () => {
      const top = help([])
      for (const { path: at, spec } of CommandTree.walk(root)) {
        if (at.length > 0 && spec.children.length === 0) assert.include(top, `  ${at.join(" ")}`)
      }
      const group = root.children.find((child) => child.children.length > 0)!
      assert.strictEqual(help([group.name]), help([group.name, "--help"]))
    })
  })

  describe(`${name} --completions`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "completion-"))
    const script = (shell: "bash" | "zsh" | "fish") => {
      const file = path.join(dir, `${name}.${shell}`)
      fs.writeFileSync(file, Option.getOrThrow(CommandLine.answer(name, tree, ["--completions", shell], screen)))
      return file
    }
    // A leaf with a choice option, for the value completions.
    const withChoice = CommandTree.walk(root).find(({ spec }) =>
      spec.options.some((option) => option.value?._tag === "Choice")
    )!
    const choice = withChoice.spec.options.find((option) => option.value?._tag === "Choice")!
    const choices = choice.value?._tag === "Choice" ? choice.value.choices : []
    const topNames = root.children.map((child) => child.name)
    const id = name.replace(/[^A-Za-z0-9_]/g, "_")

    it("bash: the script loads, and completes commands, subcommands, options and their values", () => {
      const file = script("bash")
      const complete = (words: ReadonlyArray<string>) => {
        const run = spawnSync("bash", [
          "-c",
          `source "$1" || exit 9; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); ` +
          `COMP_CWORD=${words.length - 1}; _${id}_complete; printf '%s\\n' "\${COMPREPLY[@]}"; ` +
          `complete -p ${name}`,
          "bash",
          file
        ], { encoding: "utf8" })
        assert.strictEqual(run.status, 0, run.stderr)
        assert.strictEqual(run.stderr, "")
        return run.stdout.trim().split("\n")
      }
      const top = complete([name, ""])
      for (const command of topNames) assert.include(top, command)
      assert.include(top.at(-1)!, `_${id}_complete ${name}`)
      assert.deepStrictEqual(complete([...[name, ...withChoice.path], choice.name, ""]).slice(0, -1), [...choices])
      const options = complete([name, ...withChoice.path, "--"])
      assert.include(options, choice.name)
      assert.include(options, "--help")
    })

    it("zsh: the script loads under compinit and completes", (context) => {
      if (!has("zsh")) return context.skip("zsh is not installed (apt-get install -y zsh)")
      const file = script("zsh")
      const complete = (words: ReadonlyArray<string>) => {
        const run = spawnSync("zsh", [
          "-fc",
          `autoload -U compinit && compinit -u -D && source "$1" || exit 9; ` +
          // compadd and _files only work inside a completion widget: stand-ins print what is offered.
          `compadd() { [[ "$1" == -- ]] && shift; print -l -- "$@"; }; _files() { print FILES; }; ` +
          `words=(${words.map((w) => `'${w}'`).join(" ")}); CURRENT=${words.length}; _${id}`,
          "zsh",
          file
        ], { encoding: "utf8" })
        assert.strictEqual(run.status, 0, run.stderr)
        assert.strictEqual(run.stderr, "")
        return run.stdout.trim().split("\n")
      }
      const top = complete([name, ""])
      for (const command of topNames) assert.include(top, command)
      assert.deepStrictEqual(complete([name, ...withChoice.path, choice.name, ""]), [...choices])
      assert.include(complete([name, ...withChoice.path, "--"]), choice.name)
    })

    it("fish: the script loads and `complete -C` answers from it", (context) => {
      if (!has("fish")) return context.skip("fish is not installed (apt-get install -y fish)")
      const file = script("fish")
      const complete = (line: string) => {
        const run = spawnSync(
          "fish",
          ["--no-config", "-c", `source $argv[1]; or exit 9; complete -C '${line}'`, file],
          {
            encoding: "utf8"
          }
        )
        assert.strictEqual(run.status, 0, run.stderr)
        assert.strictEqual(run.stderr, "")
        return run.stdout.trim().split("\n").map((entry) => entry.split("\t")[0]!)
      }
      const top = complete(`${name} `)
      for (const command of topNames) assert.include(top, command)
      assert.deepStrictEqual(
        complete(`${[name, ...withChoice.path, choice.name].join(" ")} `).sort(),
        [...choices].sort()
      )
      assert.include(complete(`${[name, ...withChoice.path].join(" ")} --`), choice.name)
    })
  })
}
