import CaskCLIKit
import CipherCask

/// `cask passwd STORE`: replaces the password.
enum PasswdCommand: Subcommand {
  static var spec: CommandSpec { .passwd }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let status = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let newPassword = try PasswordSource.newPassword(arguments, subject: "store '\(path)'")
      PasswordStrength.warnIfWeak(newPassword, skip: arguments.flag("accept-weak-password"))
      let progress = ProgressBar.start("Changing the password", total: nil, unit: .time) { 0 }
      defer { progress?.finish() }
      try store.changePassword(to: newPassword, keyDerivation: CreateCommand.keyDerivation(arguments))
      return store.keyEpochs
    }
    if arguments.flag("json") {
      return try JSONOutput.write(
        Reports.Password(
          store: path, changed: true, keyEpoch: status.currentEpoch, olderRecords: status.olderRecords,
          olderBytes: status.olderBytes))
    }
    StandardStream.error.write("Changed the password of store '\(path)'.\n" + Self.olderKeyNote(status, path: path))
  }

  /// What is left under an older key, and how to finish: empty when nothing is.
  static func olderKeyNote(_ status: KeyEpochStatus, path: String) -> String {
    guard status.olderRecords > 0 else { return "" }
    let (verb, pronoun) = status.olderRecords == 1 ? ("is", "it") : ("are", "them")
    return "\(counted(status.olderRecords, "record")) (\(ByteCount.format(status.olderBytes))) \(verb) still under "
      + "an old key, which an old copy of the header opens with its password; "
      + "'cask compact \(path)' seals \(pronoun) again under the new one.\n"
  }
}
