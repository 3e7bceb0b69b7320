import Foundation

/// Runs other programs (openssl, git, the `peer-*` executables) and captures what they print.
enum Subprocess {
  /// Runs `program` (from `PATH`, or at `executable`) and returns its standard output; its
  /// standard error is discarded or passed through; `input` (a short script) is written whole.
  static func output(
    _ program: String, _ arguments: [String], executable: URL? = nil, passingErrors: Bool = false,
    environment: [String: String]? = nil, input: String? = nil
  ) throws -> String {
    let process = Process()
    process.executableURL = executable ?? URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = executable == nil ? [program] + arguments : arguments
    if let environment { process.environment = environment }
    let pipe = Pipe()
    let inputPipe = Pipe()
    process.standardOutput = pipe
    process.standardError = passingErrors ? FileHandle.standardError : FileHandle.nullDevice
    process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
    do {
      try process.run()
      if let input {
        inputPipe.fileHandleForWriting.write(Data(input.utf8))
        try inputPipe.fileHandleForWriting.close()
      }
    } catch {
      throw BenchError("cannot run \(program): \(error)")
    }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let command = ([program] + arguments).joined(separator: " ")
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      let how = process.terminationReason == .exit ? "failed with status" : "was killed by signal"
      throw BenchError("'\(command)' \(how) \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self)
  }
}
