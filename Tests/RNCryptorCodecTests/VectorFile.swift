import Foundation

/// One record of an official RNCryptor vector file: `name: value` lines, blank-line separated.
struct VectorRecord {
  var fields: [String: String]

  func text(_ name: String) -> String? { fields[name] }

  /// Hex field with all whitespace stripped, decoded.
  func hex(_ name: String) throws -> Data {
    guard let raw = fields[name] else { throw VectorError.missingField(name) }
    let digits = raw.filter { !$0.isWhitespace }
    guard digits.count % 2 == 0 else { throw VectorError.badHex(name) }
    var data = Data(capacity: digits.count / 2)
    var index = digits.startIndex
    while index < digits.endIndex {
      let next = digits.index(index, offsetBy: 2)
      guard let byte = UInt8(digits[index..<next], radix: 16) else { throw VectorError.badHex(name) }
      data.append(byte)
      index = next
    }
    return data
  }
}

enum VectorError: Error {
  case missingFile(String)
  case missingField(String)
  case badHex(String)
}

/// Parses a vector file from the test bundle exactly as the upstream files are written.
func loadVectors(_ name: String) throws -> [VectorRecord] {
  guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "vectors") else {
    throw VectorError.missingFile(name)
  }
  let text = try String(contentsOf: url, encoding: .utf8)
  var records: [VectorRecord] = []
  var current: [String: String] = [:]
  for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    if trimmed.hasPrefix("#") { continue }
    if trimmed.isEmpty {
      if !current.isEmpty { records.append(VectorRecord(fields: current)) }
      current = [:]
      continue
    }
    guard let colon = line.firstIndex(of: ":") else { continue }
    let key = line[..<colon].trimmingCharacters(in: .whitespaces)
    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    current[key] = value
  }
  if !current.isEmpty { records.append(VectorRecord(fields: current)) }
  return records
}
