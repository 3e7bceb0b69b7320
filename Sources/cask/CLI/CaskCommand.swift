import CaskCLIKit

/// The root command: asks `CaskCommandLine` what the command line means, then prints the help
/// or version text, or runs the subcommand, and turns errors into messages and exit statuses.
enum CaskCommand {
  /// Every subcommand's implementation; `CommandSpec.subcommands` (CaskCLIKit) lists their
  /// specs in the order the help shows them.
  static var commands: [any Subcommand.Type] {
    [
      DemoCommand.self,
      CreateCommand.self,
      PutCommand.self,
      GetCommand.self,
      DeleteCommand.self,
      KeysCommand.self,
      ImportCommand.self,
      PullCommand.self,
      SyncCommand.self,
      ExportCommand.self,
      EncryptCommand.self,
      DecryptCommand.self,
      CompactCommand.self,
      BackupCommand.self,
      VerifyCommand.self,
      TokenCommand.self,
      StatsCommand.self,
      PasswdCommand.self,
      RekeyCommand.self,
      UpgradeCommand.self,
      SalvageCommand.self,
      CompletionCommand.self,
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
      // Escaped as a whole: a path the message names (a store, a file) may hold a line break
      // or a terminal escape, and a failure is one line.
      StandardStream.error.write("Error: \(MessageText.escaped(message))\n")
      return CLIError.failureStatus
    } catch {
      StandardStream.error.write("Error: \(MessageText.escaped(ErrorMessage.describe(error)))\n")
      return CLIError.failureStatus
    }
  }

  private static func dispatch(_ words: [String]) throws {
    switch try CaskCommandLine.interpret(words) {
    case .print(let text):
      StandardStream.output.write(text)
    case .run(let arguments):
      guard let command = commands.first(where: { $0.spec.name == arguments.spec.name }) else {
        preconditionFailure("cask: no implementation of the subcommand '\(arguments.spec.name)'")
      }
      try command.run(arguments)
    }
  }
}
