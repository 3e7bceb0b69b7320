import Foundation

/// Where the value of a top-level member sits in the bytes of a JSON object, so that it can be
/// kept byte for byte. The bytes must already be known to be valid JSON.
enum MemberSpan {
  /// The byte range of the value of the last top-level member named `name`, or `nil`.
  ///
  /// - Complexity: O(*n*) for *n* bytes.
  static func find(_ name: String, in bytes: Data) -> Range<Data.Index>? {
    var scanner = Scanner(bytes: bytes, index: bytes.startIndex)
    scanner.skipWhitespace()
    guard scanner.take(UInt8(ascii: "{")) else { return nil }
    var found: Range<Data.Index>?
    while true {
      scanner.skipWhitespace()
      guard let keyRange = scanner.skipString() else { return found }
      scanner.skipWhitespace()
      guard scanner.take(UInt8(ascii: ":")) else { return found }
      scanner.skipWhitespace()
      let start = scanner.index
      scanner.skipValue()
      if key(bytes[keyRange]) == name { found = start..<scanner.index }
      scanner.skipWhitespace()
      guard scanner.take(UInt8(ascii: ",")) else { return found }
    }
  }

  /// A JSON string literal's text.
  private static func key(_ literal: Data) -> String? {
    if let text = plainString(literal) { return text }
    return try? JSONDecoder().decode(String.self, from: literal)
  }

  private struct Scanner {
    let bytes: Data
    var index: Data.Index

    var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    mutating func take(_ byte: UInt8) -> Bool {
      guard current == byte else { return false }
      index += 1
      return true
    }

    mutating func skipWhitespace() {
      while let byte = current, PulledPage.isWhitespace(byte) { index += 1 }
    }

    /// Skips a string literal; returns its range, quotes included.
    mutating func skipString() -> Range<Data.Index>? {
      let start = index
      guard take(UInt8(ascii: "\"")) else { return nil }
      while let byte = current {
        index += 1
        if byte == UInt8(ascii: "\\") {
          index = min(index + 1, bytes.endIndex)
        } else if byte == UInt8(ascii: "\"") {
          return start..<index
        }
      }
      return nil
    }

    /// Skips one value: a string, an object or array (to its matching end), or a scalar.
    mutating func skipValue() {
      switch current {
      case UInt8(ascii: "\"")?:
        _ = skipString()
      case UInt8(ascii: "{")?, UInt8(ascii: "[")?:
        var depth = 0
        while let byte = current {
          if byte == UInt8(ascii: "\"") {
            _ = skipString()
            continue
          }
          index += 1
          if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") { depth += 1 }
          if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
            depth -= 1
            if depth == 0 { return }
          }
        }
      default:
        while let byte = current, byte != UInt8(ascii: ","), byte != UInt8(ascii: "}"), !PulledPage.isWhitespace(byte) {
          index += 1
        }
      }
    }
  }
}

extension MemberSpan {
  /// The text of a string literal without escapes, read directly (a `JSONDecoder` per key
  /// cost more than the rest of an import's object); `nil` for one with an escape or bytes
  /// that are not UTF-8, which `JSONDecoder` then reads or refuses.
  static func plainString(_ literal: Data) -> String? {
    guard literal.count >= 2, literal.first == UInt8(ascii: "\""), literal.last == UInt8(ascii: "\"") else {
      return nil
    }
    let inner = literal.dropFirst().dropLast()
    guard !inner.contains(UInt8(ascii: "\\")), !inner.contains(where: { $0 < 0x20 }) else { return nil }
    return String(validating: inner, as: UTF8.self)
  }
}
