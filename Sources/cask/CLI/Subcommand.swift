import CaskCLIKit

/// A `cask` subcommand: its description, from which parsing and help come, and what it does.
///
/// Each subcommand lives in its own file under `Commands/`.
protocol Subcommand {
  /// What the command accepts and how its help reads.
  static var spec: CommandSpec { get }

  /// Does the work. Data goes to standard output, everything else to standard error.
  ///
  /// - Throws: `CLIError`, or an error of the libraries, which `main` turns into a message.
  static func run(_ arguments: ParsedArguments) throws
}
