/// The declarative description of a command: its name, help text, positional arguments and
/// options. The parser (`ArgumentParser`) and the help text (`HelpText`) are both derived
/// from it, so what `--help` shows is exactly what the parser accepts. Every subcommand's spec
/// is in `CommandSpec+Subcommands.swift`.
package struct CommandSpec: Sendable {
  /// The subcommand's name, as typed after `cask`.
  package var name: String
  /// One line: what the command does (the OVERVIEW).
  package var abstract: String
  /// Paragraphs shown after the abstract.
  package var discussion: String?
  /// Positional arguments, in order.
  package var arguments: [ArgumentSpec] = []
  /// Options and flags; `-h, --help` is added by the parser to every command.
  package var options: [OptionSpec] = []

  /// The option whose long name is `name` (without the dashes).
  package func option(named name: String) -> OptionSpec? {
    options.first { $0.name == name }
  }

  /// The option whose short name is `short`.
  package func option(short: Character) -> OptionSpec? {
    options.first { $0.short == short }
  }
}

/// A positional argument, shown as `<name>`.
package struct ArgumentSpec: Sendable {
  package var name: String
  package var help: String
  package var isOptional = false

  /// `<name>` or `[<name>]`.
  package var usage: String { isOptional ? "[<\(name)>]" : "<\(name)>" }
}

/// An option that takes a value (`--file <file>`), or a flag (`--json`) when `valueName` is nil.
package struct OptionSpec: Sendable {
  /// A rule the parser applies to an option's value once the whole command line is read.
  package enum ValueCheck: Sendable {
    /// A decimal integer above zero (`--batch-size`).
    case positiveInteger
    /// A collection name: not empty, no U+0000 (the separator of a collection's keys).
    case collectionName
    /// An HTTP header, `Name: value` (`HeaderText.split(_:)`).
    case header
  }

  /// The long name, without the leading `--`.
  package var name: String
  /// An optional one-letter name, used as `-x`.
  package var short: Character?
  /// The placeholder of the value; `nil` makes the option a flag.
  package var valueName: String?
  package var help: String
  /// When set, the only values accepted.
  package var allowedValues: [String]?
  /// Whether the command fails without it (shown without brackets in USAGE).
  package var isRequired = false
  /// A rule the value must follow, checked after the command line is read.
  package var check: ValueCheck?
  /// Whether every occurrence counts (`--header`), rather than only the last.
  package var isRepeatable = false

  init(
    _ name: String, short: Character? = nil, value valueName: String? = nil, help: String,
    allowedValues: [String]? = nil, isRequired: Bool = false, check: ValueCheck? = nil, isRepeatable: Bool = false
  ) {
    self.name = name
    self.short = short
    self.valueName = valueName
    self.help = help
    self.allowedValues = allowedValues
    self.isRequired = isRequired
    self.check = check
    self.isRepeatable = isRepeatable
  }

  package var isFlag: Bool { valueName == nil }

  /// `--file <file>` or `--json`.
  package var label: String {
    valueName.map { "--\(name) <\($0)>" } ?? "--\(name)"
  }

  /// `-h, --help` style when there is a short name.
  package var helpLabel: String {
    short.map { "-\($0), \(label)" } ?? label
  }
}
