import CaskCLIKit
import Foundation

/// What `encrypt` and `decrypt` share.
enum FileTransfer {
  /// IN and OUT, checked: IN is a readable file, OUT is free (or `--force`).
  static func paths(_ arguments: ParsedArguments) throws -> (String, String) {
    let input = arguments.argument("in")
    let output = arguments.argument("out")
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
      throw CLIError.failure("'\(input)' does not exist")
    }
    guard !isDirectory.boolValue else { throw CLIError.failure("'\(input)' is a directory") }
    if FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory) {
      guard !isDirectory.boolValue else { throw CLIError.failure("'\(output)' is a directory") }
      guard arguments.flag("force") else {
        throw CLIError.failure("'\(output)' already exists (pass --force to replace it)")
      }
    }
    return (input, output)
  }

  static func size(of path: String) -> UInt64 {
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
  }
}
