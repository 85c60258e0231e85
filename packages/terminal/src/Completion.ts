/**
 * Shell completion scripts for bash, zsh and fish, written from the command tree (what
 * `--completions SHELL` prints). Each script carries the tree as data (the subcommands, the
 * options, which options take a value, their choices, which commands take a file) and walks
 * the words typed so far the same way: subcommand names are followed, an option's value is
 * skipped; then it offers the choices of the option being given a value, files where a file
 * is expected, options after a `-`, else the subcommands. No program runs at each Tab.
 */
import type { CommandSpec } from "./CommandTree.js"
import * as CommandTree from "./CommandTree.js"

/** The shells a script can be written for. */
export const SHELLS = ["bash", "zsh", "fish"] as const

/** One of `SHELLS`. */
export type Shell = typeof SHELLS[number]

interface Table {
  /** A shell-safe identifier made from the program's name. */
  readonly id: string
  readonly entries: ReadonlyArray<{
    readonly path: string
    readonly children: ReadonlyArray<string>
    readonly options: ReadonlyArray<string>
    /** Options taking a value, with the words offered for it (`@file` for a file, nothing for free text). */
    readonly values: ReadonlyArray<readonly [option: string, words: ReadonlyArray<string>]>
    readonly files: boolean
  }>
}

const SAFE = /^[A-Za-z0-9_.:=+@-]+$/

/** Every word put in a script is checked: a name that needs quoting would be a bug in the tree. */
const safe = (word: string): string => {
  if (!SAFE.test(word)) throw new Error(`completion word needs quoting: ${JSON.stringify(word)}`)
  return word
}

const BUILT_INS = ["--help", "-h", "--version"]

const table = (name: string, root: CommandSpec): Table => ({
  id: safe(name).replace(/[^A-Za-z0-9_]/g, "_"),
  entries: CommandTree.walk(root).map(({ path, spec }) => ({
    path: path.map(safe).join(" "),
    children: spec.children.map((child) => safe(child.name)),
    options: [
      ...spec.options.flatMap((o) => [o.name, ...o.aliases]),
      ...BUILT_INS,
      ...(path.length === 0
        ? ["--completions"]
        : [])
    ].map(safe),
    values: [
      ...spec.options.flatMap((o) =>
        o.value === undefined ? [] : [o.name, ...o.aliases].map((n) =>
          [
            safe(n),
            o.value!._tag === "Choice" ? o.value!.choices.map(safe) : o.value!._tag === "File" ? ["@file"] : []
          ] as const
        )
      ),
      ...(path.length === 0 ? [["--completions", ["bash", "zsh", "fish"]] as const] : [])
    ],
    files: spec.args.some((arg) => arg.value._tag === "File")
  }))
})

const bash = ({ entries, id }: Table, name: string): string =>
  [
    `# bash completion for ${name}: source <(${name} --completions bash)`,
    `_${id}_children() {`,
    `  case "$1" in`,
    ...entries.filter((e) => e.children.length > 0).map((e) => `    "${e.path}") echo "${e.children.join(" ")}" ;;`),
    `  esac`,
    `}`,
    `_${id}_options() {`,
    `  case "$1" in`,
    ...entries.map((e) => `    "${e.path}") echo "${e.options.join(" ")}" ;;`),
    `  esac`,
    `}`,
    `# Prints the words offered for an option's value; fails when the option takes no value.`,
    `_${id}_values() {`,
    `  case "$1|$2" in`,
    ...entries.flatMap((e) =>
      e.values.map(([option, words]) => `    "${e.path}|${option}") echo "${words.join(" ")}" ;;`)
    ),
    `    *) return 1 ;;`,
    `  esac`,
    `}`,
    `_${id}_files() {`,
    `  case "$1" in`,
    ...entries.filter((e) => e.files).map((e) => `    "${e.path}") return 0 ;;`),
    `  esac`,
    `  return 1`,
    `}`,
    `_${id}_complete() {`,
    `  local cur="\${COMP_WORDS[COMP_CWORD]}" at="" word i value="" pending=""`,
    `  for (( i = 1; i < COMP_CWORD; i++ )); do`,
    `    word="\${COMP_WORDS[i]}"`,
    `    if [[ -n "$pending" ]]; then pending=""; continue; fi`,
    `    if [[ "$word" == -* ]]; then`,
    `      if value="$(_${id}_values "$at" "$word")"; then pending="$word"; fi`,
    `      continue`,
    `    fi`,
    `    if [[ " $(_${id}_children "$at") " == *" $word "* ]]; then at="\${at:+$at }$word"; fi`,
    `  done`,
    `  COMPREPLY=()`,
    `  if [[ -n "$pending" ]]; then`,
    `    value="$(_${id}_values "$at" "$pending")"`,
    `    if [[ "$value" == "@file" ]]; then COMPREPLY=( $(compgen -f -- "$cur") )`,
    `    else COMPREPLY=( $(compgen -W "$value" -- "$cur") ); fi`,
    `  elif [[ "$cur" == -* ]]; then`,
    `    COMPREPLY=( $(compgen -W "$(_${id}_options "$at")" -- "$cur") )`,
    `  else`,
    `    COMPREPLY=( $(compgen -W "$(_${id}_children "$at")" -- "$cur") )`,
    `    if _${id}_files "$at"; then COMPREPLY+=( $(compgen -f -- "$cur") ); fi`,
    `  fi`,
    `}`,
    `complete -o default -F _${id}_complete ${name}`,
    ``
  ].join("\n")

const zsh = ({ entries, id }: Table, name: string): string =>
  [
    `#compdef ${name}`,
    `# zsh completion for ${name}: ${name} --completions zsh > "\${fpath[1]}/_${name}"`,
    `# (or, with compinit loaded: source <(${name} --completions zsh))`,
    `_${id}() {`,
    `  local cur="\${words[CURRENT]}" at="" word i pending="" value`,
    `  local -a kids opts vals`,
    `  for (( i = 2; i < CURRENT; i++ )); do`,
    `    word="\${words[i]}"`,
    `    if [[ -n "$pending" ]]; then pending=""; continue; fi`,
    `    if [[ "$word" == -* ]]; then`,
    `      __${id}_values "$at" "$word" && pending="$word"`,
    `      continue`,
    `    fi`,
    `    __${id}_children "$at"`,
    `    if (( \${kids[(Ie)$word]} )); then at="\${at:+$at }$word"; fi`,
    `  done`,
    `  if [[ -n "$pending" ]]; then`,
    `    __${id}_values "$at" "$pending"`,
    `    if [[ "\${vals[1]}" == "@file" ]]; then _files; else compadd -- "\${vals[@]}"; fi`,
    `  elif [[ "$cur" == -* ]]; then`,
    `    __${id}_options "$at"`,
    `    compadd -- "\${opts[@]}"`,
    `  else`,
    `    __${id}_children "$at"`,
    `    (( \${#kids} )) && compadd -- "\${kids[@]}"`,
    `    __${id}_files "$at" && _files`,
    `  fi`,
    `  return 0`,
    `}`,
    `__${id}_children() {`,
    `  kids=()`,
    `  case "$1" in`,
    ...entries.filter((e) => e.children.length > 0).map((e) => `    "${e.path}") kids=(${e.children.join(" ")}) ;;`),
    `  esac`,
    `}`,
    `__${id}_options() {`,
    `  opts=()`,
    `  case "$1" in`,
    ...entries.map((e) => `    "${e.path}") opts=(${e.options.join(" ")}) ;;`),
    `  esac`,
    `}`,
    `__${id}_values() {`,
    `  vals=()`,
    `  case "$1|$2" in`,
    ...entries.flatMap((e) =>
      e.values.map(([option, words]) => `    "${e.path}|${option}") vals=(${words.join(" ")}) ;;`)
    ),
    `    *) return 1 ;;`,
    `  esac`,
    `  return 0`,
    `}`,
    `__${id}_files() {`,
    `  case "$1" in`,
    ...entries.filter((e) => e.files).map((e) => `    "${e.path}") return 0 ;;`),
    `  esac`,
    `  return 1`,
    `}`,
    `if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then _${id} "$@"; else compdef _${id} ${name}; fi`,
    ``
  ].join("\n")

const fish = ({ entries, id }: Table, name: string): string =>
  [
    `# fish completion for ${name}: ${name} --completions fish > ~/.config/fish/completions/${name}.fish`,
    `function __${id}_children`,
    `  switch "$argv[1]"`,
    ...entries.filter((e) => e.children.length > 0).flatMap((
      e
    ) => [`    case "${e.path}"`, `      printf '%s\\n' ${e.children.join(" ")}`]),
    `  end`,
    `end`,
    `function __${id}_options`,
    `  switch "$argv[1]"`,
    ...entries.flatMap((e) => [`    case "${e.path}"`, `      printf '%s\\n' ${e.options.join(" ")}`]),
    `  end`,
    `end`,
    `function __${id}_values`,
    `  switch "$argv[1]|$argv[2]"`,
    ...entries.flatMap((e) =>
      e.values.map(([option, words]) =>
        `    case "${e.path}|${option}"\n      printf '%s\\n' ${words.join(" ")}\n      return 0`
      )
    ),
    `  end`,
    `  return 1`,
    `end`,
    `function __${id}_files`,
    `  switch "$argv[1]"`,
    ...entries.filter((e) => e.files).flatMap((e) => [`    case "${e.path}"`, `      return 0`]),
    `  end`,
    `  return 1`,
    `end`,
    `function __${id}_complete`,
    `  set -l tokens (commandline -opc)`,
    `  set -l cur (commandline -ct)`,
    `  set -l at ""`,
    `  set -l pending ""`,
    `  for word in $tokens[2..-1]`,
    `    if test -n "$pending"`,
    `      set pending ""`,
    `      continue`,
    `    end`,
    `    if string match -q -- '-*' $word`,
    `      if __${id}_values "$at" $word >/dev/null`,
    `        set pending $word`,
    `      end`,
    `      continue`,
    `    end`,
    `    if contains -- $word (__${id}_children "$at")`,
    `      set at (string trim -- "$at $word")`,
    `    end`,
    `  end`,
    `  if test -n "$pending"`,
    `    set -l values (__${id}_values "$at" $pending)`,
    `    if test "$values[1]" = "@file"`,
    `      __fish_complete_path $cur`,
    `    else`,
    `      printf '%s\\n' $values`,
    `    end`,
    `  else if string match -q -- '-*' $cur`,
    `    __${id}_options "$at"`,
    `  else`,
    `    __${id}_children "$at"`,
    `    if __${id}_files "$at"`,
    `      __fish_complete_path $cur`,
    `    end`,
    `  end`,
    `end`,
    `complete -c ${name} -f -a '(__${id}_complete)'`,
    ``
  ].join("\n")

/** The completion script of a command line named `name` for `shell`. */
export const script = (shell: Shell, name: string, root: CommandSpec): string => {
  const data = table(name, root)
  switch (shell) {
    case "bash":
      return bash(data, name)
    case "zsh":
      return zsh(data, name)
    case "fish":
      return fish(data, name)
  }
}
