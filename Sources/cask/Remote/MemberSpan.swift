import Foundation

/// Where the value of a top-level member sits in the bytes of a JSON object, so that it can be
/// kept byte for byte. The bytes must already be known to be valid JSON.
enum MemberSpan {
  /// The byte range of the value of the last top-level member named `name`, or `nil`.
  ///
  /// - Complexity: O(*n*) for *n* bytes, scanned in place (a `Data` read byte by byte through
  ///   its subscript and iterator cost more than the rest of `cask import`'s work on an object).
  static func find(_ name: String, in bytes: Data) -> Range<Data.Index>? {
    let found = bytes.withUnsafeBytes { raw -> Range<Int>? in
      var scanner = Scanner(bytes: raw, index: 0)
      scanner.skipWhitespace()
      guard scanner.take(UInt8(ascii: "{")) else { return nil }
      var found: Range<Int>?
      while true {
        scanner.skipWhitespace()
        guard let keyRange = scanner.skipString() else { return found }
        scanner.skipWhitespace()
        guard scanner.take(UInt8(ascii: ":")) else { return found }
        scanner.skipWhitespace()
        let start = scanner.index
        scanner.skipValue()
        if isKey(UnsafeRawBufferPointer(rebasing: raw[keyRange]), named: name) { found = start..<scanner.index }
        scanner.skipWhitespace()
        guard scanner.take(UInt8(ascii: ",")) else { return found }
      }
    }
    return found.map { (bytes.startIndex + $0.lowerBound)..<(bytes.startIndex + $0.upperBound) }
  }

  /// Whether the string literal `literal` (quotes included) is `name`: its bytes compared
  /// directly when it has no escape, else its text as `JSONDecoder` reads it.
  private static func isKey(_ literal: UnsafeRawBufferPointer, named name: String) -> Bool {
    let inner = UnsafeRawBufferPointer(rebasing: literal.dropFirst().dropLast())
    if !inner.contains(UInt8(ascii: "\\")) {
      var name = name
      if name.withUTF8({ $0.elementsEqual(inner) }) { return true }
      // Prevents: a key spelled with other bytes than `name` but canonically equivalent to it
      // (é as one scalar or as two) going unmatched, where String comparison matches it.
      guard inner.contains(where: { $0 >= 0x80 }) else { return false }
      return String(validating: inner, as: UTF8.self) == name
    }
    return (try? JSONDecoder().decode(String.self, from: Data(literal))) == name
  }

  private struct Scanner {
    let bytes: UnsafeRawBufferPointer
    var index: Int

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func take(_ byte: UInt8) -> Bool {
      guard current == byte else { return false }
      index += 1
      return true
    }

    mutating func skipWhitespace() {
      while let byte = current, PulledPage.isWhitespace(byte) { index += 1 }
    }

    /// Skips a string literal; returns its range, quotes included.
    mutating func skipString() -> Range<Int>? {
      let start = index
      guard take(UInt8(ascii: "\"")) else { return nil }
      while let byte = current {
        index += 1
        if byte == UInt8(ascii: "\\") {
          index = min(index + 1, bytes.count)
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
