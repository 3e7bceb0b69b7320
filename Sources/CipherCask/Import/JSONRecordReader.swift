import Foundation

/// One object of an import: its bytes as they appear in the input, and where it is.
package struct JSONRecord: Sendable {
  /// The line the object starts on, counting from 1.
  package var line: Int
  /// The object's place among the input's objects, counting from 1: its array position, or
  /// its count among the non-blank lines of JSON Lines.
  package var position: Int
  /// The offset of the object's first byte in the input (a byte order mark counts).
  package var offset: UInt64
  package var bytes: Data

  package init(line: Int, bytes: Data, position: Int = 1, offset: UInt64 = 0) {
    self.line = line
    self.bytes = bytes
    self.position = position
    self.offset = offset
  }
}

/// Splits import input into JSON objects in bounded memory: it holds one chunk of input and
/// the object being cut out, never the whole input. The input is either one JSON array (its
/// first non-blank character is `[`) or JSON Lines (one object per line; blank lines are
/// skipped, a line may end in CR LF). A UTF-8 byte order mark at the start is skipped.
///
/// An array is split at its top-level commas by tracking strings and nesting, so each object
/// is parsed on its own and errors point at the line the object starts on. Whether an object
/// is valid JSON is for the caller to find out when it parses it.
package final class JSONRecordReader {
  package enum Format: Sendable {
    case array
    case lines
  }

  /// The longest object (or JSON line) read by default: 64 MiB. Prevents: a file with no line
  /// break, or an array element that never closes, being read into memory whole.
  package static let defaultMaximumObjectLength = 64 << 20

  private static let chunkSize = 1 << 16

  private let readChunk: (Int) throws -> Data
  private let maximumObjectLength: Int
  private var buffer: [UInt8] = []
  private var index = 0
  private var atEnd = false
  package private(set) var format: Format?
  private var arrayState = ArrayState.first
  private var objects = 0
  /// The line of the next byte, counting from 1.
  package private(set) var line = 1
  /// Bytes consumed so far, for progress.
  package private(set) var bytesConsumed: UInt64 = 0
  /// Whether bytes read from the input wait in the buffer: if not, the next object needs a
  /// read, which may wait (on a pipe).
  package var hasBufferedInput: Bool { index < buffer.count }

  private enum ArrayState {
    case first
    case afterElement
    case finished
  }

  /// - Parameters:
  ///   - maximumObjectLength: the longest object (or line) accepted, in bytes.
  ///   - readChunk: returns up to the given number of bytes; empty at the end.
  package init(
    maximumObjectLength: Int = JSONRecordReader.defaultMaximumObjectLength,
    readChunk: @escaping (Int) throws -> Data
  ) {
    self.maximumObjectLength = max(1, maximumObjectLength)
    self.readChunk = readChunk
  }

  /// The next object, or `nil` at the end of the input.
  ///
  /// - Throws: `CollectionError.invalidImport` with the line for input that is neither an
  ///   array of objects nor JSON Lines, or an object longer than the maximum; the errors of
  ///   `readChunk`.
  package func next() throws -> JSONRecord? {
    if format == nil {
      try skipByteOrderMark()
      try skipWhitespace()
      guard let first = try peek() else { return nil }
      if first == UInt8(ascii: "[") {
        format = .array
        take()
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
      let offset = bytesConsumed
      var bytes = Data()
      var sawByte = false
      while try index < buffer.count || fill() {
        sawByte = true
        let newline = buffer[index...].firstIndex(of: UInt8(ascii: "\n"))
        let end = newline ?? buffer.count
        guard bytes.count + (end - index) <= maximumObjectLength else { throw tooLong(at: start) }
        buffer.withUnsafeBufferPointer { bytes.append(UnsafeBufferPointer(rebasing: $0[index..<end])) }
        bytesConsumed += UInt64(end - index)
        index = end
        if newline != nil {
          take()
          break
        }
      }
      guard sawByte else { return nil }
      guard let first = bytes.firstIndex(where: { !Self.isWhitespace($0) }),
        let last = bytes.lastIndex(where: { !Self.isWhitespace($0) })
      else { continue }
      objects += 1
      let trimmed =
        first == bytes.startIndex && last == bytes.index(before: bytes.endIndex) ? bytes : Data(bytes[first...last])
      return JSONRecord(
        line: start, bytes: trimmed, position: objects, offset: offset + UInt64(first - bytes.startIndex))
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
        take()
        return try finishArray()
      }
    case .afterElement:
      switch try peek() {
      case UInt8(ascii: ","):
        take()
        try skipWhitespace()
      case UInt8(ascii: "]"):
        take()
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
    let offset = bytesConsumed
    let bytes = try takeObject(startingOn: start)
    arrayState = .afterElement
    objects += 1
    return JSONRecord(line: start, bytes: bytes, position: objects, offset: offset)
  }

  private func finishArray() throws -> JSONRecord? {
    arrayState = .finished
    try skipWhitespace()
    guard try peek() == nil else { throw invalid("unexpected text after the array") }
    return nil
  }

  /// The bytes from a `{` to its matching `}`.
  private func takeObject(startingOn start: Int) throws -> Data {
    var bytes = Data()
    var depth = 0
    var inString = false
    var escaped = false
    while try index < buffer.count || fill() {
      let from = index
      var closed = false
      var lines = 0
      var position = index
      // One pass over the chunk; the state carries over to the next chunk.
      scan: while position < buffer.count {
        let byte = buffer[position]
        position += 1
        if byte == UInt8(ascii: "\n") { lines += 1 }
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
          if depth == 0 {
            closed = true
            break scan
          }
        default: break
        }
      }
      guard bytes.count + (position - from) <= maximumObjectLength else { throw tooLong(at: start) }
      buffer.withUnsafeBufferPointer { bytes.append(UnsafeBufferPointer(rebasing: $0[from..<position])) }
      bytesConsumed += UInt64(position - from)
      line += lines
      index = position
      if closed { return bytes }
    }
    throw invalid("the input ends inside an object")
  }

  // MARK: Bytes

  private func peek() throws -> UInt8? {
    guard try index < buffer.count || fill() else { return nil }
    return buffer[index]
  }

  /// Consumes the byte `peek()` returned.
  private func take() {
    if buffer[index] == UInt8(ascii: "\n") { line += 1 }
    index += 1
    bytesConsumed += 1
  }

  private func fill() throws -> Bool {
    guard !atEnd else { return false }
    let chunk = try readChunk(Self.chunkSize)
    guard !chunk.isEmpty else {
      atEnd = true
      return false
    }
    buffer = [UInt8](chunk)
    index = 0
    return true
  }

  private func skipWhitespace() throws {
    while let byte = try peek(), Self.isWhitespace(byte) { take() }
  }

  /// Prevents: a byte order mark split over two reads (a pipe may deliver one byte at a
  /// time) being taken for the start of the data.
  private func skipByteOrderMark() throws {
    while buffer.count - index < 3, !atEnd {
      let chunk = try readChunk(Self.chunkSize)
      if chunk.isEmpty {
        atEnd = true
      } else {
        buffer = Array(buffer[index...]) + [UInt8](chunk)
        index = 0
      }
    }
    guard buffer.count - index >= 3, buffer[index] == 0xEF, buffer[index + 1] == 0xBB, buffer[index + 2] == 0xBF
    else { return }
    for _ in 0..<3 { take() }
  }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
  }

  private func invalid(_ reason: String) -> CollectionError {
    CollectionError.invalidImport(reason: reason, line: line)
  }

  private func tooLong(at start: Int) -> CollectionError {
    CollectionError.invalidImport(
      reason: "an object is longer than \(maximumObjectLength) bytes, the most an import reads as one object",
      line: start)
  }
}
