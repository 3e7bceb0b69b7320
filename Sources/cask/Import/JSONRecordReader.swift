import CipherCask
import Foundation

/// One object of an import: its bytes as they appear in the input, and the line it starts on.
struct JSONRecord {
  var line: Int
  var bytes: Data
}

/// Splits import input into JSON objects without reading it all into memory. The input is
/// either one JSON array (its first non-blank character is `[`) or JSON Lines (one object
/// per line; blank lines are skipped).
///
/// An array is split at its top-level commas by tracking strings and nesting, so each object
/// is parsed on its own and errors point at the line the object starts on. Whether an object
/// is valid JSON is for the caller to find out when it parses it.
final class JSONRecordReader {
  enum Format {
    case array
    case lines
  }

  private let readChunk: (Int) throws -> Data
  private var buffer = Data()
  private var position = 0
  private var atEnd = false
  private(set) var format: Format?
  private var arrayState = ArrayState.first
  /// The line of the next byte, counting from 1.
  private(set) var line = 1
  /// Bytes consumed so far, for a progress bar.
  private(set) var bytesConsumed: UInt64 = 0

  private enum ArrayState {
    case first
    case afterElement
    case finished
  }

  /// - Parameter readChunk: returns up to the given number of bytes; empty at the end.
  init(readChunk: @escaping (Int) throws -> Data) {
    self.readChunk = readChunk
  }

  /// The next object, or `nil` at the end of the input.
  ///
  /// - Throws: `CollectionError.invalidImport` with the line for input that is neither an array of
  ///   objects nor JSON Lines; the errors of `readChunk`.
  func next() throws -> JSONRecord? {
    if format == nil {
      try skipByteOrderMark()
      try skipWhitespace()
      guard let first = try peek() else { return nil }
      if first == UInt8(ascii: "[") {
        format = .array
        _ = try take()
      } else {
        format = .lines
      }
    }
    return format == .array ? try nextElement() : try nextLine()
  }

  // MARK: JSON Lines

  private func nextLine() throws -> JSONRecord? {
    while true {
      let start = line
      var bytes = Data()
      var sawByte = false
      while let byte = try take() {
        sawByte = true
        if byte == UInt8(ascii: "\n") { break }
        bytes.append(byte)
      }
      guard sawByte else { return nil }
      let trimmed = Self.trimmed(bytes)
      if !trimmed.isEmpty { return JSONRecord(line: start, bytes: trimmed) }
    }
  }

  // MARK: One JSON array

  private func nextElement() throws -> JSONRecord? {
    try skipWhitespace()
    switch arrayState {
    case .finished:
      return nil
    case .first:
      if try peek() == UInt8(ascii: "]") {
        _ = try take()
        return try finishArray()
      }
    case .afterElement:
      switch try take() {
      case UInt8(ascii: ","):
        try skipWhitespace()
      case UInt8(ascii: "]"):
        return try finishArray()
      case nil:
        throw invalid("the array is not closed")
      default:
        throw invalid("expected ',' or ']' after an object of the array")
      }
    }
    guard let first = try peek() else { throw invalid("the array is not closed") }
    guard first == UInt8(ascii: "{") else { throw invalid("expected a JSON object in the array") }
    let start = line
    let bytes = try takeObject()
    arrayState = .afterElement
    return JSONRecord(line: start, bytes: bytes)
  }

  private func finishArray() throws -> JSONRecord? {
    arrayState = .finished
    try skipWhitespace()
    guard try peek() == nil else { throw invalid("unexpected text after the array") }
    return nil
  }

  /// The bytes from a `{` to its matching `}`.
  private func takeObject() throws -> Data {
    var bytes = Data()
    var depth = 0
    var inString = false
    var escaped = false
    while let byte = try take() {
      bytes.append(byte)
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        depth -= 1
        if depth == 0 { return bytes }
      default: break
      }
    }
    throw invalid("the input ends inside an object")
  }

  // MARK: Bytes

  private func peek() throws -> UInt8? {
    if position == buffer.count {
      guard try fill() else { return nil }
    }
    return buffer[buffer.startIndex + position]
  }

  private func take() throws -> UInt8? {
    guard let byte = try peek() else { return nil }
    position += 1
    bytesConsumed += 1
    if byte == UInt8(ascii: "\n") { line += 1 }
    return byte
  }

  private func fill() throws -> Bool {
    guard !atEnd else { return false }
    let chunk = try readChunk(1 << 16)
    if chunk.isEmpty {
      atEnd = true
      return false
    }
    buffer = chunk
    position = 0
    return true
  }

  private func skipWhitespace() throws {
    while let byte = try peek(), Self.isWhitespace(byte) { _ = try take() }
  }

  private func skipByteOrderMark() throws {
    guard try peek() == 0xEF, buffer.count - position >= 3,
      buffer[buffer.startIndex + position + 1] == 0xBB, buffer[buffer.startIndex + position + 2] == 0xBF
    else { return }
    for _ in 0..<3 { _ = try take() }
  }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  private static func trimmed(_ bytes: Data) -> Data {
    guard let first = bytes.firstIndex(where: { !isWhitespace($0) }),
      let last = bytes.lastIndex(where: { !isWhitespace($0) })
    else { return Data() }
    return Data(bytes[first...last])
  }

  private func invalid(_ reason: String) -> CollectionError {
    CollectionError.invalidImport(reason: reason, line: line)
  }
}
