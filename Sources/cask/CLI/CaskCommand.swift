/// The root command: dispatches to a subcommand, and answers `--version`, `--help` and
/// `help <subcommand>` itself.
enum CaskCommand {
  static let version = "0.1.0"
  static let abstract = "Encrypted key-value stores and RNCryptor v3 files from the command line."
  static let discussion = """
    Stores are directories written by CipherCask: every key and value is encrypted. Passwords \
    are never command-line arguments: they come from --password-file, the CASK_PASSWORD \
    environment variable, --password-stdin, or a prompt on the terminal, in that order.
    """

  /// Every subcommand, in the order the help lists them.
  static var subcommands: [any Subcommand.Type] {
    [
      DemoCommand.self,
      CreateCommand.self,
      PutCommand.self,
      GetCommand.self,
      DeleteCommand.self,
      KeysCommand.self,
      ImportCommand.self,
      ExportCommand.self,
      EncryptCommand.self,
      DecryptCommand.self,
      CompactCommand.self,
      VerifyCommand.self,
      StatsCommand.self,
      PasswdCommand.self,
    ]
  }

  /// Runs the command line `words` (without the program name) and returns the exit status.
  static func main(_ words: [String]) -> Int32 {
    do {
      try dispatch(words)
      return CLIError.successStatus
    } catch CLIError.usage(let message, let spec) {
      StandardStream.error.write("Error: \(message)\n" + HelpText.usageHint(spec))
      return CLIError.usageStatus
    } catch CLIError.failure(let message) {
      StandardStream.error.write("Error: \(message)\n")
      return CLIError.failureStatus
    } catch {
      StandardStream.error.write("Error: \(ErrorMessage.describe(error))\n")
      return CLIError.failureStatus
    }
  }

  private static func dispatch(_ words: [String]) throws {
    guard let first = words.first else {
      StandardStream.output.write(HelpText.rootHelp(subcommands: subcommands.map { $0.spec }))
      return
    }
    let rest = Array(words.dropFirst())
    switch first {
    case "--version":
      guard rest.isEmpty else { throw CLIError.usage("'--version' takes no arguments", nil) }
      StandardStream.output.write(version + "\n")
    case "-h", "--help":
      StandardStream.output.write(HelpText.rootHelp(subcommands: subcommands.map { $0.spec }))
    case "help":
      try help(rest)
    default:
      guard let command = subcommand(named: first) else {
        if first.hasPrefix("-") { throw CLIError.usage("Unknown option '\(first)'", nil) }
        throw CLIError.usage("Unknown subcommand '\(first)'", nil)
      }
      if ArgumentParser.asksForHelp(rest) {
        StandardStream.output.write(HelpText.help(for: command.spec))
        return
      }
      try command.run(ArgumentParser(spec: command.spec).parse(rest))
    }
  }

  /// `cask help [<subcommand>]`.
  private static func help(_ words: [String]) throws {
    guard let name = words.first, name != "-h", name != "--help" else {
      StandardStream.output.write(HelpText.rootHelp(subcommands: subcommands.map { $0.spec }))
      return
    }
    guard words.count == 1 else { throw CLIError.usage("'help' takes at most one subcommand name", nil) }
    guard let command = subcommand(named: name) else {
      throw CLIError.usage("Unknown subcommand '\(name)'", nil)
    }
    StandardStream.output.write(HelpText.help(for: command.spec))
  }

  private static func subcommand(named name: String) -> (any Subcommand.Type)? {
    subcommands.first { $0.spec.name == name }
  }
}
