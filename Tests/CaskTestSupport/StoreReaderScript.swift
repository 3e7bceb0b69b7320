import Foundation

/// `scripts/read-store.py`, the reader written from Docs/FORMAT.md alone, run on a store
/// directory: the crash-state enumerator's second opinion on each state in its long mode.
public struct StoreReaderScript: Sendable {
  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("scripts/read-store.py").path

  /// The reader, when python3 with `cryptography` is there.
  public static let available: StoreReaderScript? = {
    guard let result = try? execute(["python3", "-c", "import cryptography.hazmat.primitives.ciphers"], password: nil),
      result.status == 0
    else { return nil }
    return StoreReaderScript()
  }()

  /// Reads the store at `path` with the first of `passwords` it accepts.
  ///
  /// - Returns: each key's bytes and value, or the reader's last complaint (one line).
  public func read(_ path: String, passwords: [String]) -> Result<[Data: Data], ReaderFailure> {
    var complaint = "no password given"
    for password in passwords {
      guard let result = try? Self.execute(["python3", Self.script, path], password: password) else {
        return .failure(ReaderFailure(message: "python3 could not be run"))
      }
      guard result.status == 0 else {
        complaint = "exit \(result.status): \(result.stderr.split(separator: "\n").last ?? "")"
        continue
      }
      var entries: [Data: Data] = [:]
      for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n") {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String],
          let key = object["key"], let value = object["value"].flatMap({ Data(base64Encoded: $0) })
        else { return .failure(ReaderFailure(message: "an output line does not parse")) }
        entries[Data(key.utf8)] = value
      }
      return .success(entries)
    }
    return .failure(ReaderFailure(message: complaint))
  }

  /// Why the reader did not read a store.
  public struct ReaderFailure: Error, Sendable {
    public var message: String
  }

  static func execute(_ arguments: [String], password: String?) throws -> (status: Int32, stdout: Data, stderr: String)
  {
    try execute(arguments, environment: ["CASK_PASSWORD": password])
  }

  /// Runs `arguments` through `/usr/bin/env` with this process's environment changed by
  /// `environment` (a `nil` value removes the variable), its output collected in files.
  public static func execute(_ arguments: [String], environment changes: [String: String?]) throws -> (
    status: Int32, stdout: Data, stderr: String
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    for (name, value) in changes { environment[name] = value }
    process.environment = environment
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("read-store-\(UUID().uuidString)").path
    let outPath = scratch + ".out"
    let errPath = scratch + ".err"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    defer {
      try? FileManager.default.removeItem(atPath: outPath)
      try? FileManager.default.removeItem(atPath: errPath)
    }
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    process.standardOutput = out
    process.standardError = err
    try process.run()
    process.waitUntilExit()
    try? out.close()
    try? err.close()
    return (
      process.terminationStatus, try Data(contentsOf: URL(fileURLWithPath: outPath)),
      String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self)
    )
  }
}
