import Foundation

/// Writes a subcommand's figures as JSON (`--json FILE`).
enum JSONReport {
  /// Encodes `report` with sorted keys, pretty-printed, and writes it to `path` atomically.
  ///
  /// - Throws: `BenchError` when the file cannot be written.
  static func write<Report: Encodable>(_ report: Report, to path: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    do {
      var data = try encoder.encode(report)
      data.append(UInt8(ascii: "\n"))
      try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw BenchError("cannot write the JSON report to '\(path)': \(error.localizedDescription)")
    }
  }

  /// Fails early, before a long run, when `path`'s folder cannot be written.
  ///
  /// - Throws: `BenchError` naming the folder.
  static func checkWritable(_ path: String) throws {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    guard FileManager.default.isWritableFile(atPath: folder) else {
      throw BenchError("cannot write the JSON report: '\(folder)' is not a writable folder")
    }
  }
}
