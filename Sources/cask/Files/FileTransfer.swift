import CaskCLIKit
import CaskPlatform
import CipherCask
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What `encrypt` and `decrypt` share.
enum FileTransfer {
  /// IN and OUT, checked: IN is a readable file or `-` (standard input); OUT is free, or a
  /// file (or a link to one) that `--force` lets replace, or a stream (`OutputTarget`).
  static func paths(_ arguments: ParsedArguments, _ spec: CommandSpec) throws -> (String, OutputTarget) {
    let input = arguments.argument("in")
    let output = arguments.argument("out")
    if input == "-" {
      if arguments.flag("password-stdin") {
        throw CLIError.usage("--password-stdin cannot be used with '-' as <in>: standard input carries the file", spec)
      }
      if StandardStream.closedAtStart.contains(STDIN_FILENO) { throw CLIError.failure("standard input is closed") }
    } else {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else {
        throw CLIError.failure("'\(input)' does not exist")
      }
      guard !isDirectory.boolValue else { throw CLIError.failure("'\(input)' is a directory") }
    }
    let target = try OutputTarget.resolve(output)
    if case .file(_, true) = target, !arguments.flag("force") { throw exists(output) }
    return (input, target)
  }

  /// Runs the transfer into `target`: the library's file helper for a file (told whether it
  /// may replace it), `stream` for a stream.
  static func run(
    _ arguments: ParsedArguments, input: String, target: OutputTarget, output: String,
    file transfer: (_ source: String, _ destination: String, _ replacing: Bool) throws -> Void,
    stream: (_ destination: String?) throws -> Void
  ) throws {
    switch target {
    case .file(let path, _):
      try run(arguments, input: input, output: path) { replacing in
        try transfer(input == "-" ? "/dev/stdin" : input, path, replacing)
      }
    case .stream(let path):
      do {
        try stream(path)
      } catch let error as CLIError {
        throw error
      } catch {
        throw CLIError.failure(ErrorMessage.describe(error, file: input == "-" ? "standard input" : input))
      }
    }
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
    } catch RNCryptor.Error.file(let operation, let path, let code)
      where ["open", "fsync"].contains(operation) && path == directoryToSync(of: output)
    {
      // Prevents: a file reported as not written that is in place. The directory is synced
      // after the rename: OUT is whole; only its name may not survive a power cut.
      StandardStream.error.write(
        "warning: \(MessageText.quoted(output)) was written, but syncing its directory failed "
          + "(\(String(cString: strerror(code)))): its name may not survive a power cut\n")
    } catch {
      throw CLIError.failure(ErrorMessage.describe(error, file: input))
    }
  }

  /// The directory the library syncs after putting `output` in place.
  private static func directoryToSync(of output: String) -> String {
    let directory = FilePath.directory(of: output)
    return directory.isEmpty ? "." : directory
  }

  static func size(of path: String) -> UInt64 {
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
  }
}
