import CaskCLIKit
import CipherCask
import Foundation

/// `cask backup STORE DIR`.
enum BackupCommand: Subcommand {
  static var spec: CommandSpec { .backup }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let destination = arguments.argument("dir")
    // Checked before the password is asked for; the store checks again.
    try DestinationCheck.refuse(destination, insideStore: path)
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory) {
      let empty =
        isDirectory.boolValue && (try? FileManager.default.contentsOfDirectory(atPath: destination))?.isEmpty == true
      guard empty else { throw CLIError.failure("'\(destination)' already exists and is not an empty directory") }
    }
    let report = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      // Ctrl-C or `kill` stops the copy, which removes what it wrote, before the process ends.
      try Interruption.stoppingOnSignal { shouldContinue in
        try store.backup(to: destination, shouldContinue: shouldContinue)
      }
    }
    if arguments.flag("json") {
      return try JSONOutput.write(
        Reports.Backup(
          store: path, destination: destination, segments: report.segments, hints: report.hints, bytes: report.bytes))
    }
    StandardStream.output.write(
      "Backed up store '\(path)' into '\(destination)': \(counted(report.segments, "segment file")), "
        + "\(counted(report.hints, "hint file")), \(ByteCount.format(report.bytes)).\n")
  }
}

/// The checks of a copy's destination (`backup`, `rekey`) that need no password.
enum DestinationCheck {
  /// Refuses an empty destination and one inside the store's directory, whose open would
  /// then trip over it.
  static func refuse(_ destination: String, insideStore store: String) throws {
    guard !destination.isEmpty else { throw CLIError.failure("the destination is an empty path") }
    let storeDirectory = URL(fileURLWithPath: store).standardizedFileURL.path
    guard !URL(fileURLWithPath: destination).standardizedFileURL.path.hasPrefix(storeDirectory + "/") else {
      throw CLIError.failure("'\(destination)' is inside store '\(store)'; put the copy elsewhere")
    }
  }
}
