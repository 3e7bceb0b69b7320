import Foundation

/// Writes a subcommand's figures as JSON (`ResultsDestination` writes the results files through it).
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
}
