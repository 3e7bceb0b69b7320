import CaskCLIKit
import CipherCask
import Foundation

/// `cask rekey STORE DIR`: a copy under a new data key and a new password.
enum RekeyCommand: Subcommand {
  static var spec: CommandSpec { .rekey }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let destination = arguments.argument("dir")
    // Checked before any password is asked for; the store checks again.
    try DestinationCheck.refuse(destination, insideStore: path)
    guard !FileManager.default.fileExists(atPath: destination) else {
      throw CLIError.failure("'\(destination)' already exists")
    }
    let report = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      let newPassword = try PasswordSource.newPassword(arguments, subject: "the new store '\(destination)'")
      // The bar starts inside, so that it is erased before the process ends by a signal.
      return try Interruption.stoppingOnSignal { shouldContinue in
        let progress = ProgressBar.start("Re-encrypting", total: nil, unit: .time) { 0 }
        defer { progress?.finish() }
        return try store.rekeyedCopy(to: destination, password: newPassword, shouldContinue: shouldContinue)
      }
    }
    StandardStream.output.write(
      "Copied store '\(path)' into '\(destination)' under a new data key: \(counted(report.keys, "key")), "
        + "\(ByteCount.format(report.valueBytes)) of values.\n")
  }
}
