/// How a command fails. `cask`'s `main` prints the message as `Error: ...` on standard error
/// and exits with the status the case calls for.
///
/// Messages are one line and never contain a password, a key or a value. The words of the
/// command line they quote (an unknown option without its `=value`, a rejected choice, an
/// unknown subcommand) go through `MessageText.quoted(_:)`, so that no control character can
/// break the line.
package enum CLIError: Error, Sendable {
  /// Thrown when the command line is wrong: exit 64 (EX_USAGE), with a usage hint for the
  /// command (`nil` for the root command).
  case usage(String, CommandSpec?)
  /// Thrown when the command ran and could not do its work: exit 1.
  case failure(String)

  package static let successStatus: Int32 = 0
  package static let failureStatus: Int32 = 1
  package static let usageStatus: Int32 = 64
}
