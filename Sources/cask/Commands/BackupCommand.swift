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
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory) {
      let empty =
        isDirectory.boolValue && (try? FileManager.default.contentsOfDirectory(atPath: destination))?.isEmpty == true
      guard empty else { throw CLIError.failure("'\(destination)' already exists and is not an empty directory") }
    }
    let report = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      try store.backup(to: destination)
    }
    StandardStream.output.write(
      "Backed up store '\(path)' into '\(destination)': \(counted(report.segments, "segment file")), "
        + "\(counted(report.hints, "hint file")), \(ByteCount.format(report.bytes)).\n")
  }
}
