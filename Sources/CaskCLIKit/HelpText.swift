/// The help text of a command, in swift-argument-parser's layout: OVERVIEW, USAGE,
/// ARGUMENTS, OPTIONS (and SUBCOMMANDS for the root), each entry's help wrapped at 80 columns.
package enum HelpText {
  static let width = 80
  static let labelColumn = 26

  /// `cask put <store> <key> [--file <file>] ...`
  package static func usage(_ spec: CommandSpec) -> String {
    var parts = ["cask", spec.name]
    parts += spec.arguments.map(\.usage)
    for option in spec.options where option.name != OptionSpec.help.name {
      let label = option.isRepeatable ? option.label + " ..." : option.label
      parts.append(option.isRequired ? label : "[\(label)]")
    }
    return parts.joined(separator: " ")
  }

  package static func help(for spec: CommandSpec) -> String {
    var text = "OVERVIEW: \(spec.abstract)\n"
    if let discussion = spec.discussion {
      text += "\n" + wrap(discussion, indent: 0) + "\n"
    }
    text += "\nUSAGE: \(usage(spec))\n"
    if !spec.arguments.isEmpty {
      text += "\nARGUMENTS:\n"
      for argument in spec.arguments {
        text += entry("<\(argument.name)>", argument.help)
      }
    }
    text += "\nOPTIONS:\n"
    for option in spec.options + [OptionSpec.help] {
      var help = option.help
      if let allowed = option.allowedValues {
        help += " (values: \(allowed.joined(separator: ", ")))"
      }
      text += entry(option.helpLabel, help)
    }
    return text
  }

  /// The root command's help: the subcommands with their abstracts.
  package static func rootHelp(subcommands: [CommandSpec]) -> String {
    var text = "OVERVIEW: \(CaskCommandLine.abstract)\n"
    text += "\n" + wrap(CaskCommandLine.discussion, indent: 0) + "\n"
    text += "\nUSAGE: cask <subcommand>\n"
    text += "\nOPTIONS:\n"
    text += entry("--version", "Show the version.")
    text += entry(OptionSpec.help.helpLabel, OptionSpec.help.help)
    text += "\nSUBCOMMANDS:\n"
    for spec in subcommands {
      text += entry(spec.name, spec.abstract)
    }
    text += "\n  See 'cask help <subcommand>' for detailed help.\n"
    return text
  }

  /// The lines after an `Error:` line of a usage error.
  package static func usageHint(_ spec: CommandSpec?) -> String {
    guard let spec else {
      return "Usage: cask <subcommand>\n  See 'cask --help' for more information.\n"
    }
    return "Usage: \(usage(spec))\n  See 'cask help \(spec.name)' for more information.\n"
  }

  /// One `  label   help` entry; a long label puts the help on the next line.
  private static func entry(_ label: String, _ help: String) -> String {
    let indent = String(repeating: " ", count: labelColumn)
    let wrapped = wrap(help, indent: labelColumn)
    let first = "  " + label
    if first.count + 1 < labelColumn {
      let padding = String(repeating: " ", count: labelColumn - first.count)
      return first + padding + wrapped.dropFirst(labelColumn) + "\n"
    }
    return first + "\n" + (wrapped.hasPrefix(indent) ? wrapped : indent + wrapped) + "\n"
  }

  /// Wraps `text` at `width` columns, every line indented by `indent` spaces; blank lines in
  /// `text` separate paragraphs.
  package static func wrap(_ text: String, indent: Int) -> String {
    let margin = String(repeating: " ", count: indent)
    var lines: [String] = []
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
      var line = ""
      for word in paragraph.split(separator: " ") {
        if !line.isEmpty && indent + line.count + 1 + word.count > width {
          lines.append(margin + line)
          line = ""
        }
        line += line.isEmpty ? String(word) : " " + word
      }
      lines.append(line.isEmpty ? "" : margin + line)
    }
    return lines.joined(separator: "\n")
  }
}
