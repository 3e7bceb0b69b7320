/// Shell completion scripts for `cask`, made from the subcommands' specs so that they name
/// every subcommand and option the parser knows.
package enum CompletionScript {
  package static let shells = ["bash", "zsh", "fish"]

  /// The script for `shell` (one of `shells`), or nil.
  package static func script(for shell: String, subcommands: [CommandSpec] = CommandSpec.subcommands) -> String? {
    switch shell {
    case "bash": return bash(subcommands)
    case "zsh": return zsh(subcommands)
    case "fish": return fish(subcommands)
    default: return nil
    }
  }

  private static func optionWords(_ spec: CommandSpec) -> String {
    (spec.options.map { "--\($0.name)" } + ["--help"]).joined(separator: " ")
  }

  private static func names(_ subcommands: [CommandSpec]) -> String {
    (subcommands.map(\.name) + ["help"]).joined(separator: " ")
  }

  private static func bash(_ subcommands: [CommandSpec]) -> String {
    var cases = ""
    for spec in subcommands { cases += "    \(spec.name)) options='\(optionWords(spec))' ;;\n" }
    return """
      # bash completion for cask: source <(cask completion bash)
      _cask() {
        local current="${COMP_WORDS[COMP_CWORD]}" options=''
        if [ "$COMP_CWORD" -eq 1 ]; then
          COMPREPLY=($(compgen -W '\(names(subcommands)) --help --version' -- "$current"))
          return
        fi
        case "${COMP_WORDS[1]}" in
      \(cases)    help) COMPREPLY=($(compgen -W '\(names(subcommands))' -- "$current")); return ;;
        esac
        if [[ "$current" == -* ]]; then
          COMPREPLY=($(compgen -W "$options" -- "$current"))
        else
          COMPREPLY=($(compgen -f -- "$current"))
        fi
      }
      complete -o filenames -F _cask cask

      """
  }

  private static func zsh(_ subcommands: [CommandSpec]) -> String {
    var cases = ""
    for spec in subcommands { cases += "    \(spec.name)) options=(\(optionWords(spec))) ;;\n" }
    return """
      #compdef cask
      # zsh completion for cask: source <(cask completion zsh)
      _cask() {
        local -a options
        if (( CURRENT == 2 )); then
          compadd -- \(names(subcommands)) --help --version
          return
        fi
        case $words[2] in
      \(cases)    help) compadd -- \(names(subcommands)); return ;;
        esac
        if [[ $PREFIX == -* ]]; then
          compadd -- $options
        else
          _files
        fi
      }
      compdef _cask cask

      """
  }

  private static func fish(_ subcommands: [CommandSpec]) -> String {
    var text = "# fish completion for cask: cask completion fish | source\n"
    text += "complete -c cask -f\n"
    for spec in subcommands {
      text += "complete -c cask -n __fish_use_subcommand -a \(spec.name) -d \(quoted(spec.abstract))\n"
    }
    text += "complete -c cask -n __fish_use_subcommand -a help -d 'Show the help of cask or of a subcommand.'\n"
    for spec in subcommands {
      for option in spec.options {
        text +=
          "complete -c cask -n '__fish_seen_subcommand_from \(spec.name)' -l \(option.name)"
          + (option.isFlag ? "" : " -r -F") + " -d \(quoted(option.help))\n"
      }
      if !spec.arguments.isEmpty { text += "complete -c cask -n '__fish_seen_subcommand_from \(spec.name)' -F\n" }
    }
    return text
  }

  /// A single-quoted fish word.
  private static func quoted(_ text: String) -> String {
    var word = "'"
    for character in text {
      if character == "\\" || character == "'" { word.append("\\") }
      word.append(character)
    }
    return word + "'"
  }
}
