/// The declarative description of a command: its name, help text, positional arguments and
/// options. The parser (`ArgumentParser`) and the help text (`HelpText`) are both derived
/// from it, so what `--help` shows is exactly what the parser accepts.
struct CommandSpec: Sendable {
  /// The subcommand's name, as typed after `cask`.
  var name: String
  /// One line: what the command does (the OVERVIEW).
  var abstract: String
  /// Paragraphs shown after the abstract.
  var discussion: String?
  /// Positional arguments, in order.
  var arguments: [ArgumentSpec] = []
  /// Options and flags; `-h, --help` is added by the parser to every command.
  var options: [OptionSpec] = []

  /// The option whose long name is `name` (without the dashes).
  func option(named name: String) -> OptionSpec? {
    options.first { $0.name == name }
  }

  /// The option whose short name is `short`.
  func option(short: Character) -> OptionSpec? {
    options.first { $0.short == short }
  }
}

/// A positional argument, shown as `<name>`.
struct ArgumentSpec: Sendable {
  var name: String
  var help: String
  var isOptional = false

  /// `<name>` or `[<name>]`.
  var usage: String { isOptional ? "[<\(name)>]" : "<\(name)>" }
}

/// An option that takes a value (`--file <file>`), or a flag (`--json`) when `valueName` is nil.
struct OptionSpec: Sendable {
  /// The long name, without the leading `--`.
  var name: String
  /// An optional one-letter name, used as `-x`.
  var short: Character?
  /// The placeholder of the value; `nil` makes the option a flag.
  var valueName: String?
  var help: String
  /// When set, the only values accepted.
  var allowedValues: [String]?
  /// Whether the command fails without it (shown without brackets in USAGE).
  var isRequired = false

  init(
    _ name: String, short: Character? = nil, value valueName: String? = nil, help: String,
    allowedValues: [String]? = nil, isRequired: Bool = false
  ) {
    self.name = name
    self.short = short
    self.valueName = valueName
    self.help = help
    self.allowedValues = allowedValues
    self.isRequired = isRequired
  }

  var isFlag: Bool { valueName == nil }

  /// `--file <file>` or `--json`.
  var label: String {
    valueName.map { "--\(name) <\($0)>" } ?? "--\(name)"
  }

  /// `-h, --help` style when there is a short name.
  var helpLabel: String {
    short.map { "-\($0), \(label)" } ?? label
  }
}

extension OptionSpec {
  /// `-h, --help`, which every command accepts.
  static let help = OptionSpec("help", short: "h", help: "Show help information.")

  /// `--json`, for commands with a machine-readable output.
  static let json = OptionSpec("json", help: "Print the result as JSON.")

  /// Where the password of an existing store or file comes from (see Docs/CLI.md, "Passwords").
  static let passwordOptions = [
    OptionSpec(
      "password-file", value: "file",
      help: "Read the password from the first line of this file. Otherwise CASK_PASSWORD, --password-stdin or a prompt."
    ),
    OptionSpec("password-stdin", help: "Read the password from the first line of standard input."),
  ]
}
