import Foundation

/// Runs other programs (openssl, and later the peers' tools) and captures what they print.
enum Subprocess {
  /// Runs `program` (looked up in `PATH`) with `arguments` and returns its standard output.
  /// Its standard error is discarded.
  ///
  /// - Throws: `BenchError` when it cannot start or exits with a non-zero status.
  static func output(_ program: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [program] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    do {
      try process.run()
    } catch {
      throw BenchError("cannot run \(program): \(error)")
    }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let command = ([program] + arguments).joined(separator: " ")
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      throw BenchError("'\(command)' failed with status \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self)
  }
}
