/// The root command's parsing: which subcommand runs with which arguments, or which help or
/// version text is printed instead. `cask`'s `main` does what the request says; nothing here
/// touches a file, a stream or the environment, so the whole command line can be fuzzed
/// (`Fuzz/CLIArgs`).
package enum CaskCommandLine {
  /// The newest released version, the one CHANGELOG.md lists first and README.md names: the
  /// one place the tool's version is written (`CommandLineTests` checks the other two).
  package static let version = "0.9.0"
  package static let abstract = "Encrypted key-value stores and RNCryptor v3 files from the command line."
  package static let discussion = """
    Stores are directories written by CipherCask: every key and value is encrypted. Passwords \
    are never command-line arguments: they come from --password-file, --password-stdin, the \
    CASK_PASSWORD environment variable, or a prompt on the terminal, in that order.
    """

  /// What the command line asks for.
  package enum Request: Sendable {
    /// Print this text on standard output and exit 0 (help, or the version).
    case print(String)
    /// Run the subcommand `arguments.spec` with these arguments.
    case run(ParsedArguments)
  }

  /// Interprets the command line `words` (without the program name).
  ///
  /// - Parameter subcommands: the subcommands to know (`CommandSpec.subcommands`).
  /// - Throws: `CLIError.usage` for a command line that is wrong; never anything else.
  /// - Complexity: O(*n* × *m*) for *n* words and *m* options of the subcommand.
  package static func interpret(_ words: [String], subcommands: [CommandSpec] = CommandSpec.subcommands) throws
    -> Request
  {
    guard let first = words.first else {
      return .print(HelpText.rootHelp(subcommands: subcommands))
    }
    let rest = Array(words.dropFirst())
    switch first {
    case "--version":
      guard rest.isEmpty else { throw CLIError.usage("'--version' takes no arguments", nil) }
      return .print(version + "\n")
    case "-h", "--help":
      return .print(HelpText.rootHelp(subcommands: subcommands))
    case "help":
      return .print(try help(rest, subcommands: subcommands))
    default:
      guard let spec = subcommands.first(where: { $0.name == first }) else {
        throw unknown(first)
      }
      if ArgumentParser.asksForHelp(rest) {
        return .print(HelpText.help(for: spec))
      }
      return .run(try ArgumentParser(spec: spec).parse(rest))
    }
  }

  /// `cask help [<subcommand>]`.
  private static func help(_ words: [String], subcommands: [CommandSpec]) throws -> String {
    guard let name = words.first, name != "-h", name != "--help" else {
      return HelpText.rootHelp(subcommands: subcommands)
    }
    guard words.count == 1 else { throw CLIError.usage("'help' takes at most one subcommand name", nil) }
    if name == "help" { return helpOfHelp }
    guard let spec = subcommands.first(where: { $0.name == name }) else {
      throw unknown(name)
    }
    return HelpText.help(for: spec)
  }

  /// `cask help help`.
  static let helpOfHelp = """
    OVERVIEW: Show the help of cask, or of one subcommand.

    USAGE: cask help [<subcommand>]

    ARGUMENTS:
      <subcommand>            The subcommand whose help to show.

    OPTIONS:
      -h, --help              Show help information.

    """

  /// The error for a first word (or a word after `help`) that names no subcommand. An option
  /// is quoted without its value: `--password=SECRET` must not show SECRET.
  private static func unknown(_ word: String) -> CLIError {
    if OptionSyntax.isOption(word) {
      let name = OptionSyntax.withoutValue(word)
      let hint = Suggestion.hint(String(name.drop { $0 == "-" }), in: ["help", "version"], prefix: "--")
      return CLIError.usage("Unknown option \(MessageText.quoted(name))\(hint)", nil)
    }
    let hint = Suggestion.hint(word, in: CommandSpec.subcommands.map(\.name) + ["help"])
    return CLIError.usage("Unknown subcommand \(MessageText.quoted(word))\(hint)", nil)
  }
}
