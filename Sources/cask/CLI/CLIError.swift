/// How a command fails. `main` prints the message as `Error: ...` on standard error and
/// exits with the status the case calls for.
enum CLIError: Error {
  /// The command line is wrong: exit 64 (EX_USAGE), with a usage hint for `command`
  /// (`nil` for the root command).
  case usage(String, CommandSpec?)
  /// The command ran and failed: exit 1.
  case failure(String)

  static let successStatus: Int32 = 0
  static let failureStatus: Int32 = 1
  static let usageStatus: Int32 = 64
}
