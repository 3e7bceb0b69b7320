import Foundation

/// Writes a subcommand's figures as JSON (`ResultsDestination` writes the results files through it).
enum JSONReport {
  /// `report` with sorted keys, pretty-printed, and a final newline.
  ///
  /// - Throws: `BenchError` when it cannot be encoded.
  static func encode<Report: Encodable>(_ report: Report) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    do {
      return try encoder.encode(report) + Data("\n".utf8)
    } catch {
      throw BenchError("cannot encode a results file: \(error.localizedDescription)")
    }
  }

  /// Writes `data` to `path` atomically.
  ///
  /// - Throws: `BenchError` when the file cannot be written.
  static func write(_ data: Data, to path: String) throws {
    do {
      try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw BenchError("cannot write the JSON report to '\(path)': \(error.localizedDescription)")
    }
  }
}
