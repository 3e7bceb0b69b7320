import CaskCLIKit
import CipherCask
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
      guard arguments.flag("force") else { throw exists(output) }
    }
    return (input, output)
  }

  private static func exists(_ output: String) -> CLIError {
    CLIError.failure("'\(output)' already exists (pass --force to replace it)")
  }

  /// Runs `transfer` (the library's file helper, told whether it may replace OUT) and turns
  /// its errors into one-line failures. Without `--force`, an OUT that another process made
  /// while this one worked is not replaced: the helper refuses it when the output is ready.
  static func run(
    _ arguments: ParsedArguments, input: String, output: String, _ transfer: (_ replacing: Bool) throws -> Void
  ) throws {
    let force = arguments.flag("force")
    do {
      try transfer(force)
    } catch RNCryptor.Error.file(operation: "create", path: output, errno: EEXIST) where !force {
      throw exists(output)
    } catch {
      throw CLIError.failure(ErrorMessage.describe(error, file: input))
    }
  }

  static func size(of path: String) -> UInt64 {
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
  }
}
