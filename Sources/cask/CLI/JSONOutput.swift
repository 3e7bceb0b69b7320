import Foundation

/// JSON on standard output, for `--json`.
enum JSONOutput {
  static func write<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var data = try encoder.encode(value)
    data.append(UInt8(ascii: "\n"))
    StandardStream.output.write(data)
  }
}
